import { sql, type Kysely } from 'kysely';
import type { Database } from '../../schema.ts';

/**
 * A batch's items in one statement: the JSON array of their inputs is one parameter, and SQLite's
 * json_each makes a row of each element (`key` its place, `value` its JSON text). One statement
 * instead of a Kysely insert of 200 rows at a time, which built and bound 8 values a row in
 * JavaScript: storing the items cost a tenth of a search per item (docs/benchmarks.md, "Batches").
 */
export async function insertBatchItemsSqlite(kysely: Kysely<Database>, batchId: string, inputsJson: string): Promise<void> {
  await sql`
    insert into batch_items (batch_id, idx, input)
    select ${batchId}, key, value from json_each(${inputsJson})`.execute(kysely);
}

/**
 * The items first, in the searches file (searches-file.ts), then the batch's row, in the main
 * file: two statements, each a transaction of one file. One transaction over both files would not
 * be atomic across them in WAL mode (SQLite commits the main file first), and a crash between the
 * two commits could leave a batch without its items, which its runner would finish as done with
 * nothing run. This way a crash between leaves items that no batch names: nothing reads them
 * (every read of items goes by a batch's id), and the batch's id is not used again. A row that
 * fails (the Idempotency-Key's unique index, when a request with the same key won) takes its
 * items back out.
 */
export async function storeBatchSqlite(kysely: Kysely<Database>, insertBatch: (kysely: Kysely<Database>) => Promise<void>, batchId: string, inputsJson: string): Promise<void> {
  await insertBatchItemsSqlite(kysely, batchId, inputsJson);
  try {
    await insertBatch(kysely);
  } catch (error) {
    await kysely.deleteFrom('batch_items').where('batch_id', '=', batchId).execute();
    throw error;
  }
}
