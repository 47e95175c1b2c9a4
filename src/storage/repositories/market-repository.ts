import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { Db } from '../database.ts';
import type { Database, LotRow } from '../schema.ts';
import type { Lot, LotJson } from '../../domain/lot.ts';
import type { CatalogueFilter, CataloguePosition, CatalogueSort } from '../../domain/catalogue.ts';
import { COMPARABLE_COLUMNS, lotFromRow, type ComparableLists } from '../lot-rows.ts';
import { PreparedQuery } from '../prepared-query.ts';
import { SALE_SORT_KEY } from '../migrations/0018-market.ts';
import { MARKET_COLUMNS } from '../migrations/0023-catalogue-order-indexes.ts';
import { EPOCH_GROUP } from './market-groups.ts';

/**
 * What a market value reads of its comparables (contract, "Market value"), one list per column,
 * the n-th entry of each list being the n-th comparable's: for the figures its price (above 0),
 * retail value, damage as the feed spelled it (its key is marketKey of it) and sale date (ISO,
 * UTC); to rank the closest sales also its year, odometer and key.
 */
export interface ComparableColumns {
  prices: number[];
  retailValues: (number | null)[];
  damages: (string | null)[];
  saleDates: string[];
  years: number[];
  odometers: (number | null)[];
  auctions: string[];
  lotIds: number[];
}

/** The comparables' columns from the JSON lists a dialect's comparablesJson writes, one list a column. */
function columnsOf(json: string): ComparableColumns {
  const [prices, retailValues, damages, saleDates, years, odometers, auctions, lotIds] = JSON.parse(json) as ComparableLists;
  return { prices, retailValues, damages, saleDates, years, odometers, auctions, lotIds };
}

export interface ComparablesQuery {
  makeKey: string;
  modelKey: string;
  yearMin: number;
  yearMax: number;
  /** ISO date-times, inclusive. */
  from: string;
  to: string;
  damageKey: string | null;
  /** The vehicle's own VIN, whose sales are not its comparables. */
  excludeVin: string | null;
}

/**
 * How a sort orders lots: the value it sorts on (a missing sale date sorts as the latest, so first
 * in `sale_date_desc` and last in `sale_date_asc`; a missing price last in both price orders) and
 * its direction. The sale-date expression is the one lots_sale_*_idx are built on (0018), written
 * the same so that both databases read a page in index order.
 */
const ORDERS: Record<CatalogueSort, { value: ReturnType<typeof sql<string | number>>; direction: 'asc' | 'desc' }> = {
  sale_date_desc: { value: sql<string>`${SALE_SORT_KEY}`, direction: 'desc' },
  sale_date_asc: { value: sql<string>`${SALE_SORT_KEY}`, direction: 'asc' },
  // Above any price a lot can carry (domain/lot.ts MAX_INTEGER), and below any.
  price_asc: { value: sql<number>`coalesce("price", 2147483648)`, direction: 'asc' },
  price_desc: { value: sql<number>`coalesce("price", -1)`, direction: 'desc' },
};

/** The greatest VIN character (no I, O, Q): a masked VIN's known characters followed by these are its last match. */
const LAST_VIN_CHAR = 'Z';
const FIRST_VIN_CHAR = '0';

/**
 * The catalogue's and the market's reads of the lots. The same SQL runs on both databases: the
 * keys and indexes of 0018 and 0023 make every sale-date page without a VIN a range of one index
 * read in order from its cursor (by make, or make and model with their years checked in the
 * index's entries: lots_make_sale_*_idx), with no part the dialects would write differently.
 */
export class MarketRepository {
  constructor(private readonly db: Db) {}

  /** A catalogue page's statement, built and compiled once per shape of its query (pageShape). */
  private readonly pages = new Map<string, PreparedQuery<PageValues, CataloguePageRow>>();

