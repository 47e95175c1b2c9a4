import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lot } from '../../../../src/domain/lot.ts';
import { createTestApp, type TestApp } from '../../../support/app.ts';
import { DIALECTS } from '../../../support/databases.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';
import { createCustomer, makeLot, validVin, type Customer } from '../../../support/fixtures.ts';

const DAY = 86_400_000;
const at = (days: number) => new Date(Date.now() + days * DAY).toISOString();

/**
 * GET /api/v1/lots on both databases: every parameter, sort, bound and status of the contract's
 * "Catalogue search", its counting, and paging that neither repeats nor skips while lots are imported
 * between pages.
 */
describe.each(DIALECTS)('catalogue search on %s', (dialect) => {
  let t: TestApp;
  let customer: Customer;
  // Outside North America (no check digit): the masked form keeps its first 11 characters as written.
  const masked = 'JN1DL0MM5KC000001';
  const lots: Lot[] = [
    makeLot({ vin: masked, auction: 'copart', lot_id: 70_000_001, brand: 'HONDA', model: 'ACCORD', year: 2020, primary_damage: 'FRONT END', document: 'SALVAGE CERTIFICATE', odometer: 40_000, price: 5000, sale_date: at(-10), location_zip: '33101' }),
    makeLot({ vin: 'JN1DL0MM5KC000002', auction: 'iaai', lot_id: 70_000_002, brand: 'Honda', model: 'Accord', year: 2019, primary_damage: 'Front end', document: 'Salvage certificate', odometer: 90_000, price: 3000, sale_date: at(-40) }),
    makeLot({ vin: validVin('1FTFW1ET5DFC00003'), auction: 'copart', lot_id: 70_000_003, brand: 'FORD', model: 'F-150', year: 2015, primary_damage: 'REAR END', price: 8000, sale_date: at(-5) }),
    makeLot({ vin: validVin('1FTFW1ET5DFC00004'), auction: 'copart', lot_id: 70_000_004, brand: 'Ford', model: 'F150', year: 2016, primary_damage: 'REAR END', price: null, sale_date: at(3) }),
    makeLot({ vin: validVin('1FTFW1ET5DFC00005'), auction: 'iaai', lot_id: 70_000_005, brand: 'FORD', model: 'F150', year: 2017, price: null, sale_date: null }),
    makeLot({ vin: validVin('1FTFW1ET5DFC00006'), auction: 'copart', lot_id: 70_000_006, brand: 'FORD', model: 'F150', year: 2017, price: 8000, sale_date: null }),
  ];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.repos.lots.upsertBatch(lots);
    customer = await createCustomer(t.repos, { quota: 10_000, rate: 10_000 });
  });
  afterAll(async () => t?.close());

  const get = (query: string, who: Pick<Customer, 'token'> = customer, headers: Record<string, string> = {}) =>
    t.app.inject({ url: `/api/v1/lots${query}`, headers: { authorization: who.token, ...headers } });
  const ids = async (query: string) => {
    const res = await get(query);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ lots: Lot[] }>().lots.map((lot) => lot.lot_id - 70_000_000);
  };

  it('answers lots exactly as in a Report, newest sale first with lots without a sale date first, and a null cursor on the last page', async () => {
    const res = await get('');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.next_cursor).toBeNull();
    // Without a sale date (ties: auction ascending, lot id descending), the future one, then newest first.
    expect(body.lots.map((lot: Lot) => lot.lot_id - 70_000_000)).toEqual([6, 5, 4, 3, 1, 2]);
    expect(body.lots.find((lot: Lot) => lot.lot_id === 70_000_001)).toEqual(lots[0]);
  });

  it('filters on each parameter, make, model and damage by their keys', async () => {
    expect(await ids('?make=honda')).toEqual([1, 2]);
    expect(await ids('?make=FORD&model=f-150')).toEqual([6, 5, 4, 3]);
    expect(await ids('?primary_damage=front%20end')).toEqual([1, 2]);
    expect(await ids('?document=salvage%20CERTIFICATE')).toEqual([1, 2]);
    expect(await ids('?document=salvage')).toEqual([]);
    expect(await ids('?auction=IAAI')).toEqual([5, 2]);
    expect(await ids('?year_min=2016&year_max=2017')).toEqual([6, 5, 4]);
    expect(await ids('?odometer_max=50000')).toEqual([1]);
    expect(await ids('?price_min=4000&price_max=8000')).toEqual([6, 3, 1]);
    expect(await ids(`?sale_from=${at(-11).slice(0, 10)}&sale_to=${at(-5)}`)).toEqual([3, 1]);
    // A date-only sale_to covers its whole UTC day.
    expect(await ids(`?sale_from=${at(-5).slice(0, 10)}&sale_to=${at(-5).slice(0, 10)}`)).toEqual([3]);
    expect(await ids('?status=upcoming')).toEqual([6, 5, 4]);
    expect(await ids('?status=sold')).toEqual([3, 1, 2]);
    expect(await ids('?location_zip=33101')).toEqual([1]);
    expect(await ids(`?vin=${masked.toLowerCase()}`)).toEqual([1]);
    expect(await ids('?vin=JN1DL0MM5KC******')).toEqual([1, 2]);
    expect(await ids('?vin=jn1dl0mm5kc00000*')).toEqual([1, 2]);
    expect(await ids('?vin=JN1DL0MM5KD******')).toEqual([]);
  });

  it('sorts by sale date ascending (without one last) and by price either way (without one last)', async () => {
    expect(await ids('?sort=sale_date_asc')).toEqual([2, 1, 3, 4, 6, 5]);
    expect(await ids('?sort=price_asc')).toEqual([2, 1, 6, 3, 4, 5]);
    expect(await ids('?sort=price_desc')).toEqual([6, 3, 1, 2, 4, 5]);
    expect(await ids('?status=upcoming&sort=sale_date_asc')).toEqual([4, 6, 5]);
  });

  it('pages with the cursor in every order, and refuses a cursor of another sort', async () => {
    for (const sort of ['sale_date_desc', 'sale_date_asc', 'price_asc', 'price_desc']) {
      const all = await ids(`?sort=${sort}`);
      const paged: number[] = [];
      let cursor: string | null = null;
      do {
        const res = await get(`?sort=${sort}&limit=4${cursor ? `&cursor=${cursor}` : ''}`);
        const body = res.json<{ lots: Lot[]; next_cursor: string | null }>();
        paged.push(...body.lots.map((lot) => lot.lot_id - 70_000_000));
        cursor = body.next_cursor;
      } while (cursor !== null);
      expect(paged, sort).toEqual(all);
    }
    const first = (await get('?limit=2')).json<{ next_cursor: string }>();
    const other = await get(`?limit=2&sort=price_asc&cursor=${first.next_cursor}`);
    expect(other.statusCode).toBe(422);
    expect(other.json().errors.cursor).toBeDefined();
  });

  it('pages without repeating or skipping a lot while lots are imported between the pages', async () => {
    const vins = (n: number) => validVin(`3VWDX7AJ5DM${String(n).padStart(5, '0')}`);
    await t.repos.lots.upsertBatch(Array.from({ length: 12 }, (_, i) => makeLot({ vin: vins(i), auction: 'copart', lot_id: 71_000_000 + i, brand: 'VOLKSWAGEN', model: 'JETTA', sale_date: at(-i), price: 1000 + i })));
    const seen: number[] = [];
    let cursor: string | null = null;
    let added = 0;
    do {
      const res = await get(`?make=volkswagen&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      const body = res.json<{ lots: Lot[]; next_cursor: string | null }>();
      seen.push(...body.lots.map((lot) => lot.lot_id));
      cursor = body.next_cursor;
      // Another import: one lot sorting before the page read, one after it; and a price changed on one already shown.
      await t.repos.lots.upsertBatch([
        makeLot({ vin: vins(100 + added), auction: 'copart', lot_id: 71_100_000 + added, brand: 'VOLKSWAGEN', model: 'JETTA', sale_date: at(-0.5 + added * 0.01) }),
        makeLot({ vin: vins(200 + added), auction: 'copart', lot_id: 71_200_000 + added, brand: 'VOLKSWAGEN', model: 'JETTA', sale_date: at(-30 - added) }),
        { ...makeLot({ vin: vins(0), auction: 'copart', lot_id: 71_000_000, price: 5000 + added }) },
      ]);
      added++;
    } while (cursor !== null);
    expect(new Set(seen).size).toBe(seen.length);
    // Every lot stored before the first page is there, once.
    for (let i = 0; i < 12; i++) expect(seen).toContain(71_000_000 + i);
  });

  it('refuses each bad parameter with errors.<parameter>, an unknown or repeated one too, and counts none', async () => {
    const before = await t.repos.searches.countForAccount(customer.accountId);
    const cases: [string, string][] = [
      ['?make=%20-%20', 'make'],
      [`?model=${'x'.repeat(101)}`, 'model'],
      ['?document=', 'document'],
      ['?auction=Not%20a%20word', 'auction'],
      ['?year_min=1800', 'year_min'],
      ['?year_min=2020&year_max=2019', 'year_max'],
      ['?odometer_max=-1', 'odometer_max'],
      ['?price_min=1.5', 'price_min'],
      ['?price_min=10&price_max=9', 'price_max'],
      ['?sale_from=2026-02-30', 'sale_from'],
      ['?sale_to=yesterday', 'sale_to'],
      ['?sale_from=2026-02-02&sale_to=2026-02-01', 'sale_to'],
      ['?status=soon', 'status'],
      [`?location_zip=${'1'.repeat(21)}`, 'location_zip'],
      ['?vin=5N1DL0MM5K*******', 'vin'],
      ['?vin=5N1DL0MM5KC*****', 'vin'],
      ['?vin=1FTFW1ET5DFC00004', 'vin'],
      ['?sort=newest', 'sort'],
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?cursor=not-ours', 'cursor'],
      ['?colour=red', 'colour'],
      ['?make=a&make=b', 'make'],
    ];
    for (const [query, field] of cases) {
      const res = await get(query);
      expect(res.statusCode, query).toBe(422);
      expect(res.json(), query).toMatchObject({ code: 'invalid_request', errors: { [field]: [expect.any(String)] } });
    }
    expect(await t.repos.searches.countForAccount(customer.accountId)).toBe(before);
  });

  it('counts every page, an empty one too, with the limit headers; a repeat of its key is not counted; another query under it is a conflict', async () => {
    const counted = await createCustomer(t.repos, { quota: 3, rate: 100 });
    const empty = await get('?make=LADA', counted);
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({ lots: [], next_cursor: null });
    expect(empty.headers.ratelimit).toMatch(/"month";r=2;/);
    expect(empty.headers['x-ratelimit-limit']).toBe('100');
    const keyed = await get('?make=honda', counted, { 'idempotency-key': 'page-1' });
    const again = await get('?make=HONDA', counted, { 'idempotency-key': 'page-1' });
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(keyed.json());
    const conflict = await get('?make=ford', counted, { 'idempotency-key': 'page-1' });
    expect(conflict.statusCode).toBe(422);
    expect(conflict.json()).toMatchObject({ code: 'idempotency_conflict' });
    expect((await t.repos.searches.pageForAccount(counted.accountId, { limit: 10 })).searches.map((s) => s.kind)).toEqual(['catalogue', 'catalogue']);
    await get('', counted);
    const over = await get('', counted);
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ code: 'quota_exceeded' });
    expect(over.headers['retry-after']).toBeDefined();
  });

  it('refuses past the per-second rate, without a token, and a sandbox token', async () => {
    const slow = await createCustomer(t.repos, { quota: 100, rate: 1 });
    expect((await get('', slow)).statusCode).toBe(200);
    const limited = await get('', slow);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 'rate_limited' });
    const anonymous = await t.app.inject({ url: '/api/v1/lots' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.body).toBe('{"message":"Unauthenticated."}');
    const { token } = await t.repos.tokens.create(customer.accountId, 'sandbox', new Date(), 'test');
    const sandbox = await get('', { token });
    expect(sandbox.statusCode).toBe(403);
    expect(sandbox.json()).toMatchObject({ code: 'live_token_required' });
  });
});

afterAll(expectDocumentedStatuses);
