import { sql, type Kysely } from 'kysely';
import type { LotRef } from '../../../domain/lot-ref.ts';
import type { Database } from '../../schema.ts';

/**
 * SQLite: one lot's versions (`changed`) in the order they were appended. The rowid is that order:
 * one writer, and versions are never deleted, so each new row's rowid is above every earlier one.
 */
export async function versionsInAppendOrderSqlite(kysely: Kysely<Database>, ref: LotRef): Promise<string[]> {
  const { rows } = await sql<{ changed: string }>`select changed from lot_versions
    where auction = ${ref.auction} and lot_id = ${ref.lotId} order by rowid`.execute(kysely);
  return rows.map((row) => row.changed);
}
