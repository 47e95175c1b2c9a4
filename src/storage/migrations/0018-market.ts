import { sql, type Kysely } from 'kysely';
import { marketKey } from '../../domain/market-key.ts';

/** The sale date the catalogue sorts on: a lot without one sorts as the latest (upcoming), in both orders. */
export const SALE_SORT_KEY = sql`coalesce("sale_date", '9999-12-31T23:59:59.999Z')`;

const KEYED = [
  ['make_key', 'brand'],
  ['model_key', 'model'],
  ['damage_key', 'primary_damage'],
] as const;

/**
 * The market as data (issue 24):
 * - a search record says which counted call it was (`kind`), so that usage can show calls by kind.
 *   Records from before are searches by VIN or lookups by lot, which the old rows cannot tell
 *   apart: they stay `search`.
 * - lots carry the keys their make, model and primary damage are compared on (domain/market-key.ts)
 *   beside the source values; the lots stored before get theirs here, one statement per column
 *   through a table of the distinct values and their keys (keys are computed in JavaScript, as the
 *   import computes them, since SQLite has no regular expressions).
 * - three indexes, for 60 million lots (docs/decisions.md, "The catalogue and the market at scale"):
 *   comparables and the catalogue's make/model/year filters on (make_key, model_key, year,
 *   sale_date); the catalogue's two sale-date orders, each with its ties (auction ascending, lot id
 *   descending), on the sale date with a missing one sorting last (SALE_SORT_KEY), so that a page is
 *   read in index order whatever its cursor, and `status` is a range of the same key.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('searches')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('search').check(sql`kind in ('search', 'lot', 'catalogue', 'market', 'history')`))
    .execute();

  for (const [column] of KEYED) await db.schema.alterTable('lots').addColumn(column, 'text').execute();
  await db.schema.createTable('market_keys_0018').addColumn('value', 'text', (c) => c.primaryKey()).addColumn('key', 'text').execute();
  for (const [column, source] of KEYED) {
    const values = await db.selectFrom('lots').select(sql.ref<string>(source).as('value')).distinct().where(source, 'is not', null).execute();
    for (let start = 0; start < values.length; start += 500) {
      const rows = values.slice(start, start + 500).map(({ value }) => ({ value: value, key: marketKey(value) }));
      await db.insertInto('market_keys_0018').values(rows).execute();
    }
    await sql`update lots set ${sql.ref(column)} = (select m.key from market_keys_0018 m where m.value = lots.${sql.ref(source)}) where ${sql.ref(source)} is not null`.execute(db);
    await db.deleteFrom('market_keys_0018').execute();
  }
  await db.schema.dropTable('market_keys_0018').execute();

  await db.schema.createIndex('lots_market_idx').on('lots').columns(['make_key', 'model_key', 'year', 'sale_date']).execute();
  await sql`create index lots_sale_desc_idx on lots (${SALE_SORT_KEY} desc, auction, lot_id desc)`.execute(db);
  await sql`create index lots_sale_asc_idx on lots (${SALE_SORT_KEY}, auction, lot_id desc)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('lots_sale_asc_idx').execute();
  await db.schema.dropIndex('lots_sale_desc_idx').execute();
  await db.schema.dropIndex('lots_market_idx').execute();
  for (const [column] of KEYED) await db.schema.alterTable('lots').dropColumn(column).execute();
  await db.schema.alterTable('searches').dropColumn('kind').execute();
}
