import { compareLotsNewestFirst, type Lot } from '../domain/lot.ts';
import type { MarketOptions, MarketSubject, MarketValue } from '../domain/market.ts';
import { marketKey } from '../domain/market-key.ts';
import type { ComparableSale } from '../storage/repositories/market-repository.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { medianPrice, priceFigures, shareOfRetailMedian } from './statistics.ts';

/** What decoding a VIN tells of its vehicle; null fields are unknown. */
export interface DecodedVehicle {
  make: string | null;
  model: string | null;
  year: number | null;
}

export interface MarketServiceOptions {
  repos: Repositories;
  /** Decodes a VIN whose stored lots do not name its make, model and year (ingest/enrich-from-vin.ts's decoder). */
  decodeVehicle?: (vin: string) => Promise<DecodedVehicle | null>;
  /** The photo archive's step, as a search's (search-service.ts): archived photos listed by their copies. */
  resolveImages?: (lots: Lot[]) => Promise<Lot[]>;
}

/** How many of the closest sales a market value lists (contract). */
export const CLOSEST = 10;

/** The vehicle a market value is for, and its latest known odometer (null: none known), which orders the closest sales. */
interface Vehicle {
  make: string;
  model: string;
  year: number;
  odometer: number | null;
  vin: string | null;
}

/**
 * What similar cars sold for (contract, "Market value"): the comparables of a vehicle are the sold
 * lots (a sale date in the window, a price above 0) of its make and model (their keys,
 * domain/market-key.ts) and a year within one of its own, of other VINs, narrowed to a damage when
 * asked. The figures are statistics.ts's. The API answers it for now, a report page for its time.
 */
export class MarketService {
  constructor(private readonly options: MarketServiceOptions) {}

  /** Null when the vehicle's make, model and year are known neither from its stored lots nor from its VIN. */
  async valueFor(subject: MarketSubject, options: MarketOptions): Promise<MarketValue | null> {
    const vehicle = await this.vehicleOf(subject);
    if (vehicle === null) return null;
    const window = windowOf(options.asOf, options.months);
    const makeKey = marketKey(vehicle.make);
    const modelKey = marketKey(vehicle.model);
    const damageKey = options.primaryDamage === null ? null : marketKey(options.primaryDamage);
    const sales =
      makeKey === null || modelKey === null || (options.primaryDamage !== null && damageKey === null)
        ? []
        : await this.options.repos.market.comparables({
            makeKey,
            modelKey,
            yearMin: vehicle.year - 1,
            yearMax: vehicle.year + 1,
            from: window.from,
            to: window.to,
            damageKey,
            excludeVin: vehicle.vin,
          });
    return {
      vehicle: { make: vehicle.make, model: vehicle.model, year: vehicle.year },
      window,
      comparables: {
        count: sales.length,
        price: priceFigures(sales.map((sale) => sale.price)),
        share_of_retail_value: { median: shareOfRetailMedian(sales.map((sale) => ({ price: sale.price, retail: sale.retailValue }))) },
      },
      by_damage: byDamage(sales),
      by_month: byMonth(sales),
      closest: await this.closestLots(sales, vehicle),
    };
  }

  /**
   * By VIN: each of make, model and year from the newest of its stored lots that has it, the rest
   * from decoding the VIN; by make, model and year: those, trimmed.
   */
  private async vehicleOf(subject: MarketSubject): Promise<Vehicle | null> {
    if (subject.kind === 'vehicle') return { make: subject.make.trim(), model: subject.model.trim(), year: subject.year, odometer: null, vin: null };
    const lots = await this.options.repos.lots.findByVin(subject.vin);
    const newest = <F extends 'brand' | 'model' | 'year' | 'odometer'>(field: F): Lot[F] | null => lots.find((lot) => lot[field] !== null)?.[field] ?? null;
    let make = newest('brand');
    let model = newest('model');
    let year = newest('year');
    if ((make === null || model === null || year === null) && this.options.decodeVehicle) {
      const decoded = await this.options.decodeVehicle(subject.vin);
      make ??= decoded?.make ?? null;
      model ??= decoded?.model ?? null;
      year ??= decoded?.year ?? null;
    }
    if (make === null || model === null || year === null) return null;
    return { make, model, year, odometer: newest('odometer'), vin: subject.vin };
  }

