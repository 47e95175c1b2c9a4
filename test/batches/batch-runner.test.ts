import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { batchShare } from '../../src/batches/pacing.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig } from '../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { createCustomer, makeLot, validVin } from '../support/fixtures.ts';

/**
 * The pacing of batches (contract: "run within the account's per-second rate in a way that always
 * leaves live searches at least half of it"), measured with the real clock: a batch on a 10/s plan
 * with live searches at 5/s beside it. SQLite only: the pacing is the limiter's, not the database's.
 */
describe('batch runner: pacing beside live searches', () => {
  let database: TestDatabase;
  let app: App;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    app = await buildAppOn({ config: testConfig(), db: database.db, rateLimiter: new MemoryRateLimiter(), overrides: { batchRunner: { pollMs: 20 } } });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await database?.destroy();
  });

  it('takes half the rate (at least 1) for batches', () => {
    expect([1, 2, 3, 5, 10, 11].map(batchShare)).toEqual([1, 1, 1, 2, 5, 5]);
  });

  it('leaves live searches at half the rate free of 429s while a batch runs, and keeps the batch to its half', async () => {
    const vin = validVin('1FTFW1ET5DFP0001');
    await database.repos.lots.upsertBatch([makeLot({ vin })]);
    const customer = await createCustomer(database.repos, { rate: 10 });
    const created = await app.inject({ method: 'POST', url: '/api/v1/batches', headers: { authorization: customer.token }, payload: { items: Array.from({ length: 60 }, () => ({ vin })) } });
    expect(created.statusCode).toBe(202);
    const { id } = created.json<{ id: string }>();

    app.services.batchRunner.start();
    const started = Date.now();
    const live: number[] = [];
    // Live searches at 5 a second for about 3 s, each sent 200 ms after the one before it was sent.
    for (let next = started; next < started + 3000; next += 200) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
      live.push((await app.inject({ method: 'GET', url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } })).statusCode);
    }
    const elapsed = (Date.now() - started) / 1000;
    await app.services.batchRunner.stop();

    expect(live.length).toBeGreaterThanOrEqual(14);
    expect(live.filter((status) => status !== 200)).toEqual([]);
    const batch = (await app.inject({ url: `/api/v1/batches/${id}`, headers: { authorization: customer.token } })).json<{ done: number; counts: Record<string, number> }>();
    // At most its half of the rate (5 a second, a whole window's worth at the start), and it ran.
    expect(batch.done).toBeGreaterThan(0);
    expect(batch.done).toBeLessThanOrEqual(5 * Math.ceil(elapsed) + 5);
    expect(batch.counts).toEqual({ 200: batch.done });
  });

  it("spreads a paced batch's searches over the window instead of taking its share in a burst", async () => {
    const vin = validVin('1FTFW1ET5DFP0002');
    await database.repos.lots.upsertBatch([makeLot({ vin })]);
    // A 10/s plan: the batch's share is 5 a second, one start every 200 ms.
    const customer = await createCustomer(database.repos, { rate: 10 });
    const created = await app.inject({ method: 'POST', url: '/api/v1/batches', headers: { authorization: customer.token }, payload: { items: Array.from({ length: 4 }, () => ({ vin })) } });
    const { id } = created.json<{ id: string }>();
    app.services.batchRunner.start();
    for (let done = 0; done < 4; await new Promise((resolve) => setTimeout(resolve, 50))) {
      done = (await app.inject({ url: `/api/v1/batches/${id}`, headers: { authorization: customer.token } })).json<{ done: number }>().done;
    }
    await app.services.batchRunner.stop();
    const finished = await database.db.kysely.selectFrom('batch_items').select('finished_at').where('batch_id', '=', id).orderBy('finished_at').execute();
    const times = finished.map((row) => Date.parse(row.finished_at!));
    expect(times).toHaveLength(4);
    // Taken in a burst, the first four would finish within a few milliseconds of each other.
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(150);
  });
  it('a stopped runner claims nothing when asked to run what is due, and leaves the batch to the next start', async () => {
    const vin = validVin('1FTFW1ET5DFP0003');
    await database.repos.lots.upsertBatch([makeLot({ vin })]);
    const customer = await createCustomer(database.repos, { rate: 100 });
    const created = await app.inject({ method: 'POST', url: '/api/v1/batches', headers: { authorization: customer.token }, payload: { items: [{ vin }] } });
    const { id } = created.json<{ id: string }>();
    const runner = app.services.batchRunner;
    runner.start();
    await runner.stop();
    // Before, this claimed the batch, gave it back unfinished (stopping) and claimed it again, for ever.
    expect(await runner.runDue()).toBe(0);
    runner.start();
    for (let status = ''; status !== 'done'; await new Promise((resolve) => setTimeout(resolve, 20))) {
      status = (await app.inject({ url: `/api/v1/batches/${id}`, headers: { authorization: customer.token } })).json<{ status: string }>().status;
    }
    await runner.stop();
  });
});
