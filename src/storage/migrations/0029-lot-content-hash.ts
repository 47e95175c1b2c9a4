import type { Kysely } from 'kysely';

/**
 * The content hash of each lot's fields (issue 29, a re-import's speed; lot-rows.ts,
 * lotContentHash): a re-import's probe compares it instead of every column. Null for the rows
 * stored before, and for a row whose fields an upsert merged in SQL or derived values filled: such
 * a row is compared column by column, as before, until an import changes it. No backfill: the
 * hash is SHA-256 of the lot's JSON text, which neither database works out as JavaScript does.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('lots').addColumn('content_hash', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('lots').dropColumn('content_hash').execute();
}
