import { sql, type Kysely } from 'kysely';
import type { LotRef } from '../../../domain/lot-ref.ts';
import type { Database, LotRow } from '../../schema.ts';

const auctionsOf = (keys: readonly LotRef[]) => keys.map((key) => key.auction);
const lotIdsOf = (keys: readonly LotRef[]) => keys.map((key) => key.lotId);

/**
 * PostgreSQL: the stored rows of these lots in one statement (two array parameters), locked until
 * the batch's transaction ends, so that another import cannot change them between this read and
 * the batch's upsert (the versions are the difference between the two).
 */
export async function lotRowsByKeyPostgres(kysely: Kysely<Database>, keys: readonly LotRef[]): Promise<LotRow[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<LotRow>`select lots.* from lots
    join unnest(${auctionsOf(keys)}::text[], ${lotIdsOf(keys)}::integer[]) as k(auction, lot_id)
      on lots.auction = k.auction and lots.lot_id = k.lot_id
    order by lots.auction, lots.lot_id
    for update of lots`.execute(kysely);
  return rows;
}

/** PostgreSQL: these lots were seen at `at` (last_seen_at), and are in their listing (left_listing_at cleared). */
export async function touchLotsPostgres(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void> {
  if (keys.length === 0) return;
  await sql`update lots set last_seen_at = ${at}, left_listing_at = null
    from unnest(${auctionsOf(keys)}::text[], ${lotIdsOf(keys)}::integer[]) as k(auction, lot_id)
    where lots.auction = k.auction and lots.lot_id = k.lot_id`.execute(kysely);
}
