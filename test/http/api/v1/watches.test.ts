import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../../src/app.ts';
import { MemoryRateLimiter } from '../../../../src/limits/rate/memory-rate-limiter.ts';
import { buildAppOn, testConfig } from '../../../support/app.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../../support/databases.ts';
import { createCustomer, validVin } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';

describe.each(DIALECTS)('watches (/api/v1/watches) on %s', (dialect) => {
  let database: TestDatabase;
  let app: App;
  let dataDir: string;
  // The clock the services read: the tests move it so that consecutive watches are stamped apart.
  let clock = 0;
  const now = () => new Date(clock);

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    dataDir = mkdtempSync(path.join(tmpdir(), 'vinhistory-watches-'));
    app = await buildAppOn({
      config: testConfig({ OUTBOUND_ALLOW_PRIVATE: 'true', DATA_DIR: dataDir }),
      db: database.db,
      rateLimiter: new MemoryRateLimiter(),
      now,
      overrides: { random: () => 0.5 },
    });
    await app.ready();
    // Ahead of the real time the subscriptions are stamped with, so that they are in force.
    clock = Date.now() + 60_000;
  });
  afterAll(async () => {
    await app?.close();
    await database?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
    expectDocumentedStatuses();
  });

  const api = (token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({ method, url, headers: { authorization: token }, ...(payload !== undefined ? { payload: payload as object } : {}) });

  describe('watches', () => {
    it('creates (201), answers the same VIN again (200), lists with cursor paging, deletes (204)', async () => {
      const customer = await createCustomer(database.repos);
      const vins = [validVin('1FTFW1ET5DFA0001'), validVin('1FTFW1ET5DFA0002'), validVin('1FTFW1ET5DFA0003')];
      const created = [];
      for (const vin of vins) {
        clock += 1;
        const res = await api(customer.token, "POST", "/api/v1/watches", { vin: ` ${vin.toLowerCase()} ` });
        expect(res.statusCode).toBe(201);
        expect(res.json()).toMatchObject({ id: expect.stringMatching(/^wch_/), vin, auction: null, lot_id: null });
        created.push(res.json());
      }
      const again = await api(customer.token, 'POST', '/api/v1/watches', { vin: vins[0] });
      expect(again.statusCode).toBe(200);
      expect(again.json().id).toBe(created[0].id);

      const first = await api(customer.token, 'GET', '/api/v1/watches?limit=2');
      expect(first.statusCode).toBe(200);
      expect(first.json().data.map((w: { vin: string }) => w.vin)).toEqual([vins[2], vins[1]]);
      const second = await api(customer.token, 'GET', `/api/v1/watches?limit=2&cursor=${first.json().next_cursor}`);
      expect(second.json()).toEqual({ data: [created[0]], next_cursor: null });
      expect((await api(customer.token, 'GET', '/api/v1/watches?cursor=nonsense')).statusCode).toBe(422);

      expect((await api(customer.token, 'DELETE', `/api/v1/watches/${created[1].id}`)).statusCode).toBe(204);
      expect((await api(customer.token, 'DELETE', `/api/v1/watches/${created[1].id}`)).statusCode).toBe(404);
      expect((await api(customer.token, 'GET', '/api/v1/watches')).json().data).toHaveLength(2);
    });

    it("keeps another account's watches invisible: not listed, 404 to delete", async () => {
      const owner = await createCustomer(database.repos);
      const other = await createCustomer(database.repos);
      const watch = (await api(owner.token, 'POST', '/api/v1/watches', { auction: 'iaai', lot_id: 424242 })).json();
      expect(watch).toMatchObject({ vin: null, auction: 'iaai', lot_id: 424242 });
      expect((await api(other.token, 'GET', '/api/v1/watches')).json().data).toEqual([]);
      expect((await api(other.token, 'DELETE', `/api/v1/watches/${watch.id}`)).statusCode).toBe(404);
      expect((await api(owner.token, 'GET', '/api/v1/watches')).json().data).toHaveLength(1);
    });

    it("holds the plan's limit (409), and no plan means no watches (409 saying to choose one)", async () => {
      await database.repos.plans.create({ code: `tiny-${dialect}`, name: 'Tiny', monthlyQuota: 10, ratePerSecond: 1, monthlyPriceCents: 0, watchLimit: 2 });
      const customer = await createCustomer(database.repos, { plan: `tiny-${dialect}` });
      expect((await api(customer.token, 'POST', '/api/v1/watches', { vin: validVin('2T1BURHE0JC00001') })).statusCode).toBe(201);
      expect((await api(customer.token, 'POST', '/api/v1/watches', { vin: validVin('2T1BURHE0JC00002') })).statusCode).toBe(201);
      const over = await api(customer.token, 'POST', '/api/v1/watches', { vin: validVin('2T1BURHE0JC00003') });
      expect(over.statusCode).toBe(409);
      expect(over.json().message).toMatch(/allows 2 watches/);
      // The same VIN again is not a new watch: still answered.
      expect((await api(customer.token, 'POST', '/api/v1/watches', { vin: validVin('2T1BURHE0JC00001') })).statusCode).toBe(200);

      const account = await database.repos.accounts.create(`noplan-${Math.random()}@example.com`);
      const { token } = await database.repos.tokens.create(account.id, 'test');
      const none = await api(token, 'POST', '/api/v1/watches', { vin: validVin('2T1BURHE0JC00004') });
      expect(none.statusCode).toBe(409);
      expect(none.json().message).toMatch(/no plan in force.*Choose a plan/);
      // Listing works without a plan: a lapsed customer can still see and remove what it holds.
      expect((await api(token, 'GET', '/api/v1/watches')).statusCode).toBe(200);
    });

    it('the public plans hold 100, 500 and 2,000 watches', async () => {
      const plans = await app.services.plans.list();
      expect(Object.fromEntries(plans.filter((p) => p.isPublic).map((p) => [p.code, p.watchLimit]))).toEqual({ standard: 100, professional: 500, vip: 2000 });
    });

    it('refuses bad input with the field (422) and a missing token (401)', async () => {
      const customer = await createCustomer(database.repos);
      const bad = await api(customer.token, 'POST', '/api/v1/watches', { vin: 'ABC' });
      expect(bad.statusCode).toBe(422);
      expect(bad.json().errors.vin).toBeDefined();
      expect((await api(customer.token, 'POST', '/api/v1/watches', { auction: 'copart' })).json().errors.lot_id).toBeDefined();
      expect((await api(customer.token, 'POST', '/api/v1/watches', {})).statusCode).toBe(422);
      expect((await api(customer.token, 'POST', '/api/v1/watches', { vin: validVin(), auction: 'copart', lot_id: 1 })).statusCode).toBe(422);
      expect((await app.inject({ method: 'GET', url: '/api/v1/watches' })).statusCode).toBe(401);
    });
  });
});
