import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_BASE_URL, type TestApp } from '../../../support/app.ts';
import { DIALECTS } from '../../../support/databases.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';
import { SANDBOX_CATALOGUE } from '../../../../src/search/sandbox/catalogue.ts';

const SEVERAL = '4T1BF1FK7FU900011';
const NONE = '1HGCV1F36LA900021';
const COPART_ONLY = '1FTEW1EP8KFA90031';
const LIVE_VIN = validVin('2T1BURHE0JC01435');

describe.each(DIALECTS)('sandbox tokens on %s', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    // A live lot of a catalogue VIN, and a live vehicle: a sandbox token sees neither.
    await t.repos.lots.upsertBatch([
      makeLot({ vin: COPART_ONLY, auction: 'copart', lot_id: 77000001, sale_date: '2024-01-01T00:00:00.000Z' }),
      makeLot({ vin: LIVE_VIN, auction: 'copart', lot_id: 77000002 }),
    ]);
  });
  afterAll(async () => t?.close());

  /** A customer with a live token (its plan as given) and a sandbox token of the same account. */
  async function customerWithTestToken(options: Parameters<typeof createCustomer>[1] = {}): Promise<Customer & { testToken: string }> {
    const customer = await createCustomer(t.repos, options);
    const { token } = await t.repos.tokens.create(customer.accountId, 'sandbox', new Date(), 'test');
    return { ...customer, testToken: token };
  }
  const get = (token: string, url: string, headers: Record<string, string> = {}) => t.app.inject({ url, headers: { authorization: token, ...headers } });
  const search = (token: string, vin: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: token, ...headers }, payload: { vin } });
  const used = async (c: Customer) => (await t.app.services.usage.forAccount(c.accountId))?.used;

  it('answers a catalogue VIN with the catalogue lots, in the live shape, and counts nothing', async () => {
    const c = await customerWithTestToken({ quota: 10, rate: 10 });
    expect(c.testToken).toMatch(/^vh_test_[0-9A-Za-z]{32}$/);
    const res = await search(c.testToken, SEVERAL);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['lots', 'origin_timestamp', 'report_url', 'status', 'vin']);
    expect(body).toMatchObject({ status: 'success', vin: SEVERAL });
    expect(body.lots).toEqual(SANDBOX_CATALOGUE.find((v) => v.vin === SEVERAL)!.lots);
    expect(body.lots.length).toBeGreaterThanOrEqual(3);
    expect(body.report_url.startsWith(`${TEST_BASE_URL}/report/`)).toBe(true);
    // GET by VIN and by lot answer the same.
    expect((await get(c.testToken, `/api/v1/search?vin=${SEVERAL}`)).json().lots).toEqual(body.lots);
    expect((await get(c.testToken, '/api/v1/lots/iaai/39000012')).json().lots).toEqual(body.lots);
    expect(await used(c)).toBe(0);
    expect(await t.repos.searches.countForAccount(c.accountId)).toBe(0);
    // Recorded (its history keeps the report links), but not in the usage chart of counted searches.
    const records = await t.repos.searches.listForAccount(c.accountId);
    expect(records).toHaveLength(3);
    expect(records.every((record) => record.sandbox === 1 && record.outcome === 'found')).toBe(true);
    expect(await t.repos.searches.dailyCounts(c.accountId, '2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z')).toEqual([]);
  });

  it('sees only the catalogue: a catalogue VIN with live lots answers the catalogue, a live VIN 404', async () => {
    const c = await customerWithTestToken({ quota: 10, rate: 10 });
    const copart = await search(c.testToken, COPART_ONLY);
    expect(copart.json().lots.map((lot: { lot_id: number }) => lot.lot_id)).toEqual([90000031]);
    const live = await search(c.testToken, LIVE_VIN);
    expect(live.statusCode).toBe(404);
    expect(live.json().message).toBe(`No auction records were found for VIN ${LIVE_VIN}.`);
    expect((await get(c.testToken, '/api/v1/lots/copart/77000002')).statusCode).toBe(404);
    // The live token of the same account sees the live lot, and is counted.
    expect((await search(c.token, COPART_ONLY)).json().lots.map((lot: { lot_id: number }) => lot.lot_id)).toEqual([77000001]);
    expect(await used(c)).toBe(1);
  });

  it('answers 404 for the catalogue VIN without lots and for an unknown lot, with the limit headers, uncounted', async () => {
    const c = await customerWithTestToken({ quota: 10, rate: 10 });
    await search(c.token, SEVERAL); // one live search: the month's remainder shows it
    const none = await search(c.testToken, NONE);
    expect(none.statusCode).toBe(404);
    expect(none.headers['ratelimit-policy']).toMatch(/^"second";q=10;w=1, "month";q=10;w=\d+$/);
    expect(none.headers.ratelimit).toMatch(/^"second";r=9;t=1, "month";r=9;t=\d+$/);
    expect(none.headers['x-ratelimit-limit']).toBe('10');
    const lot = await get(c.testToken, '/api/v1/lots/copart/51000001');
    expect(lot.statusCode).toBe(404);
    expect(lot.json().message).toBe('No lot 51000001 is known at copart.');
    expect(await used(c)).toBe(1);
  });

  it('validates exactly as live: 422 for a bad VIN, an auction outside the catalogue, a bad lot id, a bad key', async () => {
    const c = await customerWithTestToken();
    expect(Object.keys((await search(c.testToken, '1HGCV1F30LA900021')).json().errors)).toEqual(['vin']);
    const manheim = await get(c.testToken, '/api/v1/lots/manheim/1');
    expect(manheim.statusCode).toBe(422);
    expect(manheim.json().errors.auction[0]).toContain('known auctions: copart, iaai');
    expect(Object.keys((await get(c.testToken, '/api/v1/lots/copart/zero')).json().errors)).toEqual(['lot_id']);
    expect((await search(c.testToken, SEVERAL, { 'idempotency-key': 'é' })).statusCode).toBe(422);
  });

  it('works for an account without a plan in force, at the Standard rate, where a live token is 402', async () => {
    const account = await t.repos.accounts.create(`sandbox-${Date.now()}-${Math.random()}@example.com`);
    const live = await t.repos.tokens.create(account.id, 'live');
    const test = await t.repos.tokens.create(account.id, 'test', new Date(), 'test');
    expect((await search(live.token, SEVERAL)).statusCode).toBe(402);
    const responses = await Promise.all([1, 2, 3].map(() => search(test.token, SEVERAL)));
    expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 200, 429]);
    const ok = responses.find((r) => r.statusCode === 200)!;
    expect(ok.headers['ratelimit-policy']).toMatch(/^"second";q=2;w=1, "month";q=1000;w=\d+$/);
    expect(ok.headers.ratelimit).toMatch(/"month";r=1000;/);
    const limited = responses.find((r) => r.statusCode === 429)!;
    expect(limited.json().message).toMatch(/rate limit/i);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // /api/v1/usage has no plan to describe.
    expect((await get(test.token, '/api/v1/usage')).statusCode).toBe(402);
  });

  it("is held to the plan's per-second rate, in a window apart from the live tokens'", async () => {
    const c = await customerWithTestToken({ quota: 100, rate: 2 });
    const [a, b, limited] = await Promise.all([1, 2, 3].map(() => search(c.testToken, SEVERAL)));
    expect([a!.statusCode, b!.statusCode, limited!.statusCode].sort()).toEqual([200, 200, 429]);
    // The sandbox burst did not use the live window.
    const live = await Promise.all([1, 2].map(() => search(c.token, SEVERAL)));
    expect(live.map((r) => r.statusCode)).toEqual([404, 404]);
  });

  it('never runs into the quota: a used-up plan still answers sandbox searches', async () => {
    const c = await customerWithTestToken({ quota: 1, rate: 100 });
    expect((await search(c.token, SEVERAL)).statusCode).toBe(404);
    expect((await search(c.token, SEVERAL)).statusCode).toBe(429);
    const res = await search(c.testToken, SEVERAL);
    expect(res.statusCode).toBe(200);
    expect(res.headers.ratelimit).toMatch(/"month";r=0;/);
    expect(await used(c)).toBe(1);
  });

  it('keeps the Idempotency-Key rule, its keys apart from the live ones', async () => {
    const c = await customerWithTestToken({ quota: 100, rate: 100 });
    const first = await search(c.testToken, SEVERAL, { 'idempotency-key': 'order-1' });
    const again = await search(c.testToken, SEVERAL, { 'idempotency-key': 'order-1' });
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    const conflict = await search(c.testToken, COPART_ONLY, { 'idempotency-key': 'order-1' });
    expect(conflict.statusCode).toBe(422);
    expect(conflict.json().errors['Idempotency-Key'][0]).toContain(`VIN ${SEVERAL}`);
    // The same key on a live token is another key: a live search, counted, not the test report.
    const live = await search(c.token, SEVERAL, { 'idempotency-key': 'order-1' });
    expect(live.statusCode).toBe(404);
    expect(live.headers['idempotent-replayed']).toBeUndefined();
    expect(await used(c)).toBe(1);
  });

  it('stores its reports, marked as test reports on their page; live reports carry no marker', async () => {
    const c = await customerWithTestToken({ quota: 100, rate: 100 });
    const testReport = (await search(c.testToken, SEVERAL)).json().report_url as string;
    const page = await t.app.inject({ url: new URL(testReport).pathname });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Test report');
    expect(page.body).toContain('sandbox');
    await t.repos.lots.upsertBatch([makeLot({ vin: NONE, auction: 'iaai', lot_id: 77000003 })]);
    const liveReport = (await search(c.token, NONE)).json().report_url as string;
    const livePage = await t.app.inject({ url: new URL(liveReport).pathname });
    expect(livePage.statusCode).toBe(200);
    expect(livePage.body).not.toContain('Test report');
  });

  it('is refused once revoked, like any token', async () => {
    const c = await customerWithTestToken();
    expect(await t.repos.tokens.revokeByToken(c.testToken)).toBe(true);
    const res = await search(c.testToken, SEVERAL);
    expect(res.statusCode).toBe(401);
    expect(res.body).toBe('{"message":"Unauthenticated."}');
  });
});

afterAll(expectDocumentedStatuses);