  /**
   * One page of the catalogue in its order, after `after` when given (keyset paging: a lot stored
   * since the last page takes its place in the order and is neither repeated nor makes another be
   * skipped), each lot as its JSON text (the dialect's lotJson) with its position for the next cursor.
   */
  async cataloguePage(filter: CatalogueFilter, sort: CatalogueSort, now: string, after: CataloguePosition | null, limit: number): Promise<{ lot: LotJson; position: CataloguePosition }[]> {
    const page = pageShape(filter, sort, now, after, limit);
    let statement = this.pages.get(page.key);
    if (statement === undefined) {
      // The shapes a client can ask for are many (any set of filters): the cache is bounded as marketKey's is.
      if (this.pages.size >= MAX_PAGE_SHAPES) this.pages.clear();
      statement = new PreparedQuery(this.db.kysely, Object.keys(page.values), (values: PageValues) => this.pageStatement(page, values));
      this.pages.set(page.key, statement);
    }
    // Kept with its entry here (runKept), not by its SQL text for the life of the process as run() keeps the search's.
    const rows = await statement.runKept(this.db, page.values);
    return rows.map((row) => ({
      lot: row.lot as LotJson,
      // PostgreSQL answers the price's coalesce as bigint, which its driver gives as text.
      position: { value: sort.startsWith('price') ? Number(row.sort_value) : String(row.sort_value), auction: row.auction, lotId: Number(row.lot_id) },
    }));
  }

  /** The statement of a catalogue page, apart so that its plan can be checked (test/storage/catalogue-plans.test.ts). */
  catalogueQuery(filter: CatalogueFilter, sort: CatalogueSort, now: string, after: CataloguePosition | null, limit: number) {
    const page = pageShape(filter, sort, now, after, limit);
    return this.pageStatement(page, page.values);
  }

  /** A page's statement over `values`: the page's own, or PreparedQuery's placeholders of them. */
  private pageStatement(page: PageShape, values: PageValues) {
    const order = ORDERS[page.sort];
    return this.db.kysely
      .selectFrom('lots')
      .select([this.db.dialect.lotJson.as('lot'), order.value.as('sort_value'), 'auction', 'lot_id'])
      .where((eb) => eb.and([...filterConditions(eb, page, values, this.db.dialect.catalogueYear), ...(values.afterValue !== undefined ? afterConditions(eb, order, values) : [])]))
      .orderBy(order.value, order.direction)
      .orderBy('auction', 'asc')
      .orderBy('lot_id', 'desc')
      .limit(values.limit as number);
  }

  /** The statements of comparables(), compiled once per shape (comparablesShape). */
  private readonly comparableStatements = new Map<string, PreparedQuery<ComparableValues, { sales: string }>>();
  /** The statements of lotsByKeys(), compiled once per count of keys. */
  private readonly byKeys = new Map<number, PreparedQuery<Record<string, string | number>, LotRow>>();

  /**
   * What the figures read of the sold lots of one make and model, years and sale dates in range,
   * priced above 0: a range of lots_market_idx per year, which covers them (0023), aggregated by
   * the database into one JSON text (the dialect's comparablesJson).
   */
  async comparables(query: ComparablesQuery): Promise<ComparableColumns> {
    const shape = comparablesShape(query);
    let statement = this.comparableStatements.get(shape.key);
    if (statement === undefined) {
      statement = new PreparedQuery(this.db.kysely, Object.keys(shape.values), (values: ComparableValues) => this.comparablesStatement(shape, values));
      this.comparableStatements.set(shape.key, statement);
    }
    const [row] = await statement.run(this.db, shape.values);
    return columnsOf(row!.sales);
  }

  /** The statement of comparables(), apart so that its plan can be checked (test/storage/catalogue-plans.test.ts). */
  comparablesQuery(query: ComparablesQuery) {
    const shape = comparablesShape(query);
    return this.comparablesStatement(shape, shape.values);
  }

  private comparablesStatement(shape: ComparablesShape, values: ComparableValues) {
    return comparableRange(this.db.kysely.selectFrom('lots'), shape, values).select(this.db.dialect.comparablesJson.as('sales'));
  }

  /** The statements of groupGenerations(), compiled once per count of years. */
  private readonly generationStatements = new Map<number, PreparedQuery<ComparableValues, { year: number; month: string; generation: number | string }>>();
  private groupSalesStatement: PreparedQuery<ComparableValues, { sales: string }> | null = null;

