import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import type { LotRef } from '../../../domain/lot-ref.ts';
import { LISTING_FIELD } from '../../../domain/lot-history.ts';
import { LOT_FIELDS, type Lot } from '../../../domain/lot.ts';
import { MARKET_FIELDS } from '../../../domain/market-group.ts';
import { changedColumns } from '../../lot-rows.ts';
import type { Database, LotRow } from '../../schema.ts';
import type { KnownLotOutcome, KnownLotsWritten, LotVersionRow, StoredLotJson } from '../dialect.ts';
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

/** Every field of a lot but its key, in LOT_FIELDS order: what a line may change. */
const MERGED = LOT_FIELDS.filter((field) => field !== 'auction' && field !== 'lot_id');
const quote = (name: string) => `"${name}"`;
/** The bit of a lot out of its listing in the probe's answer, above the fields' bits (28 fields: well inside 31 bits). */
const LISTED_BIT = 2 ** MERGED.length;

/**
 * mergeLot's rule of one field over the line's bound values (`p`, each bound once: better-sqlite3
 * binds no numbered parameter twice) and the stored row: the line gives a value and it differs.
 */
const fieldChanges = (field: string) =>
  field === 'images' ? `(p."images" <> '[]' and p."images" <> lots."images")` : `(p.${quote(field)} is not null and lots.${quote(field)} is not p.${quote(field)})`;

/**
 * Per line, one probe of the primary key: 0 when the stored row holds exactly the line's values and
 * is in its listing (most lines of a re-import: one conjunction that stops at the first difference),
 * else the bits of the fields the line changes and of the listing; no row for a lot not stored.
 */
const PROBE = `select case when lots.left_listing_at is null and ${MERGED.map((field) => `lots.${quote(field)} is p.${quote(field)}`).join(' and ')} then 0
    else ${MERGED.map((field, bit) => `(case when ${fieldChanges(field)} then ${2 ** bit} else 0 end)`).join(' + ')} + (case when lots.left_listing_at is null then 0 else ${LISTED_BIT} end) end
  from (select ${LOT_FIELDS.map((field) => `? as ${quote(field)}`).join(', ')}) as p join lots on lots.auction = p.auction and lots.lot_id = p.lot_id`;

/**
 * The batch that writeKnownLots is writing, for the trigger below: on while it updates rows
 * (`observe`), its moment and source, and whether it records market groups. TEMP objects: this
 * connection's own, nothing in the schema, no other connection's updates see them.
 */
const BATCH_TABLE = 'create temp table if not exists lot_history_batch (observe integer not null, at text not null, source text not null, groups integer not null)';
const GROUPS_TABLE =
  'create temp table if not exists lot_history_groups (make_key text not null, model_key text not null, year integer not null, month text not null, primary key (make_key, model_key, year, month)) without rowid';

/** `,"field":{"from":..,"to":..}` when the update moved the field, as lotChanges and JSON.stringify write it; `images` is stored as its JSON text. */
const changedPiece = (field: string) =>
  field === 'images'
    ? `case when OLD."images" is not NEW."images" then ',"images":{"from":' || OLD."images" || ',"to":' || NEW."images" || '}' else '' end`
    : `case when OLD.${quote(field)} is not NEW.${quote(field)} then ',"${field}":' || json_object('from', OLD.${quote(field)}, 'to', NEW.${quote(field)}) else '' end`;
const LISTING_PIECE = `case when OLD.left_listing_at is not null and NEW.left_listing_at is null then ',"${LISTING_FIELD}":{"from":"left","to":"listed"}' else '' end`;
/** comparableGroup in SQL over a row (domain/market-group.ts): the stored keys are marketKey of the brand and model. */
const groupOf = (row: 'OLD' | 'NEW') => `insert or ignore into temp.lot_history_groups
    select ${row}.make_key, ${row}.model_key, ${row}.year, substr(${row}.sale_date, 1, 7)
    from temp.lot_history_batch as b where b.groups and (${MARKET_FIELDS.map((field) => `OLD.${quote(field)} is not NEW.${quote(field)}`).join(' or ')})
      and ${row}.price > 0 and ${row}.year is not null and ${row}.sale_date is not null and ${row}.make_key is not null and ${row}.model_key is not null`;
/**
 * The version of a row writeKnownLots updates, from OLD and NEW (the statement knows which columns
 * it sets, not which values it moves from what), and the groups it leaves and enters.
 */
