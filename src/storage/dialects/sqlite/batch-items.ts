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
