import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOT_FIELDS, LotSchema, MAX_INTEGER, type Lot } from '../../../../src/domain/lot.ts';
import { cataloguePage } from '../../../../src/http/api/v1/catalogue.ts';
import { createTestApp, type TestApp } from '../../../support/app.ts';
import { DIALECTS } from '../../../support/databases.ts';
import { createCustomer, makeLot, type Customer } from '../../../support/fixtures.ts';

/**
 * What the catalogue answered before its lots were the store's JSON text: each lot read as an
 * object (lotFromRow, through MarketRepository.lotsByKeys) and the page written by the route's own
 * 200 schema. The page's bytes must not change.
 */
async function objectBuilt(t: TestApp, keys: { auction: string; lot_id: number }[], nextCursor: string | null): Promise<string> {
  const stored = await t.repos.market.lotsByKeys(keys.map((key) => ({ auction: key.auction, lotId: key.lot_id })));
  const lots = keys.map((key) => stored.find((lot) => lot.auction === key.auction && lot.lot_id === key.lot_id)!);
  const app = Fastify();
  app.addSchema(LotSchema);
  app.get('/', { schema: { response: { 200: cataloguePage({ description: 'the page', headers: {} }) } } }, async () => ({ lots, next_cursor: nextCursor }));
  const response = await app.inject('/');
  await app.close();
  return response.body;
}

const DAY = 86_400_000;
const at = (days: number) => new Date(Date.now() + days * DAY).toISOString();

/** Every field given, for the lots that are not all nulls. */
function fullLot(vin: string, lotId: number, overrides: Partial<Lot> = {}): Lot {
  return {
    ...makeLot({ vin, lot_id: lotId }),
    body: 'SEDAN 4D',
    fuel: 'GAS',
    keys: 'YES',
    name: '2019 TOYOTA CAMRY SE',
    type: 'AUTOMOBILE',
    year: 2019,
    brand: 'TOYOTA',
    color: 'WHITE',
    drive: 'FRONT-WHEEL DRIVE',
    model: 'CAMRY',
    price: 6_150,
    engine: '2.5L 4',
    document: 'SALVAGE CERTIFICATE',
    location: 'HOUSTON',
    odometer: 48_211,
    cylinders: 4,
    highlight: 'RUN AND DRIVE',
    sale_date: at(-3),
    repair_cost: 9_400,
    location_zip: '77001',
    retail_value: 19_800,
    transmission: 'AUTOMATIC',
    configuration: 'SE',
    odometer_type: 'ACTUAL',
    primary_damage: 'FRONT END',
    secondary_damage: 'SIDE',
    images: ['https://img.example.com/t/1.jpg', 'https://img.example.com/t/2.jpg?w=640&h="480"'],
    ...overrides,
  };
}

/**
 * The catalogue's pages on both databases, spliced from each lot's JSON text as the database
 * writes it: byte for byte the page the object-built lots and the route schema wrote, over lots
 * with nulls, photos, the bounds of numbers, and text of every kind JSON escapes or keeps.
 */
describe.each(DIALECTS)('catalogue pages as the store JSON text on %s', (dialect) => {
  let t: TestApp;
  let customer: Customer;
  // Outside North America (no check digit); one masked prefix for all of them.
  const vin = (n: number) => `JT2BF22K1Y${String(n).padStart(7, '0')}`;
  const lots: Lot[] = [
    fullLot(vin(1), 71_000_001),
    // Every field null but the identity, and no photos.
    makeLot({ vin: vin(2), auction: 'iaai', lot_id: 71_000_002 }),
    fullLot(vin(3), 71_000_003, {
      name: 'Quote " back\\slash / solidus \u0001\u001f control \t tab \n newline ünï 汽车 😀 \u2028\u2029',
      location: 'SÃO PAULO – Zürich «quotes» ’',
      highlight: '',
      model: 'ŠKODA Octavia ⟨RS⟩',
      sale_date: null,
      images: Array.from({ length: 12 }, (_, i) => `https://img.example.com/p/${i}.jpg?é=${i}&x=%20`),
    }),
    fullLot(vin(4), 71_000_004, { price: MAX_INTEGER, repair_cost: 0, retail_value: MAX_INTEGER, odometer: 9_999_999, cylinders: 0, year: 1886, sale_date: at(5) }),
    fullLot(vin(5), 71_000_005, { price: 0, odometer: 0, year: 2100, sale_date: '2020-02-29T23:59:59.999Z', primary_damage: null, images: [] }),
    makeLot({ vin: vin(6), auction: 'copart-de', lot_id: 0, brand: 'Mercedes-Benz', name: 'emoji only 🚗🚙', sale_date: at(-400), images: ['https://img.example.com/only.jpg'] }),
  ];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.repos.lots.upsertBatch(lots);
    customer = await createCustomer(t.repos, { quota: 10_000, rate: 10_000 });
  });
  afterAll(async () => t?.close());

  const page = async (query: string) => {
    const res = await t.app.inject({ url: `/api/v1/lots?${query}`, headers: { authorization: customer.token } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    return { text: res.body, page: JSON.parse(res.body) as { lots: Lot[]; next_cursor: string | null } };
  };

  it.each(['sort=sale_date_desc', 'sort=sale_date_asc', 'sort=price_asc', 'sort=price_desc'])('a whole page, %s, is byte for byte the object-built page', async (sort) => {
    const { text, page: body } = await page(`vin=JT2BF22K1Y0******&${sort}`);
    expect(body.lots).toHaveLength(lots.length);
    expect(text).toBe(await objectBuilt(t, body.lots, null));
    // And each lot is the one stored, every field present in the spec's order.
    for (const lot of body.lots) {
      expect(Object.keys(lot)).toEqual(LOT_FIELDS);
      expect(lot).toEqual(lots.find((stored) => stored.lot_id === lot.lot_id));
    }
  });

  it('every page by cursor, its next_cursor included, is byte for byte the object-built page', async () => {
    let cursor: string | null = null;
    const seen: number[] = [];
    do {
      const { text, page: body }: Awaited<ReturnType<typeof page>> = await page(`vin=JT2BF22K1Y0******&limit=2${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      expect(text).toBe(await objectBuilt(t, body.lots, body.next_cursor));
      seen.push(...body.lots.map((lot) => lot.lot_id));
      cursor = body.next_cursor;
    } while (cursor !== null);
    expect(seen.sort()).toEqual(lots.map((lot) => lot.lot_id).sort());
  });

  it('an empty page too', async () => {
    const { text } = await page('vin=JT2BF22K1Z0******');
    expect(text).toBe(await objectBuilt(t, [], null));
    expect(text).toBe('{"lots":[],"next_cursor":null}');
  });
});
