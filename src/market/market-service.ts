import { compareLotsNewestFirst, type Lot } from '../domain/lot.ts';
import type { LotRef } from '../domain/lot-ref.ts';
import type { MarketOptions, MarketSubject, MarketValue } from '../domain/market.ts';
import { marketKey } from '../domain/market-key.ts';
import type { ComparableColumns, ComparablesQuery } from '../storage/repositories/market-repository.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { medianOfSorted, medianPrice, priceFigures, priceFiguresOfSorted, shareOfRetailMedian, shareOfRetailMedianOf } from './statistics.ts';
import { ComparablesCache, type PackedSales } from './comparables-cache.ts';

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
  /**
   * The most bytes the comparables kept in memory may take (comparables-cache.ts; MARKET_CACHE_MAX_MB);
   * 0: none kept, every call reads its comparables from the database.
   */
  cacheMaxBytes?: number;
}

/** The cache's bound when none is given (config.ts's default). */
export const DEFAULT_MARKET_CACHE_BYTES = 256 * 1024 * 1024;

/** How many of the closest sales a market value lists (contract). */
export const CLOSEST = 10;

/** The vehicle a market value is for, and its latest known odometer (null: none known), which orders the closest sales. */
interface Vehicle {
  make: string;
  model: string;
  year: number;
  odometer: number | null;
  vin: string | null;
  /** The lots of the VIN, which are not its comparables. */
  own: readonly Lot[];
}

/**
 * What similar cars sold for (contract, "Market value"): the comparables of a vehicle are the sold
 * lots (a sale date in the window, a price above 0) of its make and model (their keys,
 * domain/market-key.ts) and a year within one of its own, of other VINs, narrowed to a damage when
 * asked. The figures are statistics.ts's. The API answers it for now, a report page for its time.
 */
export class MarketService {
  /** Null when the options keep none. */
  readonly cache: ComparablesCache | null;

  constructor(private readonly options: MarketServiceOptions) {
    const bytes = options.cacheMaxBytes ?? DEFAULT_MARKET_CACHE_BYTES;
    this.cache = bytes > 0 ? new ComparablesCache(options.repos, bytes) : null;
  }

  /** Null when the vehicle's make, model and year are known neither from its stored lots nor from its VIN. */
  async valueFor(subject: MarketSubject, options: MarketOptions): Promise<MarketValue | null> {
    const vehicle = await this.vehicleOf(subject);
    if (vehicle === null) return null;
    const window = windowOf(options.asOf, options.months);
    const makeKey = marketKey(vehicle.make);
    const modelKey = marketKey(vehicle.model);
    const damageKey = options.primaryDamage === null ? null : marketKey(options.primaryDamage);
    const query: ComparablesQuery | null =
      makeKey === null || modelKey === null || (options.primaryDamage !== null && damageKey === null)
        ? null
        : { makeKey, modelKey, yearMin: vehicle.year - 1, yearMax: vehicle.year + 1, from: window.from, to: window.to, damageKey, excludeVin: vehicle.vin };
    const figures =
      query !== null && this.cache !== null
        ? packedValue(await this.cache.sales({ ...query, exclude: vehicle.own.map((lot) => ({ auction: lot.auction, lotId: lot.lot_id })) }), vehicle)
        : columnsValue(query === null ? NO_SALES : await this.options.repos.market.comparables(query), vehicle);
    return {
      vehicle: { make: vehicle.make, model: vehicle.model, year: vehicle.year },
      window,
      comparables: figures.comparables,
      by_damage: figures.by_damage,
      by_month: figures.by_month,
      closest: await this.lotsOf(figures.closest),
    };
  }

  /**
   * By VIN: each of make, model and year from the newest of its stored lots that has it, the rest
   * from decoding the VIN; by make, model and year: those, trimmed.
   */
  private async vehicleOf(subject: MarketSubject): Promise<Vehicle | null> {
    if (subject.kind === 'vehicle') return { make: subject.make.trim(), model: subject.model.trim(), year: subject.year, odometer: null, vin: null, own: [] };
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
    return { make, model, year, odometer: newest('odometer'), vin: subject.vin, own: lots };
  }

  /** The lots of these keys, in their order, read by key. */
  private async lotsOf(keys: readonly LotRef[]): Promise<Lot[]> {
    if (keys.length === 0) return [];
    const byKey = new Map((await this.options.repos.market.lotsByKeys(keys)).map((lot) => [`${lot.auction}/${lot.lot_id}`, lot]));
    const lots = keys.flatMap((key) => byKey.get(`${key.auction}/${key.lotId}`) ?? []);
    return this.options.resolveImages ? this.options.resolveImages(lots) : lots;
  }
}

const NO_SALES: ComparableColumns = { prices: [], retailValues: [], damages: [], saleDates: [], years: [], odometers: [], auctions: [], lotIds: [] };

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

