import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.ts';
import { MemoryRateLimiter } from '../../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig } from '../../support/app.ts';
import { createTestDatabase, type TestDatabase } from '../../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../support/fixtures.ts';

/** Polls until `check` holds, for what a request's end does after its answer reached the client. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('requests in flight: the counted requests a pull gives way to', () => {
  let database: TestDatabase | undefined;
  let app: App | undefined;
  afterEach(async () => {
    await app?.close();
    await database?.destroy();
    app = undefined;
    database = undefined;
  });

  const vin = validVin('1FTFW1ET5DFC1234');

  /** The app with a hook that records the count while each request is handled, and one that can hold a search. */
  async function start(): Promise<{ app: App; seen: Map<string, number>; customer: Customer; hold: { until: Promise<void> | null } }> {
    database = await createTestDatabase('sqlite');
    app = await buildAppOn({ config: testConfig(), db: database.db, rateLimiter: new MemoryRateLimiter() });
    const seen = new Map<string, number>();
    const hold: { until: Promise<void> | null } = { until: null };
    const counted = app.services.requestsInFlight;
    app.addHook('preHandler', async (request) => {
      seen.set(`${request.method} ${request.url}`, counted.inFlight);
      if (hold.until) await hold.until;
    });
    await app.ready();
    await database.repos.lots.upsertBatch([makeLot({ vin })]);
    const customer = await createCustomer(database.repos);
    return { app, seen, customer, hold };
  }

  it('counts a search while it is answered and not after, and leaves the routes that are not counted alone', async () => {
    const { app, seen, customer } = await start();
    const counted = app.services.requestsInFlight;
    const begun = counted.begun;
    const search = await app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
    expect(search.statusCode).toBe(200);
    expect(seen.get(`GET /api/v1/search?vin=${vin}`)).toBe(1);
    await until(() => counted.inFlight === 0, 'the search to end');
    const usage = await app.inject({ url: '/api/v1/usage', headers: { authorization: customer.token } });
    expect(usage.statusCode).toBe(200);
    expect(seen.get('GET /api/v1/usage')).toBe(0);
    // The catalogue and a lot's lookup count too.
    await app.inject({ url: '/api/v1/lots?limit=1', headers: { authorization: customer.token } });
    expect(seen.get('GET /api/v1/lots?limit=1')).toBe(1);
    expect(counted.begun - begun).toBe(2);
    expect(counted.inFlight).toBe(0);
  });

  it('ends a request answered with an error: refused before the handler, or failing in it', async () => {
    const { app } = await start();
    const counted = app.services.requestsInFlight;
    const begun = counted.begun;
    expect((await app.inject({ url: `/api/v1/search?vin=${vin}` })).statusCode).toBe(401);
    expect((await app.inject({ url: '/api/v1/search?vin=NOT-A-VIN', headers: { authorization: 'Bearer nonsense' } })).statusCode).toBeGreaterThanOrEqual(400);
    await until(() => counted.inFlight === 0, 'the refused requests to end');
    expect(counted.begun - begun).toBe(2);
  });

  it('ends a request whose client went away before its answer, once', async () => {
    const { app, seen, customer, hold } = await start();
    const counted = app.services.requestsInFlight;
    let release!: () => void;
    hold.until = new Promise<void>((resolve) => (release = resolve));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const client = httpRequest({ host: '127.0.0.1', port, path: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
    client.on('error', () => undefined);
    client.end();
    await until(() => seen.has(`GET /api/v1/search?vin=${vin}`), 'the search to reach its handler');
    expect(counted.inFlight).toBe(1);
    client.destroy();
    await until(() => counted.inFlight === 0, 'the aborted search to end');
    // The held search goes on and answers into the closed connection: no second end.
    release();
    hold.until = null;
    const next = await app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
    expect(next.statusCode).toBe(200);
    expect(seen.get(`GET /api/v1/search?vin=${vin}`)).toBe(1);
    await until(() => counted.inFlight === 0, 'the next search to end');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(counted.inFlight).toBe(0);
  });
});
