import { sql } from 'kysely';
import type { Db } from '../storage/database.ts';

/**
 * WAL pages after which this connection checkpoints (copies the WAL back into the database file),
 * instead of SQLite's default 1,000 (4 MiB). A bulk load rewrites the same index pages over and
 * over; checkpointing every 4 MiB writes each of them back again and again, and took a third of an
 * import's time. 16,384 pages bound the WAL to about 64 MiB.
 */
export const BULK_LOAD_CHECKPOINT_PAGES = 16_384;

/**
 * Lots per transaction of the import and seed commands. Each transaction writes back every index
 * page it touched, and the lots' keys and VINs land on pages all over both indexes: at a million
 * lots, batches of 1,000 wrote about 2.2 pages a lot, batches of 10,000 about 1.4, and a
 * 1,000,000-lot import took 43-47 s instead of 59-67 s (docs/benchmarks.md). The price is the
 * write lock: on SQLite a batch holds it for a quarter to half a second, which a server on the
 * same database waits out in its searches (its busy timeout is 5 s); `--batch-size 1000` keeps
 * that to tens of milliseconds. The server's own HTTP ingestion uses small batches.
 */
export const BULK_LOAD_BATCH_SIZE = 10_000;

/**
 * Settings of a connection that loads lots in bulk (the import and seed commands, the import
 * benchmark's ceiling). Only this connection is affected: the server's keeps SQLite's defaults.
 * PostgreSQL needs nothing here.
 */
export async function tuneForBulkLoad(db: Db): Promise<void> {
  if (db.dialect !== 'sqlite') return;
  await sql.raw(`pragma wal_autocheckpoint = ${BULK_LOAD_CHECKPOINT_PAGES}`).execute(db.kysely);
}