/** A market value's figures and the keys of its closest sales, in their order, before the lots are read. */
type Figures = Pick<MarketValue, 'comparables' | 'by_damage' | 'by_month'> & { closest: LotRef[] };

/** The figures of the comparables read from the database (repos.market.comparables). */
function columnsValue(sales: ComparableColumns, vehicle: Vehicle): Figures {
  const { prices, retailValues } = sales;
  return {
    comparables: {
      count: prices.length,
      price: priceFigures(prices),
      share_of_retail_value: { median: shareOfRetailMedian(prices.map((price, i) => ({ price, retail: retailValues[i] ?? null }))) },
    },
    by_damage: byDamage(sales),
    by_month: byMonth(sales),
    closest: closestSales(sales, vehicle.year, vehicle.odometer).map((i) => ({ auction: sales.auctions[i]!, lotId: sales.lotIds[i]! })),
  };
}

/** The same figures of the comparables kept in memory (comparables-cache.ts). */
function packedValue(packed: PackedSales, vehicle: Vehicle): Figures {
  const figures = packedFigures(packed);
  return {
    comparables: {
      count: packed.count,
      price: figures.price,
      share_of_retail_value: { median: shareOfRetailMedianOf(packed.prices, packed.retail, packed.count) },
    },
    by_damage: figures.byDamage,
    by_month: figures.byMonth,
    closest: closestPacked(packed, vehicle.year, vehicle.odometer).map((i) => ({ auction: packed.auctionNames[packed.auctions[i]!]!, lotId: packed.lotIds[i]! })),
  };
}

/**
 * The indexes of up to CLOSEST sales, in order: same year first, then nearest odometer to
 * `odometer` (when known; unknown ones after), then newest sale, then auction and lot id.
 */
export function closestSales(sales: ComparableColumns, year: number, odometer: number | null): number[] {
  const { years, odometers, saleDates, auctions, lotIds } = sales;
  const distance = (i: number) => {
    const at = odometers[i] ?? null;
    return odometer === null ? 0 : at === null ? Number.POSITIVE_INFINITY : Math.abs(at - odometer);
  };
  const before = (a: number, b: number) => {
    const sameYear = Number(years[b] === year) - Number(years[a] === year);
    if (sameYear !== 0) return sameYear;
    const nearer = distance(a) - distance(b);
    if (nearer !== 0 && !Number.isNaN(nearer)) return nearer;
    return compareLotsNewestFirst({ sale_date: saleDates[a]!, auction: auctions[a]!, lot_id: lotIds[a]! }, { sale_date: saleDates[b]!, auction: auctions[b]!, lot_id: lotIds[b]! });
  };
  return firstInOrder(saleDates.length, before);
}

/**
 * The first CLOSEST of `count` sales in the order `before` gives, kept in order as the sales go by
 * (a sale past the last kept costs one comparison): sorting every comparable to keep ten cost
 * n log n comparisons.
 */
