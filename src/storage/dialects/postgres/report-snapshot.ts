import { sql, type Kysely } from 'kysely';
import type { LotRef } from '../../../domain/lot-ref.ts';
import type { Database } from '../../schema.ts';

/**
 * PostgreSQL: one lot's versions (`changed`) in the order they were appended, by `seq` (0025). A
 * sequence orders by when a value was drawn, not by commit; but every writer of a lot's versions
 * (an import's batch, a listing change) holds the lot's row lock (lotRowsByKeyPostgres, FOR UPDATE)
 * from before it draws until it commits, so one lot's versions draw in the order they commit.
 */
export async function versionsInAppendOrderPostgres(kysely: Kysely<Database>, ref: LotRef): Promise<string[]> {
  const { rows } = await sql<{ changed: string }>`select changed from lot_versions
    where auction = ${ref.auction} and lot_id = ${ref.lotId} order by seq`.execute(kysely);
  return rows.map((row) => row.changed);
}
