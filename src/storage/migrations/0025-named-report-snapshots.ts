import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * Reports whose snapshot names lot versions (issue 29, item 7; src/domain/report-snapshot.ts):
 * `reports.lots` holds either the copied lots (a JSON array: every report before this migration,
 * and those whose photos the archive rewrote) or `{"versions": [[auction, lot_id, count], ...]}`.
 * Rebuilding a lot undoes the versions appended after the count, so their order of appending must
 * be known: SQLite's rowid is it; PostgreSQL gets `seq`. The rows there before are numbered in
 * no particular order, which is harmless: a named snapshot counts every version there was when
 * it was made, so only versions appended after 0025 are ever undone.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema.alterTable('lot_versions').addColumn('seq', 'bigserial', (c) => c.notNull()).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await db.schema.alterTable('lot_versions').dropColumn('seq').execute();
  }
}
