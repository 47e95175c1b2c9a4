import type { Kysely } from 'kysely';

/**
 * The language an account's reports open in when the link names none (a reseller serving one
 * market): a code of domain/report-language.ts, or null for the reader's browser's choice.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('default_language', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('accounts').dropColumn('default_language').execute();
}
