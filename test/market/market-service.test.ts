import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lot } from '../../src/domain/lot.ts';
import { MarketService, windowOf } from '../../src/market/market-service.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { makeLot, validVin } from '../support/fixtures.ts';

const AS_OF = new Date('2026-11-26T10:00:00.000Z');
const daysAgo = (days: number) => new Date(AS_OF.getTime() - days * 86_400_000).toISOString();

/**
 * MarketService on both databases: which sales are comparables (make and model by their keys, a
 * year within one, the window, a price, other VINs, a damage), the figures, the groups and the
 * order of the closest sales. The figures' arithmetic is test/market/statistics.test.ts's.
 */
describe.each(DIALECTS)('MarketService on %s', (dialect) => {
  let t: TestDatabase;
  let service: MarketService;
  const subjectVin = validVin('1HGCV1F30LA00001');
  const decoded = new Map<string, { make: string; model: string; year: number }>();
  let n = 0;
  const sale = (overrides: Partial<Lot>): Lot =>
    makeLot({ vin: validVin(`1HGCV1F3${String(++n).padStart(8, '0')}`), brand: 'HONDA', model: 'ACCORD', year: 2020, price: 5000, sale_date: daysAgo(10), ...overrides });

  beforeAll(async () => {
    t = await createTestDatabase(dialect);
    service = new MarketService({ repos: t.repos, decodeVehicle: (vin) => Promise.resolve(decoded.get(vin) ?? null) });
    decoded.set(validVin('1HGCV1F30LA99999'), { make: 'Honda', model: 'Accord', year: 2020 });
    await t.repos.lots.upsertBatch([
      // The vehicle's own lots: its make, model and year, its latest odometer 40,000; never its own comparable.
      makeLot({ vin: subjectVin, brand: 'HONDA', model: 'ACCORD', year: 2020, odometer: 35_000, price: 9000, sale_date: daysAgo(300) }),
      makeLot({ vin: subjectVin, brand: null, model: null, year: null, odometer: 40_000, price: 9100, sale_date: daysAgo(20) }),
      // Comparables, in the spellings feeds use.
      sale({ price: 900, primary_damage: 'FRONT END', odometer: 41_000, retail_value: 10_000, sale_date: daysAgo(40) }),
      sale({ brand: 'Honda', model: 'Accord', price: 4100, primary_damage: 'Front end', odometer: 90_000, retail_value: 12_000, sale_date: daysAgo(5) }),
      sale({ year: 2019, price: 5200, primary_damage: 'REAR END', odometer: 40_500, retail_value: 0, sale_date: daysAgo(70) }),
      sale({ year: 2021, price: 6900, primary_damage: 'front-end', odometer: null, sale_date: daysAgo(70) }),
      sale({ model: 'accord ', price: 15_200, primary_damage: null, odometer: 10_000, retail_value: 20_000, sale_date: daysAgo(100) }),
      // Not comparables: another model, two years off, outside the window, no price, price 0, upcoming.
      sale({ model: 'CIVIC' }),
      sale({ year: 2018 }),
      sale({ sale_date: daysAgo(400) }),
      sale({ price: null }),
      sale({ price: 0 }),
      sale({ sale_date: null }),
      sale({ sale_date: new Date(AS_OF.getTime() + 86_400_000).toISOString() }),
      // F-150 and F150 are one model.
      sale({ brand: 'FORD', model: 'F-150', year: 2018, price: 7000 }),
      sale({ brand: 'Ford', model: 'F150', year: 2018, price: 8001 }),
    ]);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  const options = (overrides: { primaryDamage?: string | null; months?: number } = {}) => ({ primaryDamage: null, months: 12, asOf: AS_OF, ...overrides });

  it("values a VIN from its stored lots: other VINs' sales of its make, model and a year within one, in the window, priced", async () => {
    const value = await service.valueFor({ kind: 'vin', vin: subjectVin }, options());
    expect(value).not.toBeNull();
    expect(value!.vehicle).toEqual({ make: 'HONDA', model: 'ACCORD', year: 2020 });
    expect(value!.window).toEqual({ from: '2025-11-26T00:00:00.000Z', to: '2026-11-26T10:00:00.000Z' });
    expect(value!.comparables).toEqual({
      count: 5,
      // 900, 4100, 5200, 6900, 15200.
      price: { min: 900, p25: 4100, median: 5200, p75: 6900, max: 15_200 },
      // 0.09, 0.3417, 0.76 (retail 0 and unknown left out): the middle one.
      share_of_retail_value: { median: 0.34 },
    });
    expect(value!.by_damage).toEqual([
      // FRONT END, Front end and front-end are one damage, named by its most frequent spelling (a tie: the first in order).
      { primary_damage: 'FRONT END', count: 3, median_price: 4100 },
      { primary_damage: 'REAR END', count: 1, median_price: 5200 },
    ]);
    expect(value!.by_month.map((month) => month.month)).toEqual(['2026-08', '2026-09', '2026-10', '2026-11']);
    expect(value!.by_month.find((month) => month.month === '2026-09')).toEqual({ month: '2026-09', count: 2, median_price: 6050 });
    // Same year first (nearest odometer to 40,000, then newest), then the others likewise (unknown odometer last).
    expect(value!.closest.map((lot) => lot.price)).toEqual([900, 15_200, 4100, 5200, 6900]);
    expect(value!.closest[0]).toMatchObject({ brand: 'HONDA', primary_damage: 'FRONT END', images: [] });
  });

  it('narrows to a damage by its key, and to the months asked', async () => {
    const front = await service.valueFor({ kind: 'vin', vin: subjectVin }, options({ primaryDamage: 'front end' }));
    expect(front!.comparables.count).toBe(3);
    expect(front!.by_damage).toEqual([{ primary_damage: 'FRONT END', count: 3, median_price: 4100 }]);
    const recent = await service.valueFor({ kind: 'vin', vin: subjectVin }, options({ months: 1 }));
    expect(recent!.window.from).toBe('2026-10-26T00:00:00.000Z');
    expect(recent!.comparables.count).toBe(1);
  });

  it('values a make, model and year as given; F-150 and F150 are one model', async () => {
    const value = await service.valueFor({ kind: 'vehicle', make: ' ford ', model: 'f 150', year: 2019 }, options());
    expect(value!.vehicle).toEqual({ make: 'ford', model: 'f 150', year: 2019 });
    expect(value!.comparables.price).toEqual({ min: 7000, p25: 7250, median: 7501, p75: 7751, max: 8001 });
    expect(value!.comparables.share_of_retail_value.median).toBeNull();
  });

  it('answers count 0, null figures and empty lists without comparables', async () => {
    const value = await service.valueFor({ kind: 'vehicle', make: 'LADA', model: 'NIVA', year: 1990 }, options());
    expect(value).toMatchObject({
      comparables: { count: 0, price: { min: null, p25: null, median: null, p75: null, max: null }, share_of_retail_value: { median: null } },
      by_damage: [],
      by_month: [],
      closest: [],
    });
  });

  it('decodes a VIN without stored lots; null when neither tells its vehicle', async () => {
    const value = await service.valueFor({ kind: 'vin', vin: validVin('1HGCV1F30LA99999') }, options());
    expect(value!.vehicle).toEqual({ make: 'Honda', model: 'Accord', year: 2020 });
    // The first vehicle's sale 20 days ago is another VIN's now.
    expect(value!.comparables.count).toBe(6);
    expect(await service.valueFor({ kind: 'vin', vin: validVin('1HGCV1F30LA88888') }, options())).toBeNull();
  });

  it('starts the window on the last day of a shorter month', () => {
    expect(windowOf(new Date('2026-03-31T12:00:00Z'), 1).from).toBe('2026-02-28T00:00:00.000Z');
    expect(windowOf(new Date('2026-01-15T00:00:00Z'), 36).from).toBe('2023-01-15T00:00:00.000Z');
  });
});
