import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../../../support/app.ts';
import { DIALECTS } from '../../../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';

describe.each(DIALECTS)('lookup by lot on %s', (dialect) => {
  let t: TestApp;
  const vin = validVin('1FTFW1ET5DFC7777');
  const other = validVin('2T1BURHE0JC07777');

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.repos.lots.upsertBatch([
      makeLot({ vin, auction: 'copart', lot_id: 51000001, sale_date: '2023-03-01T17:00:00.000Z', price: 5100 }),
      makeLot({ vin, auction: 'iaai', lot_id: 36000002, sale_date: '2024-06-12T15:30:00.000Z', price: 7300 }),
      makeLot({ vin: other, auction: 'iaai', lot_id: 51000001, sale_date: '2022-01-05T15:30:00.000Z' }),
    ]);
  });
  afterAll(async () => t?.close());

  const lookup = (customer: Pick<Customer, 'token'>, auction: string, lotId: string | number, headers: Record<string, string> = {}) =>
    t.app.inject({ url: `/api/v1/lots/${auction}/${lotId}`, headers: { authorization: customer.token, ...headers } });
  const countSearches = (c: Customer) => t.repos.searches.countForAccount(c.accountId);

  it("answers 200 with the Report of the lot's vehicle: every lot of its VIN, as a VIN search does", async () => {
    const customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
    const res = await lookup(customer, 'copart', 51000001);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 'success', vin });
    expect(body.lots.map((lot: { auction: string; lot_id: number }) => `${lot.auction}/${lot.lot_id}`)).toEqual(['iaai/36000002', 'copart/51000001']);
    expect(body.report_url.startsWith(`${TEST_BASE_URL}/report/`)).toBe(true);

    const search = await t.app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } });
    const { report_url: _a, origin_timestamp: _b, ...fromSearch } = search.json();
    const { report_url: _c, origin_timestamp: _d, ...fromLot } = body;
    expect(fromLot).toEqual(fromSearch);

    // The same lot id at another auction is another vehicle.
    expect((await lookup(customer, 'iaai', 51000001)).json().vin).toBe(other);
    // Stored: the page opens, and the search record names the VIN.
    expect((await t.app.inject({ url: new URL(body.report_url).pathname })).statusCode).toBe(200);
    const records = await t.repos.searches.listForAccount(customer.accountId);
    expect(records.find((r) => body.report_url.endsWith(r.report_id ?? '-'))).toMatchObject({ vin, outcome: 'found', token_id: customer.tokenId });
    expect(await countSearches(customer)).toBe(3);
  });

  it('takes the auction in any case and the lot id with leading zeros', async () => {
    const customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
    const res = await lookup(customer, 'IAAI', '0036000002');
    expect(res.statusCode).toBe(200);
    expect(res.json().vin).toBe(vin);
  });

  it('carries the limit headers and counts, on 200 and 404', async () => {
    const customer = await createCustomer(t.repos, { quota: 3, rate: 50 });
    const ok = await lookup(customer, 'copart', 51000001);
    expect(ok.headers['ratelimit-policy']).toMatch(/^"second";q=50;w=1, "month";q=3;w=\d+$/);
    expect(ok.headers.ratelimit).toMatch(/^"second";r=49;t=1, "month";r=2;t=\d+$/);
    expect(ok.headers['x-ratelimit-limit']).toBe('50');
    expect(ok.headers['x-ratelimit-remaining']).toBe('49');
    const missing = await lookup(customer, 'copart', 59999999);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ code: 'no_records', message: 'No lot 59999999 is known at copart.' });
    expect(missing.headers.ratelimit).toMatch(/"month";r=1;/);
    expect(await countSearches(customer)).toBe(2);
    const records = await t.repos.searches.listForAccount(customer.accountId);
    expect(records.find((r) => r.outcome === 'not_found')).toMatchObject({ vin: 'copart/59999999', report_id: null });
  });

  describe('401 and 402 come first', () => {
    it('401 for a missing or unknown token, before the auction is checked', async () => {
      for (const headers of [{}, { authorization: 'vh_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }]) {
        const res = await t.app.inject({ url: '/api/v1/lots/nowhere/abc', headers });
        expect(res.statusCode).toBe(401);
        expect(res.body).toBe('{"message":"Unauthenticated."}');
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="vinhistory"/);
      }
    });

    it('402 for an account without a plan in force, before the auction is checked', async () => {
      const customer = await createCustomer(t.repos);
      await t.repos.subscriptions.cancelActive(customer.accountId);
      const res = await lookup(customer, 'nowhere', 'abc');
      expect(res.statusCode).toBe(402);
      expect(await countSearches(customer)).toBe(0);
    });
  });

  describe('422', () => {
    it('an unknown or malformed auction word: errors.auction lists the known auctions, not counted', async () => {
      const customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
      for (const auction of ['ebay', 'co%20part', 'a'.repeat(41), '_x']) {
        const res = await lookup(customer, auction, 51000001);
        expect(res.statusCode, auction).toBe(422);
        const body = res.json();
        expect(Object.keys(body.errors)).toEqual(['auction']);
        expect(body.errors.auction[0]).toContain('known auctions: copart, iaai');
      }
      expect(await countSearches(customer)).toBe(0);
    });

    it('a lot id that is not a positive whole number of at most 10 digits: errors.lot_id, not counted', async () => {
      const customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
      for (const lotId of ['abc', '0', '-5', '1.5', '12345678901', '2147483648', '1e6']) {
        const res = await lookup(customer, 'copart', lotId);
        expect(res.statusCode, lotId).toBe(422);
        expect(Object.keys(res.json().errors)).toEqual(['lot_id']);
      }
      expect(await countSearches(customer)).toBe(0);
    });

    it('checks the auction before the lot id, and both before the rate', async () => {
      const customer = await createCustomer(t.repos, { quota: 100, rate: 1 });
      expect(Object.keys((await lookup(customer, 'ebay', 'abc')).json().errors)).toEqual(['auction']);
      expect((await lookup(customer, 'copart', 51000001)).statusCode).toBe(200);
      expect((await lookup(customer, 'copart', 'abc')).statusCode).toBe(422);
      expect((await lookup(customer, 'copart', 51000001)).statusCode).toBe(429);
    });

    it('knows an auction from its first imported lot on', async () => {
      const customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
      expect((await lookup(customer, 'manheim', 1234)).statusCode).toBe(422);
      await t.repos.lots.upsertBatch([makeLot({ vin: other, auction: 'manheim', lot_id: 1234 })]);
      await new Promise((resolve) => setTimeout(resolve, 1050)); // an unknown word re-reads the list at most once a second
      const res = await lookup(customer, 'manheim', 1234);
      expect(res.statusCode).toBe(200);
      expect(res.json().vin).toBe(other);
    });
  });

  describe('429', () => {
    it('per-second rate: a burst of `rate` passes, the next is 429 with Retry-After and the limit headers, not counted', async () => {
      const customer = await createCustomer(t.repos, { quota: 100, rate: 2 });
      const responses = await Promise.all(Array.from({ length: 4 }, () => lookup(customer, 'copart', 51000001)));
      expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 200, 429, 429]);
      const limited = responses.find((r) => r.statusCode === 429)!;
      expect(limited.json().message).toMatch(/rate limit/i);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(limited.headers['x-ratelimit-remaining']).toBe('0');
      expect(await countSearches(customer)).toBe(2);
    });

    it('monthly quota: lookups and VIN searches share it', async () => {
      const customer = await createCustomer(t.repos, { quota: 2, rate: 100 });
      expect((await lookup(customer, 'copart', 51000001)).statusCode).toBe(200);
      expect((await t.app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token } })).statusCode).toBe(200);
      const res = await lookup(customer, 'copart', 51000001);
      expect(res.statusCode).toBe(429);
      expect(res.json().message).toMatch(/quota/i);
      expect(res.headers['retry-after']).toBeDefined();
      expect(await countSearches(customer)).toBe(2);
    });
  });

  describe('Idempotency-Key', () => {
    it('a repeat for the same lot within 24 hours returns the same report, counted once', async () => {
      const customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
      const first = await lookup(customer, 'copart', 51000001, { 'idempotency-key': 'lot-1' });
      const again = await lookup(customer, 'copart', 51000001, { 'idempotency-key': 'lot-1' });
      expect(again.statusCode).toBe(200);
      expect(again.json()).toEqual(first.json());
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(await countSearches(customer)).toBe(1);
    });

    it('replays a counted 404 for an unknown lot as a 404, counted once', async () => {
      const customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
      expect((await lookup(customer, 'iaai', 58888888, { 'idempotency-key': 'lot-404' })).statusCode).toBe(404);
      const again = await lookup(customer, 'iaai', 58888888, { 'idempotency-key': 'lot-404' });
      expect(again.statusCode).toBe(404);
      expect(again.json().message).toBe('No lot 58888888 is known at iaai.');
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await countSearches(customer)).toBe(1);
    });

    it('refuses the key for another lot, or for a VIN search, with 422 naming what it was used for', async () => {
      const customer = await createCustomer(t.repos, { quota: 100, rate: 100 });
      expect((await lookup(customer, 'copart', 51000001, { 'idempotency-key': 'k' })).statusCode).toBe(200);
      const otherLot = await lookup(customer, 'iaai', 36000002, { 'idempotency-key': 'k' });
      expect(otherLot.statusCode).toBe(422);
      expect(otherLot.json().errors['Idempotency-Key'][0]).toContain('lot copart/51000001');
      const byVin = await t.app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: customer.token, 'idempotency-key': 'k' } });
      expect(byVin.statusCode).toBe(422);
      const malformed = await lookup(customer, 'copart', 51000001, { 'idempotency-key': 'x'.repeat(256) });
      expect(malformed.statusCode).toBe(422);
      expect(Object.keys(malformed.json().errors)).toEqual(['Idempotency-Key']);
      expect(await countSearches(customer)).toBe(1);
    });
  });

  it('answers 405 with Allow for another method', async () => {
    const customer = await createCustomer(t.repos);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/lots/copart/51000001', headers: { authorization: customer.token } });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET');
  });
});

afterAll(expectDocumentedStatuses);