  /**
   * The generations (0026) of one make and model's groups in these years and months, by
   * `year:month` (a group without a row is at 0), and the global epoch: one range of the primary
   * key per year, and a probe of the epoch's row.
   */
  async groupGenerations(makeKey: string, modelKey: string, yearMin: number, yearMax: number, fromMonth: string, toMonth: string): Promise<{ epoch: number; generations: Map<string, number> }> {
    const years = yearMax - yearMin + 1;
    let statement = this.generationStatements.get(years);
    if (statement === undefined) {
      const names = ['makeKey', 'modelKey', 'fromMonth', 'toMonth', ...Array.from({ length: years }, (_, i) => `year${i}`)];
      statement = new PreparedQuery(this.db.kysely, names, (values: ComparableValues) =>
        this.db.kysely
          .selectFrom('market_groups')
          .select(['year', 'month', 'generation'])
          .where('make_key', '=', values.makeKey as string)
          .where('model_key', '=', values.modelKey as string)
          .where('year', 'in', Array.from({ length: years }, (_, i) => values[`year${i}`] as number))
          .where('month', '>=', values.fromMonth as string)
          .where('month', '<=', values.toMonth as string)
          .unionAll((eb) =>
            eb
              .selectFrom('market_groups')
              .select(['year', 'month', 'generation'])
              .where('make_key', '=', EPOCH_GROUP.makeKey)
              .where('model_key', '=', EPOCH_GROUP.modelKey)
              .where('year', '=', EPOCH_GROUP.year)
              .where('month', '=', EPOCH_GROUP.month),
          ),
      );
      this.generationStatements.set(years, statement);
    }
    const values: ComparableValues = { makeKey, modelKey, fromMonth, toMonth };
    for (let i = 0; i < years; i++) values[`year${i}`] = yearMin + i;
    let epoch = 0;
    const generations = new Map<string, number>();
    for (const row of await statement.run(this.db, values)) {
      // PostgreSQL gives a bigint as text.
      if (row.month === EPOCH_GROUP.month) epoch = Number(row.generation);
      else generations.set(`${row.year}:${row.month}`, Number(row.generation));
    }
    return { epoch, generations };
  }

  /**
   * The comparables of one make, model and year sold from `from` (inclusive) to `to` (exclusive),
   * in the order of lots_market_idx (by sale date, then its other columns), which covers them: what
   * a market value's cache keeps of its groups (market/comparables-cache.ts), the same rows and
   * order comparables() reads for this range.
   */
  async groupSales(makeKey: string, modelKey: string, year: number, from: string, to: string): Promise<ComparableColumns> {
    this.groupSalesStatement ??= new PreparedQuery(this.db.kysely, ['makeKey', 'modelKey', 'year', 'from', 'to'], (values: ComparableValues) =>
      this.db.kysely
        .selectFrom((eb) =>
          eb
            .selectFrom('lots')
            .select([...COMPARABLE_COLUMNS])
            .where('make_key', '=', values.makeKey as string)
            .where('model_key', '=', values.modelKey as string)
            .where('year', '=', values.year as number)
            .where('sale_date', '>=', values.from as string)
            .where('sale_date', '<', values.to as string)
            .where('price', '>', 0)
            .$call((select) => MARKET_COLUMNS.reduce((ordered, column) => ordered.orderBy(column), select))
            .as('sales'),
        )
        .select(this.db.dialect.comparablesJson.as('sales')),
    );
    const [row] = await this.groupSalesStatement.run(this.db, { makeKey, modelKey, year, from, to });
    return columnsOf(row!.sales);
  }

