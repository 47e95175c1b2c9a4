import type { Kysely } from 'kysely';

/**
 * Operator tokens for the admin API (ingestion over HTTP). A table of their own, apart from the
 * customers' api_tokens: an operator token belongs to no account and has no plan, and a lookup for
 * one route can never find a token of the other kind. Same conventions as 0001.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('operator_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .addColumn('revoked_at', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('operator_tokens').execute();
}
