import { sql, type Kysely } from 'kysely';
import { SALE_SORT_KEY } from './0018-market.ts';

/**
 * The catalogue filtered by make and model, newest first (the default order), read from a range of
 * its own (issue 24; docs/decisions.md, "The catalogue and the market at scale"). 0023 read such a
 * page from the make's range in order and checked model and year in each entry: a page of a model
 * whose years hold fewer than a page of lots read the make's whole range (every sold FORD for the
 * F-150's 2008-2010), 2 ms at 200,000 lots and five times that at 1,000,000, and those pages were
 * most of the filtered catalogue's cost. Here the range is the model's, in order, with the year
 * checked in the entry.
 *
 * One direction only: `sale_date_desc` is the default and what a buyer browsing a model asks;
 * `sale_date_asc` keeps reading the make's ascending range (0023). Each index costs every upsert
 * (docs/benchmarks.md, "The catalogue's model index (0027) and the import").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index lots_model_sale_desc_idx on lots (make_key, model_key, ${SALE_SORT_KEY} desc, auction, lot_id desc, year)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('lots_model_sale_desc_idx').execute();
}
