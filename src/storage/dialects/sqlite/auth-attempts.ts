import type { Kysely, RawBuilder } from 'kysely';
import type { Database } from '../../schema.ts';

/**
 * SQLite: the one conditional insert alone. A writing statement takes the database's write lock
 * before it reads, so counting and recording are serial across connections and processes.
 * True when every row was inserted.
 */
export async function insertAttemptsSqlite(kysely: Kysely<Database>, insert: RawBuilder<unknown>, rows: number): Promise<boolean> {
  const result = await insert.execute(kysely);
  return Number(result.numAffectedRows ?? 0) === rows;
}
