import { sql, type Kysely } from 'kysely';
import type { LotRef } from '../../../domain/lot-ref.ts';
import type { Database, LotRow } from '../../schema.ts';

/** The keys as one JSON parameter: one statement a batch, whatever its size, and no compile per size. */
const keysJson = (keys: readonly LotRef[]) => JSON.stringify(keys.map((key) => [key.auction, key.lotId]));

/**
 * SQLite: the stored rows of these lots, one probe of the primary key per key (the planner loops
 * over json_each and looks each key up). The transaction holds the write lock once it writes, so
 * what is read here is what the batch's upsert finds.
 */
export async function lotRowsByKeySqlite(kysely: Kysely<Database>, keys: readonly LotRef[]): Promise<LotRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<LotRow>`select lots.* from json_each(${keysJson(keys)}) as k
    join lots on lots.auction = k.value ->> 0 and lots.lot_id = k.value ->> 1`.execute(kysely);
  return rows;
}

/** SQLite: these lots were seen at `at` (last_seen_at), and are in their listing (left_listing_at cleared). */
export async function touchLotsSqlite(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void> {
  if (keys.length === 0) return;
  await sql`update lots set last_seen_at = ${at}, left_listing_at = null
    from json_each(${keysJson(keys)}) as k
    where lots.auction = k.value ->> 0 and lots.lot_id = k.value ->> 1`.execute(kysely);
}