const TRIGGER = `create temp trigger if not exists lot_history_versions after update on main.lots
  when (select observe from temp.lot_history_batch) begin
    insert into main.lot_versions (auction, lot_id, observed_at, source, changed)
      select NEW.auction, NEW.lot_id, b.at, b.source, '{' || substr(${MERGED.map(changedPiece).join(' || ')} || ${LISTING_PIECE}, 2) || '}'
      from temp.lot_history_batch as b;
    ${groupOf('OLD')};
    ${groupOf('NEW')};
  end`;

const updateTexts = new Map<number, string>();

/**
 * The update of a probe's answer, one text per set of bits: the changed fields with their market
 * keys, updated_at and the sighting (changedColumns, as updateLots writes them), or the sighting
 * alone for a lot only back in its listing (as touchLots writes it); the listing's back in any case.
 */
function updateText(bits: number, columns: readonly string[]): string {
  let text = updateTexts.get(bits);
  if (text === undefined) {
    text = `update lots set ${columns.map((column) => `${quote(column)} = ?`).join(', ')}, "left_listing_at" = null where "auction" = ? and "lot_id" = ?`;
    updateTexts.set(bits, text);
  }
  return text;
}

/** Creates this connection's batch table, groups table and trigger unless they exist (a rolled-back batch takes back what it created). */
function historyTrigger(raw: BetterSqlite3.Database): void {
  if (directStatement(raw, "select 1 from temp.sqlite_master where type = 'trigger' and name = 'lot_history_versions'").get() !== undefined) return;
  raw.exec(BATCH_TABLE);
  raw.exec(GROUPS_TABLE);
  raw.exec(TRIGGER);
}

/**
 * SQLite: per lot (its batch's only line for it, no derived values), one prepared probe of the
 * primary key that answers which fields the line changes under the merge rule; then, for the lots
 * it changes, one prepared update of those columns a set of columns, whose version and market
 * groups a TEMP trigger on lots writes from OLD and NEW. A line as stored costs its probe alone; no
 * stored lot becomes JSON or a JavaScript value, and nothing is merged or diffed in JavaScript
 * (that cost a changed re-import more than the statements did: docs/benchmarks.md, "A changed
 * re-import in SQLite alone"). An update of only the changed columns rewrites only the indexes
 * that hold them, where an upsert's DO UPDATE of every column rewrote all seven. The batch's
 * transaction holds the write lock since its BEGIN IMMEDIATE, so the probe's answer is what the
 * update finds.
 */
export async function writeKnownLotsSqlite(
  kysely: Kysely<Database>,
  raw: BetterSqlite3.Database,
  lots: readonly Lot[],
  at: string,
  source: string,
  options: { groups: boolean },
): Promise<KnownLotsWritten> {
  if (lots.length === 0) return { outcomes: [], groups: [] };
  return kysely.getExecutor().provideConnection(async () => {
    historyTrigger(raw);
    directStatement(raw, 'delete from temp.lot_history_batch').run();
    directStatement(raw, 'insert into temp.lot_history_batch (observe, at, source, groups) values (1, ?, ?, ?)').run(at, source, options.groups ? 1 : 0);
    const probe = directStatement(raw, PROBE).pluck();
    const params: unknown[] = new Array<unknown>(LOT_FIELDS.length);
    const outcomes = new Array<KnownLotOutcome>(lots.length);
    const fields: string[] = [];
    for (let i = 0; i < lots.length; i++) {
      const lot = lots[i]!;
      for (let p = 0; p < LOT_FIELDS.length; p++) {
        const field = LOT_FIELDS[p]!;
        params[p] = field === 'images' ? JSON.stringify(lot.images) : lot[field];
      }
      const bits = probe.get(params) as number | undefined;
      if (bits === undefined) outcomes[i] = null;
      else if (bits === 0) outcomes[i] = 'same';
      else {
        fields.length = 0;
        for (let bit = 0; bit < MERGED.length; bit++) if (bits & (2 ** bit)) fields.push(MERGED[bit]!);
        const { columns, values } = fields.length > 0 ? changedColumns(fields, lot, at) : { columns: ['last_seen_at'], values: [at] };
        values.push(lot.auction, lot.lot_id);
        directStatement(raw, updateText(bits, columns)).run(values);
        outcomes[i] = fields.length > 0 ? 'updated' : 'listed';
      }
    }
    directStatement(raw, 'update temp.lot_history_batch set observe = 0').run();
    const groups = (directStatement(raw, 'select make_key, model_key, year, month from temp.lot_history_groups').raw().all() as [string, string, number, string][]).map(
      ([makeKey, modelKey, year, month]) => ({ makeKey, modelKey, year, month }),
    );
    if (groups.length > 0) directStatement(raw, 'delete from temp.lot_history_groups').run();
    return { outcomes, groups };
  });
}
