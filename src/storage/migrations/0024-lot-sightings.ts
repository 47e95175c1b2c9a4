import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Sightings (issue 29, docs/decisions.md "Lot history"): when an import last named a lot that it
 * left unchanged. Moving `lots.last_seen_at` for such a lot rewrote its whole 1.2 KB row (and its
 * WAL pages) on every re-import; a row here is some 40 bytes. A lot's last sighting is the later
 * of this row and `lots.last_seen_at` (which the upsert still sets on the lots it writes), so no
 * backfill is needed: a lot without a row here has its last sighting in `lots`.
 * On SQLite the table is WITHOUT ROWID: the primary key is the table, one B-tree instead of two.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('lot_sightings')
    .addColumn('auction', 'text', (c) => c.notNull())
    .addColumn('lot_id', 'integer', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('lot_sightings_pkey', ['auction', 'lot_id'])
    .$call((builder) => (postgres ? builder : builder.modifyEnd(sql`without rowid`)))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('lot_sightings').execute();
}
