import { sql, type Kysely } from 'kysely';
import { BEFORE_HISTORY_SOURCE } from '../../domain/lot-history.ts';

/**
 * Lot history (issue 29, docs/reports.md "History"):
 * - lots.source: what first brought the lot (a file's name, a feed's name, `admin-api:<token name>`,
 *   `demo`); lots.last_seen_at: the last import that named it, changed or not (created_at stays the
 *   first sighting); lots.left_listing_at: set while the lot is out of its auction's listing.
 * - lot_versions: one row per later observation that changed something, with `changed` as JSON
 *   {field: {from, to}}. The first version is not stored as a row: it is the lot's current state
 *   rolled back through the later rows' `from` values (src/history/), which keeps a fresh import to
 *   one write per lot and saves a whole lot's worth of bytes per lot (docs/decisions.md).
 * Backfill: every lot stored before this migration gets `before history` as its source, its last
 * change as its last sighting, and so a first version from its current state (the states it went
 * through before were overwritten and are not known).
 */

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('lots').addColumn('source', 'text').execute();
  await db.schema.alterTable('lots').addColumn('last_seen_at', 'text').execute();
  await db.schema.alterTable('lots').addColumn('left_listing_at', 'text').execute();
  await sql`update lots set source = ${BEFORE_HISTORY_SOURCE}, last_seen_at = updated_at`.execute(db);

  await db.schema
    .createTable('lot_versions')
    .addColumn('auction', 'text', (c) => c.notNull())
    .addColumn('lot_id', 'integer', (c) => c.notNull())
    .addColumn('observed_at', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('changed', 'text', (c) => c.notNull())
    .execute();
  // Not unique: two imports may observe one lot in the same millisecond; each keeps its version.
  await db.schema.createIndex('lot_versions_lot_idx').on('lot_versions').columns(['auction', 'lot_id', 'observed_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('lot_versions').execute();
  await db.schema.alterTable('lots').dropColumn('left_listing_at').execute();
  await db.schema.alterTable('lots').dropColumn('last_seen_at').execute();
  await db.schema.alterTable('lots').dropColumn('source').execute();
}