  /** The closest sales as lots, in their order: same year first, then nearest odometer to the vehicle's, then newest sale. */
  private async closestLots(sales: ComparableSale[], vehicle: Vehicle): Promise<Lot[]> {
    const chosen = closestSales(sales, vehicle.year, vehicle.odometer);
    if (chosen.length === 0) return [];
    const byKey = new Map((await this.options.repos.market.lotsByKeys(chosen)).map((lot) => [`${lot.auction}/${lot.lot_id}`, lot]));
    const lots = chosen.flatMap((sale) => byKey.get(`${sale.auction}/${sale.lotId}`) ?? []);
    return this.options.resolveImages ? this.options.resolveImages(lots) : lots;
  }
}

/**
 * The window of sale dates: from the start of the UTC day `months` calendar months before `asOf`
 * (the 31st of a shorter month is its last day) to `asOf`, both inclusive.
 */
export function windowOf(asOf: Date, months: number): { from: string; to: string } {
  const year = asOf.getUTCFullYear();
  const month = asOf.getUTCMonth() - months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const from = new Date(Date.UTC(year, month, Math.min(asOf.getUTCDate(), lastDay)));
  return { from: from.toISOString(), to: asOf.toISOString() };
}

/** Up to CLOSEST sales: same year first, then nearest odometer to `odometer` (when known; unknown ones after), then newest sale, then auction and lot id. */
export function closestSales(sales: readonly ComparableSale[], year: number, odometer: number | null): ComparableSale[] {
  const distance = (sale: ComparableSale) => (odometer === null ? 0 : sale.odometer === null ? Number.POSITIVE_INFINITY : Math.abs(sale.odometer - odometer));
  const before = (a: ComparableSale, b: ComparableSale) => {
    const sameYear = Number(b.year === year) - Number(a.year === year);
    if (sameYear !== 0) return sameYear;
    const nearer = distance(a) - distance(b);
    if (nearer !== 0 && !Number.isNaN(nearer)) return nearer;
    return compareLotsNewestFirst({ sale_date: a.saleDate, auction: a.auction, lot_id: a.lotId }, { sale_date: b.saleDate, auction: b.auction, lot_id: b.lotId });
  };
  // The first CLOSEST kept in order as the sales go by (a sale past the last kept costs one
  // comparison): sorting every comparable to keep ten cost n log n comparisons.
  const kept: ComparableSale[] = [];
  for (const sale of sales) {
    if (kept.length === CLOSEST && before(sale, kept[CLOSEST - 1]!) >= 0) continue;
    let at = kept.length;
    while (at > 0 && before(sale, kept[at - 1]!) < 0) at--;
    kept.splice(at, 0, sale);
    if (kept.length > CLOSEST) kept.pop();
  }
  return kept;
}

/**
 * Sales by damage (its key), most first, then by name; a group is named by its most frequent
 * spelling. Sales without a damage are in no group.
 */
function byDamage(sales: readonly ComparableSale[]): MarketValue['by_damage'] {
  const groups = new Map<string, { prices: number[]; names: Map<string, number> }>();
  for (const sale of sales) {
    if (sale.damageKey === null || sale.primaryDamage === null) continue;
    let group = groups.get(sale.damageKey);
    if (group === undefined) groups.set(sale.damageKey, (group = { prices: [], names: new Map() }));
    group.prices.push(sale.price);
    group.names.set(sale.primaryDamage, (group.names.get(sale.primaryDamage) ?? 0) + 1);
  }
  return [...groups.values()]
    .map((group) => ({ primary_damage: mostFrequent(group.names), count: group.prices.length, median_price: medianPrice(group.prices)! }))
    .sort((a, b) => b.count - a.count || (a.primary_damage < b.primary_damage ? -1 : a.primary_damage > b.primary_damage ? 1 : 0));
}

/** Sales by UTC month of their sale date, oldest first; months without sales are absent. */
function byMonth(sales: readonly ComparableSale[]): MarketValue['by_month'] {
  const months = new Map<string, number[]>();
  for (const sale of sales) {
    // Stored sale dates are ISO date-times in UTC (ingest/normalise-lot.ts): the month is their first seven characters.
    const month = sale.saleDate.slice(0, 7);
    const prices = months.get(month);
    if (prices === undefined) months.set(month, [sale.price]);
    else prices.push(sale.price);
  }
  return [...months]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([month, prices]) => ({ month, count: prices.length, median_price: medianPrice(prices)! }));
}

function mostFrequent(counts: Map<string, number>): string {
  let best: [string, number] | null = null;
  for (const entry of counts) if (best === null || entry[1] > best[1] || (entry[1] === best[1] && entry[0] < best[0])) best = entry;
  return best![0];
}
