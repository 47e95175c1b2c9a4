import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/**
 * WAL pages after which this connection checkpoints (copies the WAL back into the database file),
 * instead of SQLite's default 1,000 (4 MiB). A bulk load rewrites the same index pages over and
 * over; checkpointing every 4 MiB writes each of them back again and again, and took a third of an
 * import's time. 16,384 pages bound the WAL to about 64 MiB.
 */
export const BULK_LOAD_CHECKPOINT_PAGES = 16_384;

/**
 * Settings of a connection that loads lots in bulk (the import and seed commands, the import
 * benchmark's ceiling). Only this connection is affected: the server's keeps SQLite's defaults.
 * PostgreSQL needs nothing here.
 */
export async function tuneForBulkLoad(db: Db): Promise<void> {
  if (db.dialect !== 'sqlite') return;
  await sql.raw(`pragma wal_autocheckpoint = ${BULK_LOAD_CHECKPOINT_PAGES}`).execute(db.kysely);
}
