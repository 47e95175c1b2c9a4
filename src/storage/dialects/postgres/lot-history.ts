import { sql, type Kysely } from 'kysely';
import type { LotRef } from '../../../domain/lot-ref.ts';
import type { Database, LotRow } from '../../schema.ts';
import type { LotVersionRow, StoredLotJson } from '../dialect.ts';
import { COLUMNS } from './lot-json.ts';

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

/**
 * PostgreSQL: the stored lots of these keys as JSON text (as the search builds it, lot-json.ts),
 * locked until the batch's transaction ends, as lotRowsByKeyPostgres locks them.
 */
export async function storedLotsByKeyPostgres(kysely: Kysely<Database>, keys: readonly LotRef[]): Promise<StoredLotJson[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<StoredLotJson>`select l.auction, l.lot_id, (select row_to_json(j)::text from (select ${sql.raw(COLUMNS)}) as j) as lot,
      l.left_listing_at
    from lots as l
    join unnest(${auctionsOf(keys)}::text[], ${lotIdsOf(keys)}::integer[]) as k(auction, lot_id)
      on l.auction = k.auction and l.lot_id = k.lot_id
    order by l.auction, l.lot_id
    for update of l`.execute(kysely);
  return rows;
}

/** PostgreSQL: these lots were seen at `at` (last_seen_at), and are in their listing (left_listing_at cleared). */
export async function touchLotsPostgres(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void> {
  if (keys.length === 0) return;
  await sql`update lots set last_seen_at = ${at}, left_listing_at = null
    from unnest(${auctionsOf(keys)}::text[], ${lotIdsOf(keys)}::integer[]) as k(auction, lot_id)
    where lots.auction = k.auction and lots.lot_id = k.lot_id`.execute(kysely);
}

/**
 * PostgreSQL: these lots, left unchanged, were seen at `at`: one row each in lot_sightings (0024)
 * instead of a new version of each lot's wide row.
 */
export async function sightLotsPostgres(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void> {
  if (keys.length === 0) return;
  await sql`insert into lot_sightings (auction, lot_id, last_seen_at)
    select k.auction, k.lot_id, ${at} from unnest(${auctionsOf(keys)}::text[], ${lotIdsOf(keys)}::integer[]) as k(auction, lot_id)
    on conflict (auction, lot_id) do update set last_seen_at = excluded.last_seen_at`.execute(kysely);
}

/** PostgreSQL: 500 rows a statement (one round trip each); five parameters a row stays far below the protocol's limit. */
export async function appendVersionsPostgres(kysely: Kysely<Database>, versions: readonly LotVersionRow[]): Promise<void> {
  for (let start = 0; start < versions.length; start += 500) {
    await kysely.insertInto('lot_versions').values(versions.slice(start, start + 500)).execute();
  }
}