function firstInOrder(count: number, before: (a: number, b: number) => number): number[] {
  const kept: number[] = [];
  for (let sale = 0; sale < count; sale++) {
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
function byDamage({ prices, damages }: ComparableColumns): MarketValue['by_damage'] {
  // By spelling first, one lookup a sale (a spelling has one key), then the spellings by key: a
  // damage has a handful of spellings and the sales thousands.
  const spellings = new Map<string, { key: string; prices: number[] }>();
  for (let i = 0; i < prices.length; i++) {
    const name = damages[i] ?? null;
    if (name === null) continue;
    const spelling = spellings.get(name);
    if (spelling !== undefined) spelling.prices.push(prices[i]!);
    else {
      // The key every upsert stores beside the damage (storage/lot-rows.ts).
      const key = marketKey(name);
      if (key !== null) spellings.set(name, { key, prices: [prices[i]!] });
    }
  }
  const groups = new Map<string, { prices: number[]; names: Map<string, number> }>();
  for (const [name, spelling] of spellings) {
    const group = groups.get(spelling.key);
    if (group === undefined) groups.set(spelling.key, { prices: spelling.prices, names: new Map([[name, spelling.prices.length]]) });
    else {
      group.prices.push(...spelling.prices);
      group.names.set(name, spelling.prices.length);
    }
  }
  return damageRows(groups.values(), medianPrice);
}

/** Sales by UTC month of their sale date, oldest first; months without sales are absent. */
function byMonth({ prices, saleDates }: ComparableColumns): MarketValue['by_month'] {
  const byName = new Map<string, number[]>();
  for (let i = 0; i < prices.length; i++) {
    // Stored sale dates are ISO date-times in UTC (ingest/normalise-lot.ts): the month is their first seven characters.
    const month = saleDates[i]!.slice(0, 7);
    const group = byName.get(month);
    if (group === undefined) byName.set(month, [prices[i]!]);
    else group.push(prices[i]!);
  }
  return [...byName]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([month, group]) => ({ month, count: group.length, median_price: medianPrice(group)! }));
}

/**
 * The by_damage rows of the damages' groups: each named by its most frequent spelling, most sales
 * first, then by name. `median` takes a group's prices as they are.
 */
function damageRows(groups: Iterable<{ prices: number[]; names: Map<string, number> }>, median: (prices: number[]) => number | null): MarketValue['by_damage'] {
  return [...groups]
    .map((group) => ({ primary_damage: mostFrequent(group.names), count: group.prices.length, median_price: median(group.prices)! }))
    .sort((a, b) => b.count - a.count || (a.primary_damage < b.primary_damage ? -1 : a.primary_damage > b.primary_damage ? 1 : 0));
}

function mostFrequent(counts: Map<string, number>): string {
  let best: [string, number] | null = null;
  for (const entry of counts) if (best === null || entry[1] > best[1] || (entry[1] === best[1] && entry[0] < best[0])) best = entry;
  return best![0];
}

/** closestSales over packed comparables: the same order, the sale dates compared as instants (stored ones are canonical ISO, whose order is their instants'). */
function closestPacked(sales: PackedSales, year: number, odometer: number | null): number[] {
  const { years, odometers, saleMs, auctions, auctionNames, lotIds } = sales;
  const distance = (i: number) => {
    const at = odometers[i]!;
    return odometer === null ? 0 : Number.isNaN(at) ? Number.POSITIVE_INFINITY : Math.abs(at - odometer);
  };
  const before = (a: number, b: number) => {
    const sameYear = Number(years[b] === year) - Number(years[a] === year);
    if (sameYear !== 0) return sameYear;
    const nearer = distance(a) - distance(b);
    if (nearer !== 0 && !Number.isNaN(nearer)) return nearer;
    // compareLotsNewestFirst: newest sale first, then auction ascending, then lot id descending.
    if (saleMs[a] !== saleMs[b]) return saleMs[a]! < saleMs[b]! ? 1 : -1;
    if (auctions[a] !== auctions[b]) return auctionNames[auctions[a]!]! < auctionNames[auctions[b]!]! ? -1 : 1;
    return lotIds[b]! - lotIds[a]!;
  };
  return firstInOrder(sales.count, before);
}

/** Indexes below this fit beside a whole-dollar price in one double (priceOrder). */
const INDEX_SPAN = 2 ** 21;
const MAX_PACKED_PRICE = 2 ** 31;

/**
 * The sales' indexes in price order, equal prices in index order. Whole-dollar prices below 2^31
 * of fewer than 2^21 sales: each price and index packed into one double (price x 2^21 + index,
 * exact below 2^52) and sorted numerically, without a comparator called per comparison; any other
 * prices by a comparator.
 */
function priceOrder(prices: Float64Array, n: number): ArrayLike<number> {
  let fits = n < INDEX_SPAN;
  for (let i = 0; fits && i < n; i++) fits = Number.isInteger(prices[i]) && prices[i]! < MAX_PACKED_PRICE;
  if (!fits) return Array.from({ length: n }, (_, i) => i).sort((a, b) => prices[a]! - prices[b]! || a - b);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = prices[i]! * INDEX_SPAN + i;
  keys.sort();
  for (let j = 0; j < n; j++) keys[j] = keys[j]! % INDEX_SPAN;
  return keys;
}

/**
 * The price figures, by_damage and by_month of packed comparables from one sort: the sales walked
 * in price order (priceOrder) into their damage's and month's lists, which come out sorted, so
 * their medians need no sort of their own (the same figures as priceFigures and medianPrice, which
 * sort each list).
 */
function packedFigures(sales: PackedSales): { price: MarketValue['comparables']['price']; byDamage: MarketValue['by_damage']; byMonth: MarketValue['by_month'] } {
  const n = sales.count;
  const { prices, damages, spellings, spellingKeys, monthOf, months } = sales;
  const order = priceOrder(prices, n);
  const sorted = new Float64Array(n);
  const byKey = new Map<string, { prices: number[]; names: Map<string, number> }>();
  const byMonth: number[][] = months.map(() => []);
  for (let j = 0; j < n; j++) {
    const i = order[j]!;
    const price = prices[i]!;
    sorted[j] = price;
    byMonth[monthOf[i]!]!.push(price);
    const id = damages[i]!;
    if (id < 0) continue;
    const key = spellingKeys[id] ?? null;
    if (key === null) continue;
    const name = spellings[id]!;
    const group = byKey.get(key);
    if (group === undefined) byKey.set(key, { prices: [price], names: new Map([[name, 1]]) });
    else {
      group.prices.push(price);
      group.names.set(name, (group.names.get(name) ?? 0) + 1);
    }
  }
  return {
    price: priceFiguresOfSorted(sorted),
    byDamage: damageRows(byKey.values(), medianOfSorted),
    byMonth: months.flatMap((month, m) => (byMonth[m]!.length === 0 ? [] : [{ month, count: byMonth[m]!.length, median_price: medianOfSorted(byMonth[m]!)! }])),
  };
}
