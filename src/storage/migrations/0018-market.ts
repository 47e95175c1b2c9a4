import { sql, type Kysely } from 'kysely';

/**
 * Counted calls of every kind (contract, "Additions to v1, second round"): a search record says
 * which call it was, so that usage can show them by kind. Records from before are searches by VIN
 * or lookups by lot, which the old rows cannot tell apart: they stay `search`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('searches')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('search').check(sql`kind in ('search', 'lot', 'catalogue', 'market', 'history')`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('searches').dropColumn('kind').execute();
}
