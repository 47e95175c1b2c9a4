import { marketKey } from '../domain/market-key.ts';
import { marketGroupKey, monthsBetween, monthStart, nextMonthStart } from '../domain/market-group.ts';
import type { LotRef } from '../domain/lot-ref.ts';
import type { ComparableColumns, ComparablesQuery } from '../storage/repositories/market-repository.ts';
import type { Repositories } from '../storage/repositories/index.ts';

/**
 * A market value's comparables from memory (issue 24; docs/decisions.md, "The catalogue and the
 * market at scale"): each market group (domain/market-group.ts: make key, model key, year, UTC
 * month of sale) kept as packed columns in the order of lots_market_idx, built on first use from
 * one range of that index per run of missing months of a year, and rebuilt when its generation
 * (0026), which every import batch bumps in its own transaction, has moved. A call reads its
 * groups' generations in one statement, then filters its edge months by the window's exact
 * bounds, drops the vehicle's own lots and, when asked, other damages. The cache is bounded by
 * bytes, least recently used first out.
 */

/** One group's comparables, one typed array a column, in the order of lots_market_idx. */
interface Group {
  key: string;
  epoch: number;
  generation: number;
  bytes: number;
  saleMs: Float64Array;
  prices: Float64Array;
  /** NaN: none. */
  retail: Float64Array;
  /** NaN: none. */
  odometers: Float64Array;
  /** The damage's spelling id (ComparablesCache.spellings), -1: none. */
  damages: Int32Array;
  auctions: Int32Array;
  lotIds: Float64Array;
}

/** The comparables of one market value as packed columns, the n-th entry of each the n-th sale's, `count` of them. */
export interface PackedSales {
  count: number;
  prices: Float64Array;
  /** NaN: none. */
  retail: Float64Array;
  /** NaN: none. */
  odometers: Float64Array;
  /** Spelling ids (`spellings`), -1: none. */
  damages: Int32Array;
  saleMs: Float64Array;
  years: Int32Array;
  /** Auction ids (`auctionNames`). */
  auctions: Int32Array;
  lotIds: Float64Array;
  /** The index in `months` of each sale's month. */
  monthOf: Int32Array;
  months: readonly string[];
  spellings: readonly string[];
  /** marketKey of each spelling. */
  spellingKeys: readonly (string | null)[];
  auctionNames: readonly string[];
}

/** The comparables' query, with the vehicle's own lots named instead of its VIN. */
export interface PackedQuery extends Omit<ComparablesQuery, 'excludeVin'> {
  /** The vehicle's own lots, which are not its comparables. */
  exclude: readonly LotRef[];
}

/** Bytes a group costs besides its columns (the object, its key, the map's entry). */
const GROUP_OVERHEAD = 400;
/** Bytes a comparable costs: 5 float64 columns and 2 int32 ones. */
const BYTES_PER_SALE = 5 * 8 + 2 * 4;
/** Names (damage spellings, auctions) interned before the cache starts over: the feeds write a few hundred. */
const MAX_NAMES = 100_000;

export class ComparablesCache {
  private readonly groups = new Map<string, Group>();
  private bytes = 0;
  private spellingIds = new Map<string, number>();
  private spellings: string[] = [];
  private spellingKeys: (string | null)[] = [];
  private auctionIds = new Map<string, number>();
  private auctionNames: string[] = [];
  /** Groups built and evicted since the start (tests, metrics). */
  readonly counts = { built: 0, evicted: 0 };

  constructor(
    private readonly repos: Repositories,
    private readonly maxBytes: number,
  ) {}

  /** The bytes the cached groups take, as the bound counts them. */
  get size(): number {
    return this.bytes;
  }

  async sales(query: PackedQuery): Promise<PackedSales> {
    const months = monthsBetween(query.from, query.to);
    const { epoch, generations } = await this.repos.market.groupGenerations(query.makeKey, query.modelKey, query.yearMin, query.yearMax, months[0]!, months.at(-1)!);
    if (this.spellings.length + this.auctionNames.length > MAX_NAMES) this.clear();
    const chosen: { group: Group; year: number; month: number }[] = [];
    const keyOf = (year: number, month: string) => marketGroupKey({ makeKey: query.makeKey, modelKey: query.modelKey, year, month });
    // A group without a row of its own is at generation 0 (groupGenerations).
    const generationOf = (year: number, month: string) => generations.get(`${year}:${month}`) ?? 0;
    for (let year = query.yearMin; year <= query.yearMax; year++) {
      const found: (Group | undefined)[] = months.map((month) => {
        const key = keyOf(year, month);
        const group = this.groups.get(key);
        if (group === undefined || group.epoch !== epoch || group.generation !== generationOf(year, month)) return undefined;
        // Most recently used last: the map's order is the eviction order.
        this.groups.delete(key);
        this.groups.set(key, group);
        return group;
      });
      for (let first = 0; first < months.length; first++) {
        if (found[first] !== undefined) continue;
        let last = first;
        while (last + 1 < months.length && found[last + 1] === undefined) last++;
        // One range of the index for the run of months; its sales come by sale date, so month by month.
        const sales = await this.repos.market.groupSales(query.makeKey, query.modelKey, year, monthStart(months[first]!), nextMonthStart(months[last]!));
        let at = 0;
        for (let m = first; m <= last; m++) {
          const month = months[m]!;
          let end = at;
          while (end < sales.saleDates.length && sales.saleDates[end]!.startsWith(month)) end++;
          found[m] = this.store(this.build(keyOf(year, month), epoch, generationOf(year, month), sales, at, end));
          at = end;
        }
        first = last;
      }
      for (let m = 0; m < months.length; m++) chosen.push({ group: found[m]!, year, month: m });
    }
    return this.assemble(chosen, months, query);
  }

