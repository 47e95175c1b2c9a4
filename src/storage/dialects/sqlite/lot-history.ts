import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import type { LotRef } from '../../../domain/lot-ref.ts';
import { LOT_FIELDS, type Lot } from '../../../domain/lot.ts';
import type { Database, LotRow } from '../../schema.ts';
import type { LotProbe, LotVersionRow, StoredLotJson } from '../dialect.ts';
import { directStatement } from './direct-statements.ts';
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

const APPEND_VERSION = 'insert into lot_versions (auction, lot_id, observed_at, source, changed) values (?, ?, ?, ?, ?)';

/**
 * SQLite: one prepared insert a version on better-sqlite3 itself, while the caller's transaction
 * holds the connection (provideConnection): Kysely's multi-row insert compiled its statement anew
 * for every 500 rows, some 13-25 µs a version against 6-7 µs this way (docs/benchmarks.md, "Re-imports").
 */
export async function appendVersionsSqlite(kysely: Kysely<Database>, raw: BetterSqlite3.Database, versions: readonly LotVersionRow[]): Promise<void> {
  if (versions.length === 0) return;
  await kysely.getExecutor().provideConnection(async () => {
    const insert = directStatement(raw, APPEND_VERSION);
    for (const version of versions) insert.run(version.auction, version.lot_id, version.observed_at, version.source, version.changed);
  });
}

/** Every field of a lot but its key, compared with `is` (equal, or both null); `images` as its stored JSON text. */
const COMPARED = LOT_FIELDS.filter((field) => field !== 'auction' && field !== 'lot_id');
const PROBE = `select case when left_listing_at is null and ${COMPARED.map((field) => `"${field}" is ?`).join(' and ')} then null
    else json_object(${PAIRS}) end, images, left_listing_at from lots where auction = ? and lot_id = ?`;

/**
 * SQLite: per lot, one prepared probe of the primary key that compares the stored row's columns
 * with the lot's values (rowParams' values: what the upsert would store), on better-sqlite3 itself
 * while the batch's transaction holds the connection. A re-import's unchanged lines, most of them,
 * then cost no JSON text built by SQLite, handed to JavaScript and compared with lotJson() of the
 * line (about half the CPU a line: docs/benchmarks.md, "Re-imports"). Equal columns mean equal
 * JSON texts. A lot that differs in any way (or is out of its listing) gets its stored lot's JSON
 * text from the same probe, as storedLotsByKey builds it: the row is read once, where a second
 * read by key cost a changed line a fifth more (docs/benchmarks.md, the import against 082863a).
 */
export async function probeLotsSqlite(kysely: Kysely<Database>, raw: BetterSqlite3.Database, lots: readonly Lot[]): Promise<LotProbe> {
  if (lots.length === 0) return { same: [], stored: [] };
  return kysely.getExecutor().provideConnection(async () => {
    const probe = directStatement(raw, PROBE).raw();
    const params: unknown[] = new Array<unknown>(COMPARED.length + 2);
    const same = new Array<boolean>(lots.length);
    const stored: StoredLotJson[] = [];
    for (let i = 0; i < lots.length; i++) {
      const lot = lots[i]!;
      let p = 0;
      for (const field of COMPARED) params[p++] = field === 'images' ? JSON.stringify(lot.images) : lot[field];
      params[p++] = lot.auction;
      params[p] = lot.lot_id;
      const row = probe.get(params) as [string | null, string, string | null] | undefined;
      same[i] = row !== undefined && row[0] === null;
      if (row !== undefined && row[0] !== null) {
        stored.push(withImages({ auction: lot.auction, lot_id: lot.lot_id, lot: row[0], images: row[1], left_listing_at: row[2] }));
      }
    }
    return { same, stored };
  });
}
