import { PostgresAdapter, sql, type Kysely } from 'kysely';
import { SALE_SORT_KEY } from './0018-market.ts';

/** The comparables' range, then what market-repository.ts reads of each comparable. */
export const MARKET_COLUMNS = ['make_key', 'model_key', 'year', 'sale_date', 'price', 'damage_key', 'vin', 'retail_value', 'odometer', 'primary_damage', 'auction', 'lot_id'] as const;

/**
 * The catalogue filtered by make, or by make and model (with or without a year range), read in
 * either sale-date order straight from its cursor instead of sorting every matching lot (issue 24;
 * docs/decisions.md, "The catalogue and the market at scale"). At 1,000,000 lots the filtered
 * catalogue read lots_market_idx and sorted all of a model's three years per page.
 *
 * Two indexes, one per direction, because the contract's ties (auction ascending, then lot id
 * descending) are the same in both orders, so no single index read backwards gives the other.
 * Each is (make key, sale sort key, ties) with model key and year after them: a make's page is a
 * range read in order; a make-and-model page (and its years) reads the same range in order and
 * checks model and year in the index entry, without touching the table, until the page is full.
 * A model's own pair of indexes would make that exact, at the cost of two more indexes on every
 * upsert; the make's range holds a model's lots at a density of one in four to one in twenty, so
 * a page reads some hundreds of index entries, not the whole model.
 *
 * Price orders get none: they come with filters, sort the filtered rows with LIMIT (a bounded
 * sort) and would need a pair per filter prefix.
 *
 * lots_market_idx becomes the comparables' covering index: (make key, model key, year, sale date)
 * followed by every column a comparable is read for, so that a market value reads no row of the
 * table. At 1,000,000 lots HONDA ACCORD's three years over twelve months are 2,239 sales, whose rows
 * (1.4 kB each, the keys stored after the photo list) cost 95-150 ms to fetch one by one on the
 * shared machine against 5-8 ms to count them in the index. Replacing the index keeps their number;
 * its entries grow from about 40 to about 110 bytes.
 *
 * PostgreSQL also gets the dependency of model on make as statistics: without it the planner
 * multiplies the two keys' selectivities, expects a tenth of a model's lots and prefers sorting
 * them (measured: 748 rows expected, 7,147 found for HONDA ACCORD at 200,000 lots).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('lots_market_idx').execute();
  await db.schema.createIndex('lots_market_idx').on('lots').columns([...MARKET_COLUMNS]).execute();
  await sql`create index lots_make_sale_desc_idx on lots (make_key, ${SALE_SORT_KEY} desc, auction, lot_id desc, model_key, year)`.execute(db);
  await sql`create index lots_make_sale_asc_idx on lots (make_key, ${SALE_SORT_KEY}, auction, lot_id desc, model_key, year)`.execute(db);
  if (db.getExecutor().adapter instanceof PostgresAdapter) await sql`create statistics lots_make_model_stats (dependencies) on make_key, model_key from lots`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('lots_market_idx').execute();
  await db.schema.createIndex('lots_market_idx').on('lots').columns(['make_key', 'model_key', 'year', 'sale_date']).execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) await sql`drop statistics lots_make_model_stats`.execute(db);
  await db.schema.dropIndex('lots_make_sale_asc_idx').execute();
  await db.schema.dropIndex('lots_make_sale_desc_idx').execute();
}
