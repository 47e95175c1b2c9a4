import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../database.ts';
import type { Database } from '../schema.ts';
import type { Lot } from '../../domain/lot.ts';
import type { CatalogueFilter, CataloguePosition, CatalogueSort } from '../../domain/catalogue.ts';
import { lotFromRow } from '../lot-rows.ts';
import { SALE_SORT_KEY } from '../migrations/0018-market.ts';

/** A sold lot as the market's figures need it (contract, "Market value"). */
export interface ComparableSale {
  auction: string;
  lotId: number;
  year: number | null;
  price: number;
  retailValue: number | null;
  odometer: number | null;
  primaryDamage: string | null;
  damageKey: string | null;
  saleDate: string;
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

  /**
   * One page of the catalogue in its order, after `after` when given (keyset paging: a lot stored
   * since the last page takes its place in the order and is neither repeated nor makes another be
   * skipped), with the position of each lot for the next cursor.
   */
  async cataloguePage(filter: CatalogueFilter, sort: CatalogueSort, now: string, after: CataloguePosition | null, limit: number): Promise<{ lot: Lot; position: CataloguePosition }[]> {
    const rows = await this.catalogueQuery(filter, sort, now, after, limit).execute();
    return rows.map((row) => ({
      lot: lotFromRow(row),
      // PostgreSQL answers the price's coalesce as bigint, which its driver gives as text.
      position: { value: sort.startsWith('price') ? Number(row.sort_value) : String(row.sort_value), auction: row.auction, lotId: Number(row.lot_id) },
    }));
  }

  /** The statement of a catalogue page, apart so that its plan can be checked (test/storage/catalogue-plans.test.ts). */
  catalogueQuery(filter: CatalogueFilter, sort: CatalogueSort, now: string, after: CataloguePosition | null, limit: number) {
    const order = ORDERS[sort];
    return this.db.kysely
      .selectFrom('lots')
      .selectAll()
      .select(order.value.as('sort_value'))
      .where((eb) => eb.and([...filterConditions(eb, filter, now, this.db.dialect.catalogueYear), ...(after ? afterConditions(eb, order, after) : [])]))
      .orderBy(order.value, order.direction)
      .orderBy('auction', 'asc')
      .orderBy('lot_id', 'desc')
      .limit(limit);
  }

  /** Sold lots of one make and model, years and sale dates in range, priced above 0: a range of lots_market_idx, which covers them (0023). */
  async comparables(query: ComparablesQuery): Promise<ComparableSale[]> {
    const rows = await this.comparablesQuery(query).execute();
    return rows.map((row) => ({
      auction: row.auction,
      lotId: Number(row.lot_id),
      year: row.year,
      price: Number(row.price),
      retailValue: row.retail_value === null ? null : Number(row.retail_value),
      odometer: row.odometer === null ? null : Number(row.odometer),
      primaryDamage: row.primary_damage,
      damageKey: row.damage_key,
      saleDate: row.sale_date!,
    }));
  }

  /**
   * The statement of comparables(), apart so that its plan can be checked (test/storage/catalogue-plans.test.ts).
   * Only the columns the figures read: each value is built as a JavaScript value per row, which is
   * most of the statement's time (the VIN is compared in the index, never read).
   */
  comparablesQuery(query: ComparablesQuery) {
    let select = this.db.kysely
      .selectFrom('lots')
      .select(['auction', 'lot_id', 'year', 'price', 'retail_value', 'odometer', 'primary_damage', 'damage_key', 'sale_date'])
      .where('make_key', '=', query.makeKey)
      .where('model_key', '=', query.modelKey)
      // The years listed, not a range: each is then an equality of lots_market_idx, so the sale
      // dates after it are a range of the index too (a range of years left every sale date of
      // those years to read and filter, most of them older than any window).
      .where('year', 'in', Array.from({ length: query.yearMax - query.yearMin + 1 }, (_, i) => query.yearMin + i))
      .where('sale_date', '>=', query.from)
      .where('sale_date', '<=', query.to)
      .where('price', '>', 0);
    if (query.damageKey !== null) select = select.where('damage_key', '=', query.damageKey);
    if (query.excludeVin !== null) select = select.where('vin', '<>', query.excludeVin);
    return select;
  }

