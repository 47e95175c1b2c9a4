import type { Kysely } from 'kysely';

/**
 * Sandbox tokens (`vh_test_...`) and what they leave behind: the token's kind, and a flag on the
 * reports and search records they make, so that the report page marks a test report and the usage
 * chart leaves test searches out (they are never counted). Flags are integers 0/1, as in 0001.
 *
 * Lookup by lot needs no index of its own: the primary key of `lots`, (auction, lot_id), is the
 * B-tree that finds a lot's VIN in one probe, and the list of known auctions is a skip over its
 * first column.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_tokens').addColumn('sandbox', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('reports').addColumn('sandbox', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('searches').addColumn('sandbox', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('searches').dropColumn('sandbox').execute();
  await db.schema.alterTable('reports').dropColumn('sandbox').execute();
  await db.schema.alterTable('api_tokens').dropColumn('sandbox').execute();
}
