import { sql, type Kysely } from 'kysely';
import type { Database } from '../../schema.ts';

/**
 * A batch's items in one statement: the JSON array of their inputs is one parameter, and
 * json_array_elements makes a row of each element with its place (`with ordinality`, from 1) and
 * its JSON text. One statement, one round trip, whatever the batch's size (docs/benchmarks.md,
 * "Batches").
 */
export async function insertBatchItemsPostgres(kysely: Kysely<Database>, batchId: string, inputsJson: string): Promise<void> {
  await sql`
    insert into batch_items (batch_id, idx, input)
    select ${batchId}, e.n - 1, e.value::text from json_array_elements(${inputsJson}::json) with ordinality as e(value, n)`.execute(kysely);
}

/** The batch's row and its items in one transaction. */
export async function storeBatchPostgres(kysely: Kysely<Database>, insertBatch: (kysely: Kysely<Database>) => Promise<void>, batchId: string, inputsJson: string): Promise<void> {
  await kysely.transaction().execute(async (trx) => {
    await insertBatch(trx);
    await insertBatchItemsPostgres(trx, batchId, inputsJson);
  });
}