  /**
   * The lots named, in any order: a probe of the primary key each (a handful, a market value's
   * closest sales), by a statement compiled once per count of keys (building it was most of the read).
   */
  async lotsByKeys(keys: readonly { auction: string; lotId: number }[]): Promise<Lot[]> {
    if (keys.length === 0) return [];
    let statement = this.byKeys.get(keys.length);
    if (statement === undefined) {
      const names = keys.flatMap((_, i) => [`auction${i}`, `lotId${i}`]);
      statement = new PreparedQuery(this.db.kysely, names, (values: Record<string, string | number>) =>
        this.db.kysely
          .selectFrom('lots')
          .selectAll()
          .where((eb) => eb.or(keys.map((_, i) => eb.and([eb('auction', '=', values[`auction${i}`] as string), eb('lot_id', '=', values[`lotId${i}`] as number)])))),
      );
      // Bounded as the catalogue's pages are: a caller may name any count of lots.
      if (this.byKeys.size >= MAX_PAGE_SHAPES) this.byKeys.clear();
      this.byKeys.set(keys.length, statement);
    }
    const values: Record<string, string | number> = {};
    keys.forEach((key, i) => {
      values[`auction${i}`] = key.auction;
      values[`lotId${i}`] = key.lotId;
    });
    return (await statement.run(this.db, values)).map(lotFromRow);
  }
}

/** The values a comparables statement binds, by name (comparablesShape). */
type ComparableValues = Record<string, string | number>;

interface ComparablesShape {
  /** Names the statement: the count of years, and whether a damage and a VIN are compared. */
  key: string;
  years: number;
  values: ComparableValues;
}

function comparablesShape(query: ComparablesQuery): ComparablesShape {
  const years = query.yearMax - query.yearMin + 1;
  const values: ComparableValues = { makeKey: query.makeKey, modelKey: query.modelKey, from: query.from, to: query.to };
  for (let i = 0; i < years; i++) values[`year${i}`] = query.yearMin + i;
  if (query.damageKey !== null) values.damageKey = query.damageKey;
  if (query.excludeVin !== null) values.excludeVin = query.excludeVin;
  return { key: `${years};${query.damageKey !== null};${query.excludeVin !== null}`, years, values };
}

/** The comparables' conditions: sold lots of one make and model, years and sale dates in range, priced above 0, narrowed to a damage, not of a VIN. */
function comparableRange<O>(select: SelectQueryBuilder<Database, 'lots', O>, shape: ComparablesShape, values: ComparableValues): SelectQueryBuilder<Database, 'lots', O> {
  let range = select
    .where('make_key', '=', values.makeKey as string)
    .where('model_key', '=', values.modelKey as string)
    // The years listed, not a range: each is then an equality of lots_market_idx, so the sale
    // dates after it are a range of the index too (a range of years left every sale date of
    // those years to read and filter, most of them older than any window).
    .where('year', 'in', Array.from({ length: shape.years }, (_, i) => values[`year${i}`] as number))
    .where('sale_date', '>=', values.from as string)
    .where('sale_date', '<=', values.to as string)
    .where('price', '>', 0);
  if (values.damageKey !== undefined) range = range.where('damage_key', '=', values.damageKey as string);
  if (values.excludeVin !== undefined) range = range.where('vin', '<>', values.excludeVin as string);
  return range;
}

type Where = Expression<SqlBool>;

/** The most catalogue statements a repository keeps compiled. */
const MAX_PAGE_SHAPES = 256;

interface CataloguePageRow {
  lot: string;
  sort_value: string | number;
  auction: string;
  lot_id: number;
}

/**
 * The values a page's statement binds, by name, only those its query gives: each filter, the
 * masked VIN's bounds, `now` of a status, the cursor's position and the limit.
 */
type PageValues = Record<string, string | number>;

/** What a page's statement is written from besides its values; `key` names the statement. */
interface PageShape {
  key: string;
  sort: CatalogueSort;
  status: CatalogueFilter['status'];
  /** A masked VIN's count of known characters (its statement compares that many), else null. */
  maskedLength: number | null;
  values: PageValues;
}