  /** The lots named, in any order: a probe of the primary key each (a handful). */
  async lotsByKeys(keys: readonly { auction: string; lotId: number }[]): Promise<Lot[]> {
    if (keys.length === 0) return [];
    const rows = await this.db.kysely
      .selectFrom('lots')
      .selectAll()
      .where((eb) => eb.or(keys.map((key) => eb.and([eb('auction', '=', key.auction), eb('lot_id', '=', key.lotId)]))))
      .execute();
    return rows.map(lotFromRow);
  }
}

type Where = Expression<SqlBool>;

function filterConditions(eb: ExpressionBuilder<Database, 'lots'>, filter: CatalogueFilter, now: string, year: RawBuilder<number>): Where[] {
  const where: Where[] = [];
  if (filter.makeKey !== null) where.push(eb('make_key', '=', filter.makeKey));
  if (filter.modelKey !== null) where.push(eb('model_key', '=', filter.modelKey));
  if (filter.damageKey !== null) where.push(eb('damage_key', '=', filter.damageKey));
  if (filter.document !== null) where.push(eb(eb.fn('lower', ['document']), '=', filter.document));
  if (filter.auction !== null) where.push(eb('auction', '=', filter.auction));
  // As each planner reads the make's sale-date index in order (dialects/*/catalogue-order.ts).
  if (filter.yearMin !== null) where.push(eb(year, '>=', filter.yearMin));
  if (filter.yearMax !== null) where.push(eb(year, '<=', filter.yearMax));
  if (filter.odometerMax !== null) where.push(eb('odometer', '<=', filter.odometerMax));
  if (filter.priceMin !== null) where.push(eb('price', '>=', filter.priceMin));
  if (filter.priceMax !== null) where.push(eb('price', '<=', filter.priceMax));
  if (filter.saleFrom !== null) where.push(eb('sale_date', '>=', filter.saleFrom));
  if (filter.saleTo !== null) where.push(eb('sale_date', '<=', filter.saleTo));
  // The sale-date sort key, where a lot without a date is the latest: both states are one range of it.
  if (filter.status === 'upcoming') where.push(eb(sql<string>`${SALE_SORT_KEY}`, '>', now));
  if (filter.status === 'sold') where.push(eb(sql<string>`${SALE_SORT_KEY}`, '<=', now));
  if (filter.locationZip !== null) where.push(eb('location_zip', '=', filter.locationZip));
  const vin = filter.vin;
  if (vin?.kind === 'whole') where.push(eb('vin', '=', vin.vin));
  if (vin?.kind === 'masked') {
    // A range of lots_vin_idx (every VIN of these known characters lies between the two bounds),
    // and the known characters compared themselves, whatever the database's collation.
    const rest = 17 - vin.prefix.length;
    where.push(eb('vin', '>=', vin.prefix + FIRST_VIN_CHAR.repeat(rest)));
    where.push(eb('vin', '<=', vin.prefix + LAST_VIN_CHAR.repeat(rest)));
    where.push(eb(eb.fn('substr', ['vin', sql.lit(1), sql.lit(vin.prefix.length)]), '=', vin.prefix));
  }
  return where;
}

/** After a position in an order: a later sort value, or the same one and a later tie (auction ascending, lot id descending). */
function afterConditions(eb: ExpressionBuilder<Database, 'lots'>, order: (typeof ORDERS)[CatalogueSort], after: CataloguePosition): Where[] {
  const later = order.direction === 'asc' ? '>' : '<';
  const reached = order.direction === 'asc' ? '>=' : '<=';
  return [
    // The range the index seeks to; the OR below then drops the ties already shown.
    eb(order.value, reached, after.value),
    eb.or([
      eb(order.value, later, after.value),
      eb.and([
        eb(order.value, '=', after.value),
        eb.or([eb('auction', '>', after.auction), eb.and([eb('auction', '=', after.auction), eb('lot_id', '<', after.lotId)])]),
      ]),
    ]),
  ];
}
