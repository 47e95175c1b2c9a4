import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../../../src/limits/rate/memory-rate-limiter.ts';
import { createTestApp, type TestApp } from '../../../support/app.ts';
import { DIALECTS } from '../../../support/databases.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../../support/fixtures.ts';

const DAY = 86_400_000;
const at = (days: number) => new Date(Date.now() + days * DAY).toISOString();

/**
 * GET /api/v1/market on both databases: by VIN and by make, model and year, every parameter and
 * bound, the counted 404, the limits and the Idempotency-Key. Which sales are comparables and the
 * figures are test/market/market-service.test.ts's and statistics.test.ts's.
 */
describe.each(DIALECTS)('market value on %s', (dialect) => {
  let t: TestApp;
  let customer: Customer;
  const vin = validVin('1HGCV1F30LA00101');
  // The rate limiter's clock, moved a second on to open a new window without waiting.
  let limiterMs = 0;
  const nextWindow = () => {
    limiterMs += 1000;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect, { rateLimiter: new MemoryRateLimiter(() => limiterMs) });
    await t.repos.lots.upsertBatch([
      makeLot({ vin, brand: 'HONDA', model: 'ACCORD', year: 2020, odometer: 50_000, price: 7000, sale_date: at(-400) }),
      makeLot({ vin: validVin('1HGCV1F30LA00102'), brand: 'Honda', model: 'Accord', year: 2020, primary_damage: 'FRONT END', odometer: 52_000, price: 4000, retail_value: 20_000, sale_date: at(-30) }),
      makeLot({ vin: validVin('1HGCV1F30LA00103'), brand: 'HONDA', model: 'ACCORD', year: 2021, primary_damage: 'Front End', odometer: 10_000, price: 6001, retail_value: 20_000, sale_date: at(-200) }),
      makeLot({ vin: validVin('1HGCV1F30LA00104'), brand: 'HONDA', model: 'ACCORD', year: 2019, primary_damage: 'REAR END', price: 3000, sale_date: at(-500) }),
    ]);
    customer = await createCustomer(t.repos, { quota: 1000, rate: 1000 });
  });
  afterAll(async () => t?.close());

  const get = (query: string, who: Pick<Customer, 'token'> = customer, headers: Record<string, string> = {}) =>
    t.app.inject({ url: `/api/v1/market${query}`, headers: { authorization: who.token, ...headers } });

  it('values a VIN: its vehicle from its lots, the comparables of other VINs in 12 months, the closest first', async () => {
    const res = await get(`?vin=${vin.toLowerCase()}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.vehicle).toEqual({ make: 'HONDA', model: 'ACCORD', year: 2020 });
    expect(Date.parse(body.window.to) - Date.parse(body.window.from)).toBeGreaterThan(364 * DAY);
    expect(body.comparables).toEqual({ count: 2, price: { min: 4000, p25: 4500, median: 5001, p75: 5501, max: 6001 }, share_of_retail_value: { median: 0.25 } });
    expect(body.by_damage).toEqual([{ primary_damage: 'FRONT END', count: 2, median_price: 5001 }]);
    expect(body.by_month).toHaveLength(2);
    expect(body.closest.map((lot: { price: number }) => lot.price)).toEqual([4000, 6001]);
    expect(res.headers.ratelimit).toBeDefined();
  });

  it('values a make, model and year, with a damage and months', async () => {
    const res = await get('?make=honda&model=accord&year=2019&months=36&primary_damage=rear%20end');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ vehicle: { make: 'honda', model: 'accord', year: 2019 }, comparables: { count: 1, price: { median: 3000 } } });
    const none = await get('?make=honda&model=accord&year=2000');
    expect(none.json()).toMatchObject({ comparables: { count: 0, price: { min: null, median: null } }, by_damage: [], by_month: [], closest: [] });
  });

  it('answers a counted 404 for a VIN that tells no vehicle', async () => {
    const counted = await createCustomer(t.repos, { quota: 10, rate: 10 });
    // A VIN of no known manufacturer: no lot, and the decoder finds nothing.
    const res = await get('?vin=ZZZZZZZZZZZZZZZZZ', counted);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'no_records' });
    expect(res.headers.ratelimit).toMatch(/"month";r=9;/);
    const [record] = (await t.repos.searches.pageForAccount(counted.accountId, { limit: 1 })).searches;
    expect(record).toMatchObject({ kind: 'market', outcome: 'not_found' });
  });

  it('refuses each bad parameter with errors.<parameter> and counts none', async () => {
    const before = await t.repos.searches.countForAccount(customer.accountId);
    const cases: [string, string][] = [
      ['', 'vin'],
      ['?vin=NOTAVIN', 'vin'],
      [`?vin=${vin}&make=HONDA`, 'vin'],
      ['?make=HONDA&year=2020', 'model'],
      ['?make=HONDA&model=ACCORD', 'year'],
      ['?make=HONDA&model=ACCORD&year=20', 'year'],
      ['?make=%2A&model=ACCORD&year=2020', 'make'],
      [`?vin=${vin}&months=0`, 'months'],
      [`?vin=${vin}&months=37`, 'months'],
      [`?vin=${vin}&primary_damage=--`, 'primary_damage'],
      [`?vin=${vin}&colour=red`, 'colour'],
    ];
    for (const [query, field] of cases) {
      const res = await get(query);
      expect(res.statusCode, query).toBe(422);
      expect(res.json(), query).toMatchObject({ code: 'invalid_request', errors: { [field]: [expect.any(String)] } });
    }
    expect(await t.repos.searches.countForAccount(customer.accountId)).toBe(before);
  });

  it('replays the same query under its key uncounted, refuses another, and holds the quota and the rate', async () => {
    const counted = await createCustomer(t.repos, { quota: 2, rate: 1 });
    const first = await get(`?vin=${vin}`, counted, { 'idempotency-key': 'm-1' });
    expect(first.statusCode).toBe(200);
    const limited = await get(`?vin=${vin}`, counted);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 'rate_limited' });
    nextWindow();
    const again = await get(`?vin=${vin}&months=12`, counted, { 'idempotency-key': 'm-1' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    // Answered afresh (no report is stored to replay): the same figures, a window ending now.
    const { window: _w1, ...firstFigures } = first.json();
    const { window: _w2, ...againFigures } = again.json();
    expect(againFigures).toEqual(firstFigures);
    nextWindow();
    expect((await get(`?vin=${vin}&months=6`, counted, { 'idempotency-key': 'm-1' })).json()).toMatchObject({ code: 'idempotency_conflict' });
    nextWindow();
    expect((await get(`?vin=${vin}`, counted)).statusCode).toBe(200);
    nextWindow();
    expect((await get(`?vin=${vin}`, counted)).json()).toMatchObject({ code: 'quota_exceeded' });
    const { token } = await t.repos.tokens.create(counted.accountId, 'sandbox', new Date(), 'test');
    expect((await get(`?vin=${vin}`, { token })).statusCode).toBe(403);
  });
});

afterAll(expectDocumentedStatuses);