  private build(key: string, epoch: number, generation: number, sales: ComparableColumns, start: number, end: number): Group {
    const n = end - start;
    const group: Group = {
      key, epoch, generation, bytes: GROUP_OVERHEAD + n * BYTES_PER_SALE,
      saleMs: new Float64Array(n), prices: new Float64Array(n), retail: new Float64Array(n), odometers: new Float64Array(n),
      damages: new Int32Array(n), auctions: new Int32Array(n), lotIds: new Float64Array(n),
    };
    for (let i = 0; i < n; i++) {
      const at = start + i;
      group.saleMs[i] = Date.parse(sales.saleDates[at]!);
      group.prices[i] = sales.prices[at]!;
      group.retail[i] = sales.retailValues[at] ?? Number.NaN;
      group.odometers[i] = sales.odometers[at] ?? Number.NaN;
      const damage = sales.damages[at] ?? null;
      group.damages[i] = damage === null ? -1 : this.spellingId(damage);
      group.auctions[i] = this.auctionId(sales.auctions[at]!);
      group.lotIds[i] = sales.lotIds[at]!;
    }
    this.counts.built++;
    return group;
  }

  private store(group: Group): Group {
    const previous = this.groups.get(group.key);
    if (previous !== undefined) {
      this.bytes -= previous.bytes;
      this.groups.delete(group.key);
    }
    this.groups.set(group.key, group);
    this.bytes += group.bytes;
    for (const [key, oldest] of this.groups) {
      if (this.bytes <= this.maxBytes) break;
      this.groups.delete(key);
      this.bytes -= oldest.bytes;
      this.counts.evicted++;
    }
    return group;
  }

  private clear(): void {
    this.groups.clear();
    this.bytes = 0;
    this.spellingIds = new Map();
    this.spellings = [];
    this.spellingKeys = [];
    this.auctionIds = new Map();
    this.auctionNames = [];
  }

  private spellingId(name: string): number {
    let id = this.spellingIds.get(name);
    if (id === undefined) {
      id = this.spellings.length;
      this.spellings.push(name);
      this.spellingKeys.push(marketKey(name));
      this.spellingIds.set(name, id);
    }
    return id;
  }

  private auctionId(name: string): number {
    let id = this.auctionIds.get(name);
    if (id === undefined) {
      id = this.auctionNames.length;
      this.auctionNames.push(name);
      this.auctionIds.set(name, id);
    }
    return id;
  }

  /** The call's sales from its groups, in their order (year, then month, then the index's): the order comparables() reads them in. */
  private assemble(chosen: readonly { group: Group; year: number; month: number }[], months: readonly string[], query: PackedQuery): PackedSales {
    let total = 0;
    for (const { group } of chosen) total += group.prices.length;
    const out: PackedSales = {
      count: 0,
      prices: new Float64Array(total), retail: new Float64Array(total), odometers: new Float64Array(total), damages: new Int32Array(total),
      saleMs: new Float64Array(total), years: new Int32Array(total), auctions: new Int32Array(total), lotIds: new Float64Array(total),
      monthOf: new Int32Array(total), months, spellings: this.spellings, spellingKeys: this.spellingKeys, auctionNames: this.auctionNames,
    };
    const fromMs = Date.parse(query.from);
    const toMs = Date.parse(query.to);
    let wanted: Uint8Array | null = null;
    if (query.damageKey !== null) {
      wanted = new Uint8Array(this.spellings.length);
      for (let id = 0; id < this.spellings.length; id++) wanted[id] = Number(this.spellingKeys[id] === query.damageKey);
    }
    const ownLotIds = new Set(query.exclude.map((lot) => lot.lotId));
    const own = query.exclude.map((lot) => ({ auction: this.auctionIds.get(lot.auction) ?? -1, lotId: lot.lotId }));
    let n = 0;
    for (const { group, year, month } of chosen) {
      const edge = month === 0 || month === months.length - 1;
      const { saleMs, prices, retail, odometers, damages, auctions, lotIds } = group;
      for (let i = 0; i < prices.length; i++) {
        if (edge && (saleMs[i]! < fromMs || saleMs[i]! > toMs)) continue;
        if (wanted !== null && (damages[i]! < 0 || wanted[damages[i]!] !== 1)) continue;
        if (ownLotIds.size > 0 && ownLotIds.has(lotIds[i]!) && own.some((lot) => lot.auction === auctions[i] && lot.lotId === lotIds[i])) continue;
        out.prices[n] = prices[i]!;
        out.retail[n] = retail[i]!;
        out.odometers[n] = odometers[i]!;
        out.damages[n] = damages[i]!;
        out.saleMs[n] = saleMs[i]!;
        out.years[n] = year;
        out.auctions[n] = auctions[i]!;
        out.lotIds[n] = lotIds[i]!;
        out.monthOf[n] = month;
        n++;
      }
    }
    out.count = n;
    return out;
  }
}
