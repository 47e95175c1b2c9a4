import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../support/app.ts';
import { DIALECTS } from '../../../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';

describe.each(DIALECTS)("a lot's history on %s", (dialect) => {
  let t: TestApp;
  const vin = validVin('1FTFW1ET5DFC2929');
  const lot = makeLot({ vin, auction: 'copart', lot_id: 52900001, price: null, odometer: 81000, document: 'SALVAGE CERTIFICATE' });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.repos.lots.upsertBatch([lot], { now: new Date('2026-11-03T10:00:00.000Z'), source: 'copart-2026-11-03.csv' });
    await t.repos.lots.upsertBatch([{ ...lot, price: 4000 }], { now: new Date('2026-11-10T10:00:00.000Z'), source: 'copart-feed' });
    // Nothing new: no version, but a sighting.
    await t.repos.lots.upsertBatch([{ ...lot, price: null }], { now: new Date('2026-11-17T10:00:00.000Z'), source: 'copart-feed' });
    await t.repos.lots.upsertBatch([{ ...lot, price: 3500, document: 'CLEAN TITLE' }], { now: new Date('2026-11-24T10:00:00.000Z'), source: 'copart-feed' });
  });
  afterAll(async () => t?.close());

  const history = (customer: Pick<Customer, 'token'>, auction: string, lotId: string | number, headers: Record<string, string> = {}) =>
    t.app.inject({ url: `/api/v1/lots/${auction}/${lotId}/history`, headers: { authorization: customer.token, ...headers } });
  const countSearches = (c: Customer) => t.repos.searches.countForAccount(c.accountId);

  it('answers 200 with every version, oldest first, counted once as a history call with the limit headers', async () => {
    const customer = await createCustomer(t.repos, { quota: 10, rate: 50 });
    const res = await history(customer, 'copart', 52900001);
    expect(res.statusCode).toBe(200);
    expect(res.headers.ratelimit).toMatch(/"month";r=9;/);
    const body = res.json();
    expect(body).toMatchObject({ auction: 'copart', lot_id: 52900001, vin, first_seen_at: '2026-11-03T10:00:00.000Z', last_seen_at: '2026-11-24T10:00:00.000Z' });
    expect(body.versions).toHaveLength(3);
    expect(body.versions[0]).toMatchObject({ observed_at: '2026-11-03T10:00:00.000Z', source: 'copart-2026-11-03.csv' });
    expect(body.versions[0].changed.odometer).toEqual({ from: null, to: 81000 });
    expect(body.versions[0].changed.document).toEqual({ from: null, to: 'SALVAGE CERTIFICATE' });
    expect(body.versions[0].changed.price).toBeUndefined();
    expect(body.versions[1]).toEqual({ observed_at: '2026-11-10T10:00:00.000Z', source: 'copart-feed', changed: { price: { from: null, to: 4000 } } });
    expect(body.versions[2]).toEqual({
      observed_at: '2026-11-24T10:00:00.000Z',
      source: 'copart-feed',
      changed: { price: { from: 4000, to: 3500 }, document: { from: 'SALVAGE CERTIFICATE', to: 'CLEAN TITLE' } },
    });
    expect(await countSearches(customer)).toBe(1);
    const records = await t.repos.searches.pageForAccount(customer.accountId, { limit: 5 });
    expect(records.searches[0]).toMatchObject({ kind: 'history', outcome: 'found', reportId: null });
  });

  it('answers a well-formed unknown lot 404, counted; a bad auction or lot id 422, not counted', async () => {
    const customer = await createCustomer(t.repos, { quota: 10, rate: 50 });
    const missing = await history(customer, 'copart', 59999999);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'no_records' });
    expect(missing.headers.ratelimit).toMatch(/"month";r=9;/);
    const auction = await history(customer, 'ebay', 1);
    expect(auction.statusCode).toBe(422);
    expect(Object.keys(auction.json().errors)).toEqual(['auction']);
    const lotId = await history(customer, 'copart', 'abc');
    expect(lotId.statusCode).toBe(422);
    expect(Object.keys(lotId.json().errors)).toEqual(['lot_id']);
    expect(await countSearches(customer)).toBe(1);
  });

  it('401 before anything, 402 without a plan, 429 past the rate and past the quota', async () => {
    const anonymous = await t.app.inject({ url: '/api/v1/lots/copart/52900001/history' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.body).toBe('{"message":"Unauthenticated."}');
    const lapsed = await createCustomer(t.repos);
    await t.repos.subscriptions.cancelActive(lapsed.accountId);
    expect((await history(lapsed, 'copart', 52900001)).statusCode).toBe(402);

    const customer = await createCustomer(t.repos, { quota: 1, rate: 50 });
    expect((await history(customer, 'copart', 52900001)).statusCode).toBe(200);
    const overQuota = await history(customer, 'copart', 52900001);
    expect(overQuota.statusCode).toBe(429);
    expect(overQuota.json().code).toBe('quota_exceeded');
    const fast = await createCustomer(t.repos, { quota: 10, rate: 1 });
    const burst = await Promise.all([history(fast, 'copart', 52900001), history(fast, 'copart', 52900001)]);
    expect(burst.map((r) => r.statusCode).sort()).toEqual([200, 429]);
    expect(await countSearches(customer)).toBe(1);
    expect(await countSearches(fast)).toBe(1);
  });

  it('replays an Idempotency-Key for the same lot uncounted, and refuses it for another call', async () => {
    const customer = await createCustomer(t.repos, { quota: 10, rate: 50 });
    const first = await history(customer, 'copart', 52900001, { 'idempotency-key': 'h-1' });
    const again = await history(customer, 'copart', 52900001, { 'idempotency-key': 'h-1' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    const other = await history(customer, 'copart', 59999999, { 'idempotency-key': 'h-1' });
    expect(other.statusCode).toBe(422);
    expect(other.json().code).toBe('idempotency_conflict');
    expect(await countSearches(customer)).toBe(1);
  });

  it('answers a sandbox token from the sandbox catalogue, uncounted', async () => {
    const customer = await createCustomer(t.repos, { quota: 10, rate: 50 });
    const { token } = await t.repos.tokens.create(customer.accountId, 'sandbox', new Date(), 'test');
    const res = await t.app.inject({ url: '/api/v1/lots/copart/90000011/history', headers: { authorization: token } });
    expect(res.statusCode).toBe(200);
    expect(res.json().versions).toHaveLength(1);
    expect(res.json().versions[0].changed.price).toEqual({ from: null, to: 6400 });
    // The sandbox call used none of the plan's quota: the first live call leaves 9 of 10.
    expect((await history(customer, 'copart', 52900001)).headers.ratelimit).toMatch(/"month";r=9;/);
  });
});

afterAll(expectDocumentedStatuses);
