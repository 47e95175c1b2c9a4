import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../schema.ts';

/**
 * PostgreSQL: read committed lets two conditional inserts count the same rows, so the insert runs
 * in a transaction that first takes an advisory lock per key (sorted: no deadlock); the insert
 * then reads a snapshot taken after the lock, which holds every attempt committed by the previous
 * holder. True when every row was inserted.
 */
export async function insertAttemptsPostgres(kysely: Kysely<Database>, insert: RawBuilder<unknown>, rows: number, lockKeys: readonly string[]): Promise<boolean> {
  const keys = [...new Set(lockKeys)].sort();
  return kysely.transaction().execute(async (trx) => {
    for (const key of keys) await sql`select pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
    const result = await insert.execute(trx);
    return Number(result.numAffectedRows ?? 0) === rows;
  });
}
