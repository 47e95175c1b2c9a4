import { sql, type Kysely } from 'kysely';
import type { LotRef } from '../../../domain/lot-ref.ts';
import type { Database, LotRow } from '../../schema.ts';
import type { StoredLotJson } from '../dialect.ts';
import { lotJsonPairs, withImages } from './lot-json.ts';

/** Qualified: json_each has columns of its own (`type`, `key`, `value`) that would shadow a lot's. */
const PAIRS = lotJsonPairs('lots');

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

/**
 * SQLite: the stored lots of these keys as JSON text, built by SQLite from the row as the search
 * builds it (lot-json.ts), one probe of the primary key per key: no value of the row becomes a
 * JavaScript value of its own.
 */
export async function storedLotsByKeySqlite(kysely: Kysely<Database>, keys: readonly LotRef[]): Promise<StoredLotJson[]> {
  if (keys.length === 0) return [];
  const { rows } = await sql<StoredLotJson & { images: string }>`select lots.auction, lots.lot_id, json_object(${sql.raw(PAIRS)}) as lot,
      lots.images, lots.left_listing_at
    from json_each(${keysJson(keys)}) as k
    join lots on lots.auction = k.value ->> 0 and lots.lot_id = k.value ->> 1`.execute(kysely);
  return rows.map(withImages);
}

/** SQLite: these lots were seen at `at` (last_seen_at), and are in their listing (left_listing_at cleared). */
export async function touchLotsSqlite(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void> {
  if (keys.length === 0) return;
  await sql`update lots set last_seen_at = ${at}, left_listing_at = null
    from json_each(${keysJson(keys)}) as k
    where lots.auction = k.value ->> 0 and lots.lot_id = k.value ->> 1`.execute(kysely);
}

/**
 * SQLite: these lots, left unchanged, were seen at `at`: one row each in lot_sightings (0024),
 * some 40 bytes, instead of rewriting each lot's 1.2 KB row.
 */
export async function sightLotsSqlite(kysely: Kysely<Database>, keys: readonly LotRef[], at: string): Promise<void> {
  if (keys.length === 0) return;
  await sql`insert into lot_sightings (auction, lot_id, last_seen_at)
    select k.value ->> 0, k.value ->> 1, ${at} from json_each(${keysJson(keys)}) as k where true
    on conflict (auction, lot_id) do update set last_seen_at = excluded.last_seen_at`.execute(kysely);
}
