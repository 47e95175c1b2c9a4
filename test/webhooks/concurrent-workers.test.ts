import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { createContainer, type Container } from '../../src/container.ts';
import { MemoryRateLimiter } from '../../src/limits/rate/memory-rate-limiter.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { testConfig } from '../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../support/databases.ts';
import { TEST_POSTGRES_URL } from '../support/env.ts';
import { createCustomer, makeLot, validVin } from '../support/fixtures.ts';
import { Receiver } from './receiver.ts';

/**
 * Three delivery workers, each with its own container and connection pool on one PostgreSQL
 * schema, as three instances would be: every event is delivered, none twice, and no event is
 * ever in flight at two workers at once.
 */
describe.runIf(TEST_POSTGRES_URL)('three delivery workers on one PostgreSQL', () => {
  let database: TestDatabase;
  let receiver: Receiver;
  const extraDbs: Db[] = [];
  const containers: Container[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    receiver = await new Receiver().start();
    receiver.delayMs = 20;
    const schema = (await database.db.kysely.selectNoFrom((eb) => eb.fn<string>('current_schema').as('s')).executeTakeFirstOrThrow()).s;
    for (let i = 0; i < 3; i++) {
      const db = i === 0 ? database.db : await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema, maxConnections: 4 });
      if (i > 0) extraDbs.push(db);
      containers.push(
        createContainer({
          config: testConfig({ OUTBOUND_ALLOW_PRIVATE: 'true' }),
          db,
          log: pino({ level: 'silent' }),
          rateLimiter: new MemoryRateLimiter(),
          overrides: { webhookWorker: { pollMs: 20, concurrency: 8 } },
        }),
      );
    }
  });
  afterAll(async () => {
    for (const container of containers) await container.close();
    for (const db of extraDbs) await db.close();
    await receiver?.stop();
    await database?.destroy();
  });

  it('deliver every event exactly once, never the same one at the same time', async () => {
    const customer = await createCustomer(database.repos);
    const [first] = containers;
    const set = await first!.webhooks.setEndpoint(customer.accountId, receiver.url);
    expect(set.kind).toBe('created');
    const vins = Array.from({ length: 20 }, (_, i) => validVin(`1HGCM826${String(i).padStart(2, '0')}A00710`));
    for (const vin of vins) expect((await first!.watches.create(customer.accountId, { vin })).kind).toBe('created');
    // 20 VINs x 6 lots: 120 events, in batches of 30.
    const lots = vins.flatMap((vin, v) => Array.from({ length: 6 }, (_, i) => makeLot({ vin, lot_id: 80_000_000 + v * 10 + i })));
    for (let i = 0; i < lots.length; i += 30) await database.repos.lots.upsertBatch(lots.slice(i, i + 30));

    for (const container of containers) container.deliveryWorker.start();
    const deadline = Date.now() + 20_000;
    while (receiver.received.length < lots.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    await Promise.all(containers.map((c) => c.deliveryWorker.stop()));

    const ids = receiver.received.map((r) => String(r.headers['vinhistory-event-id']));
    expect(new Set(ids).size).toBe(lots.length);
    expect(ids).toHaveLength(lots.length);
    expect(receiver.maxConcurrentPerEvent).toBe(1);
    expect((await database.repos.webhookOutbox.stats()).pending).toBe(0);
  });
});