function pageShape(filter: CatalogueFilter, sort: CatalogueSort, now: string, after: CataloguePosition | null, limit: number): PageShape {
  const values: PageValues = {};
  const given = { make: filter.makeKey, model: filter.modelKey, damage: filter.damageKey, document: filter.document, auction: filter.auction, yearMin: filter.yearMin,
    yearMax: filter.yearMax, odometerMax: filter.odometerMax, priceMin: filter.priceMin, priceMax: filter.priceMax, saleFrom: filter.saleFrom, saleTo: filter.saleTo, zip: filter.locationZip };
  for (const [name, value] of Object.entries(given)) if (value !== null) values[name] = value;
  if (filter.status !== null) values.now = now;
  const vin = filter.vin;
  if (vin?.kind === 'whole') values.vin = vin.vin;
  if (vin?.kind === 'masked') {
    // A range of lots_vin_idx (every VIN of these known characters lies between the two bounds).
    const rest = 17 - vin.prefix.length;
    values.vinLow = vin.prefix + FIRST_VIN_CHAR.repeat(rest);
    values.vinHigh = vin.prefix + LAST_VIN_CHAR.repeat(rest);
    values.vinPrefix = vin.prefix;
  }
  if (after !== null) Object.assign(values, { afterValue: after.value, afterAuction: after.auction, afterLotId: after.lotId });
  values.limit = limit;
  const maskedLength = vin?.kind === 'masked' ? vin.prefix.length : null;
  return { key: `${sort};${filter.status};${maskedLength};${Object.keys(values).join(',')}`, sort, status: filter.status, maskedLength, values };
}

function filterConditions(eb: ExpressionBuilder<Database, 'lots'>, page: PageShape, v: PageValues, year: RawBuilder<number>): Where[] {
  const where: Where[] = [];
  if (v.make !== undefined) where.push(eb('make_key', '=', v.make as string));
  if (v.model !== undefined) where.push(eb('model_key', '=', v.model as string));
  if (v.damage !== undefined) where.push(eb('damage_key', '=', v.damage as string));
  if (v.document !== undefined) where.push(eb(eb.fn('lower', ['document']), '=', v.document));
  if (v.auction !== undefined) where.push(eb('auction', '=', v.auction as string));
  // As each planner reads the make's sale-date index in order (dialects/*/catalogue-order.ts).
  if (v.yearMin !== undefined) where.push(eb(year, '>=', v.yearMin as number));
  if (v.yearMax !== undefined) where.push(eb(year, '<=', v.yearMax as number));
  if (v.odometerMax !== undefined) where.push(eb('odometer', '<=', v.odometerMax as number));
  if (v.priceMin !== undefined) where.push(eb('price', '>=', v.priceMin as number));
  if (v.priceMax !== undefined) where.push(eb('price', '<=', v.priceMax as number));
  if (v.saleFrom !== undefined) where.push(eb('sale_date', '>=', v.saleFrom as string));
  if (v.saleTo !== undefined) where.push(eb('sale_date', '<=', v.saleTo as string));
  // The sale-date sort key, where a lot without a date is the latest: both states are one range of it.
  if (page.status === 'upcoming') where.push(eb(sql<string>`${SALE_SORT_KEY}`, '>', v.now as string));
  if (page.status === 'sold') where.push(eb(sql<string>`${SALE_SORT_KEY}`, '<=', v.now as string));
  if (v.zip !== undefined) where.push(eb('location_zip', '=', v.zip as string));
  if (v.vin !== undefined) where.push(eb('vin', '=', v.vin as string));
  if (page.maskedLength !== null) {
    // The bounds are the index's range; the known characters are compared themselves, whatever the database's collation.
    where.push(eb('vin', '>=', v.vinLow as string));
    where.push(eb('vin', '<=', v.vinHigh as string));
    where.push(eb(eb.fn('substr', ['vin', sql.lit(1), sql.lit(page.maskedLength)]), '=', v.vinPrefix as string));
  }
  return where;
}

/** After a position in an order: a later sort value, or the same one and a later tie (auction ascending, lot id descending). */
function afterConditions(eb: ExpressionBuilder<Database, 'lots'>, order: (typeof ORDERS)[CatalogueSort], v: PageValues): Where[] {
  const later = order.direction === 'asc' ? '>' : '<';
  const reached = order.direction === 'asc' ? '>=' : '<=';
  const value = v.afterValue!;
  return [
    // The range the index seeks to; the OR below then drops the ties already shown.
    eb(order.value, reached, value),
    eb.or([
      eb(order.value, later, value),
      eb.and([
        eb(order.value, '=', value),
        eb.or([eb('auction', '>', v.afterAuction as string), eb.and([eb('auction', '=', v.afterAuction as string), eb('lot_id', '<', v.afterLotId as number)])]),
      ]),
    ]),
  ];
}
