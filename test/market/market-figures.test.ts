import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareLotsNewestFirst, type Lot } from '../../src/domain/lot.ts';
import { marketKey } from '../../src/domain/market-key.ts';
import { MarketService } from '../../src/market/market-service.ts';
import { medianPrice, priceFigures, shareOfRetailMedian } from '../../src/market/statistics.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { makeLot, validVin } from '../support/fixtures.ts';
import { Prng } from '../../src/dev/seed/prng.ts';

const AS_OF = new Date('2026-11-26T10:00:00.000Z');
const FROM = '2025-11-26T00:00:00.000Z';

/** The seed's generator: the same random catalogue on both databases. */
function random(seed: number): () => number {
  const rng = new Prng(seed);
  return () => rng.next();
}

/**
 * The figures as the contract defines them, computed from every comparable in JavaScript (what
 * MarketService did before the database ranked them): the reference the database's order
 * statistics must reproduce exactly, on both databases.
 */
function reference(lots: readonly Lot[], vehicle: { vin: string; year: number; odometer: number | null }, damage: string | null) {
  const sales = lots.filter(
    (lot) =>
      lot.vin !== vehicle.vin && marketKey(lot.brand ?? '') === 'HONDA' && marketKey(lot.model ?? '') === 'ACCORD' && lot.year !== null &&
      Math.abs(lot.year - vehicle.year) <= 1 && lot.sale_date !== null && lot.sale_date >= FROM && lot.sale_date <= AS_OF.toISOString() &&
      lot.price !== null && lot.price > 0 && (damage === null || (lot.primary_damage !== null && marketKey(lot.primary_damage) === marketKey(damage))),
  );
  const groups = (key: (lot: Lot) => string | null) => {
    const map = new Map<string, Lot[]>();
    for (const sale of sales) {
      const name = key(sale);
      if (name !== null) map.set(name, [...(map.get(name) ?? []), sale]);
    }
    return map;
  };
  const spelling = (group: Lot[]) => {
    const counts = new Map<string, number>();
    for (const sale of group) counts.set(sale.primary_damage!, (counts.get(sale.primary_damage!) ?? 0) + 1);
    return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
  };
  const distance = (sale: Lot) => (vehicle.odometer === null ? 0 : sale.odometer === null ? Number.POSITIVE_INFINITY : Math.abs(sale.odometer - vehicle.odometer));
  return {
    count: sales.length,
    price: priceFigures(sales.map((sale) => sale.price!)),
    share: shareOfRetailMedian(sales.map((sale) => ({ price: sale.price!, retail: sale.retail_value }))),
    byDamage: [...groups((sale) => (sale.primary_damage === null ? null : marketKey(sale.primary_damage)))]
      .map(([, group]) => ({ primary_damage: spelling(group), count: group.length, median_price: medianPrice(group.map((sale) => sale.price!))! }))
      .sort((a, b) => b.count - a.count || (a.primary_damage < b.primary_damage ? -1 : 1)),
    byMonth: [...groups((sale) => sale.sale_date!.slice(0, 7))]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([month, group]) => ({ month, count: group.length, median_price: medianPrice(group.map((sale) => sale.price!))! })),
    closest: [...sales]
      .sort((a, b) => {
        const sameYear = Number(b.year === vehicle.year) - Number(a.year === vehicle.year);
        if (sameYear !== 0) return sameYear;
        const nearer = distance(a) - distance(b);
        if (nearer !== 0 && !Number.isNaN(nearer)) return nearer;
        return compareLotsNewestFirst(a, b);
      })
      .slice(0, 10)
      .map((sale) => `${sale.auction}/${sale.lot_id}`),
  };
}

/**
 * The database computes the figures' order statistics (MarketRepository.comparableFigures); on a
 * random catalogue built to hit the edge cases (tied prices, odd and even counts, retail values
 * missing or 0, damages in several spellings or none, tied odometers and sale dates, two
 * auctions), every figure equals the reference computed from all comparables.
 */
describe.each(DIALECTS)('market figures on %s against the reference', (dialect) => {
  let t: TestDatabase;
  let service: MarketService;
  const lots: Lot[] = [];
  const subjects: { vin: string; year: number; odometer: number | null }[] = [];

  beforeAll(async () => {
    t = await createTestDatabase(dialect);
    service = new MarketService({ repos: t.repos });
    const next = random(24);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    const spellings = ['FRONT END', 'Front end', 'front-end', 'REAR END', 'Rear End', 'SIDE', 'HAIL', null];
    const days = [3, 3, 17, 40, 41, 95, 150, 200, 330, 364, 380];
    for (let i = 0; i < 400; i++) {
      const vin = validVin(`1HGCV1F3${String(i % 150).padStart(8, '0')}`);
      lots.push(
        makeLot({
          auction: pick(['copart', 'iaai']),
          lot_id: 1000 + i,
          vin,
          brand: pick(['HONDA', 'Honda']),
          // One model a VIN (one in five a CIVIC, never a comparable), spelled either way.
          model: i % 5 === 0 ? 'CIVIC' : pick(['ACCORD', 'Accord']),
          year: 2017 + Math.floor(next() * 6),
          // A few repeated prices make ties at the ranks read; some lots are unpriced or at 0.
          price: next() < 0.1 ? pick([null, 0]) : next() < 0.4 ? pick([1000, 2500, 4100]) : 100 + Math.floor(next() * 20_000),
          retail_value: next() < 0.2 ? pick([null, 0]) : 5000 + Math.floor(next() * 40_000),
          primary_damage: pick(spellings),
          odometer: next() < 0.15 ? null : pick([40_000, 41_000, 39_000, Math.floor(next() * 200_000)]),
          sale_date: next() < 0.05 ? null : new Date(AS_OF.getTime() - pick(days) * 86_400_000 - Math.floor(next() * 4) * 3_600_000).toISOString(),
        }),
      );
    }
    await t.repos.lots.upsertBatch(lots);
    for (const vin of [lots[1]!.vin, lots[7]!.vin, lots[12]!.vin]) {
      const own = lots.filter((lot) => lot.vin === vin).sort(compareLotsNewestFirst);
      subjects.push({ vin, year: own[0]!.year!, odometer: own.find((lot) => lot.odometer !== null)?.odometer ?? null });
    }
    // A vehicle given by make, model and year has no odometer: the closest then go by year and sale date.
    subjects.push({ vin: '', year: 2019, odometer: null });
  });
  afterAll(async () => {
    await t?.destroy();
  });

  for (const damage of [null, 'front end', 'HAIL']) {
    it(`answers the reference's figures${damage === null ? '' : ` for damage ${damage}`}`, async () => {
      for (const subject of subjects) {
        const value =
          subject.vin === ''
            ? await service.valueFor({ kind: 'vehicle', make: 'Honda', model: 'Accord', year: subject.year }, { primaryDamage: damage, months: 12, asOf: AS_OF })
            : await service.valueFor({ kind: 'vin', vin: subject.vin }, { primaryDamage: damage, months: 12, asOf: AS_OF });
        const expected = reference(lots, subject, damage);
        expect(expected.count).toBeGreaterThan(0);
        expect(value!.comparables).toEqual({ count: expected.count, price: expected.price, share_of_retail_value: { median: expected.share } });
        expect(value!.by_damage).toEqual(expected.byDamage);
        expect(value!.by_month).toEqual(expected.byMonth);
        expect(value!.closest.map((lot) => `${lot.auction}/${lot.lot_id}`)).toEqual(expected.closest);
      }
    });
  }
});
