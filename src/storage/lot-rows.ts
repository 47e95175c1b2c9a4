import type { LotRow } from './schema.ts';
import { LOT_FIELDS, type Lot } from '../domain/lot.ts';
import { marketKey } from '../domain/market-key.ts';

export function lotFromRow(row: LotRow): Lot {
  const lot = {} as Record<string, unknown>;
  for (const field of LOT_FIELDS) lot[field] = field === 'images' ? JSON.parse(row.images) : row[field];
  return lot as Lot;
}

/** Two photo lists alike, element by element (an import's hot path: no JSON of either). */
export function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** What an upsert did to one lot. */
export type LotUpsertStatus = 'inserted' | 'updated' | 'unchanged';

/**
 * The merge rule of an upsert: a field the incoming lot leaves unknown (null, or no images) keeps
 * the value already stored, because a thinner feed must not erase what a richer one told us;
 * a field it gives replaces the stored one. Returns the merged lot, or null when nothing changes.
 *
 * The repository applies this rule in SQL (upsertStatementSql below), so that a batch is one
 * statement per lot instead of a read and a write; this function is the rule's reference, and a
 * test holds the SQL to it.
 */
export function mergeLot(stored: Lot, incoming: Lot): Lot | null {
  const merged = { ...stored } as Record<string, unknown>;
  let changed = false;
  for (const field of LOT_FIELDS) {
    const value = incoming[field];
    if (field === 'images') {
      const images = value as string[];
      if (images.length > 0 && !sameList(images, stored.images)) {
        merged.images = images;
        changed = true;
      }
      continue;
    }
    if (value !== null && value !== stored[field]) {
      merged[field] = value;
      changed = true;
    }
  }
  return changed ? (merged as Lot) : null;
}

/**
 * The keys the catalogue and the market compare makes, models and damages on (0018), derived from
 * the source values they sit beside: a merge keeps a key exactly when it keeps its source value.
 */
const KEYED: readonly (readonly [string, 'brand' | 'model' | 'primary_damage'])[] = [
  ['make_key', 'brand'],
  ['model_key', 'model'],
  ['damage_key', 'primary_damage'],
];

/**
 * Every column of a lots row an upsert writes, in the order of the parameters rowParams gives:
 * `source` (what first brought the lot) is written by the insert only, `last_seen_at` by every
 * write (lot history, 0019), and the market keys (0018) beside their source values.
 */
export const LOT_COLUMNS: readonly string[] = [...LOT_FIELDS, 'created_at', 'updated_at', 'source', 'last_seen_at', ...KEYED.map(([column]) => column)];
const KEY_FIELDS = new Set<string>(['auction', 'lot_id']);
const EMPTY_IMAGES = "'[]'";

const quote = (name: string) => `"${name}"`;

/** The parameters of one lot's row, in LOT_COLUMNS order: the hot path of an import. */
export function rowParams(lot: Lot, now: string, source: string): unknown[] {
  const params: unknown[] = new Array(LOT_COLUMNS.length);
  let i = 0;
  for (const field of LOT_FIELDS) params[i++] = field === 'images' ? JSON.stringify(lot.images) : lot[field];
  params[i++] = now;
  params[i++] = now;
  params[i++] = source;
  params[i++] = now;
  params[i++] = marketKey(lot.brand);
  params[i++] = marketKey(lot.model);
  params[i] = marketKey(lot.primary_damage);
  return params;
}

/**
 * The columns a change of these fields writes in a lots row, and their values from the lot after the
 * change: each field's own column, a market key beside its source value (0018), and the moment in
 * `updated_at` and `last_seen_at`, as the upsert's DO UPDATE writes them. `fields` in LOT_FIELDS
 * order (lotChanges' order), so that one set of fields always makes the same statement.
 */
export function changedColumns(fields: readonly string[], lot: Lot, now: string): { columns: string[]; values: unknown[] } {
  const columns: string[] = [];
  const values: unknown[] = [];
  for (const field of fields) {
    columns.push(field);
    values.push(field === 'images' ? JSON.stringify(lot.images) : lot[field as keyof Lot]);
  }
  for (const [column, field] of KEYED) {
    if (!fields.includes(field)) continue;
    columns.push(column);
    values.push(marketKey(lot[field]));
  }
  columns.push('updated_at', 'last_seen_at');
  values.push(now, now);
  return { columns, values };
}

/**
 * `INSERT ... ON CONFLICT (auction, lot_id) DO UPDATE` carrying mergeLot's rule: each field takes
 * the incoming value unless that is null (images: unless it is the empty list), and the update
 * happens only when some field really changes (the WHERE), so an unchanged lot is not written at
 * all and keeps its updated_at. The same text runs on SQLite (3.39+ has IS DISTINCT FROM) and
 * PostgreSQL; only the placeholders and RETURNING differ (SQLite counts without it), which each
 * dialect's lots-upsert.ts (storage/dialects/) sets.
 */
export function upsertStatementSql(options: { rows: number; placeholder: (index: number) => string; returning?: string }): string {
  const width = LOT_COLUMNS.length;
  const values: string[] = [];
  for (let row = 0; row < options.rows; row++) {
    const cells: string[] = [];
    for (let column = 0; column < width; column++) cells.push(options.placeholder(row * width + column));
    values.push(`(${cells.join(', ')})`);
  }
  const merged = LOT_FIELDS.filter((field) => !KEY_FIELDS.has(field));
  const set = merged.map((field) =>
    field === 'images'
      ? `"images" = case when excluded."images" = ${EMPTY_IMAGES} then lots."images" else excluded."images" end`
      : `${quote(field)} = coalesce(excluded.${quote(field)}, lots.${quote(field)})`,
  );
  // A key follows its source value (kept when the incoming one is null), which the WHERE below already watches.
  for (const [column, field] of KEYED) set.push(`${quote(column)} = case when excluded.${quote(field)} is null then lots.${quote(column)} else excluded.${quote(column)} end`);
  const changed = merged.map((field) =>
    field === 'images'
      ? `(excluded."images" <> ${EMPTY_IMAGES} and excluded."images" <> lots."images")`
      : `(excluded.${quote(field)} is not null and excluded.${quote(field)} is distinct from lots.${quote(field)})`,
  );
  return (
    `insert into lots (${LOT_COLUMNS.map(quote).join(', ')}) values ${values.join(', ')} ` +
    `on conflict ("auction", "lot_id") do update set ${set.join(', ')}, "updated_at" = excluded."updated_at", "last_seen_at" = excluded."last_seen_at" ` +
    `where ${changed.join(' or ')}${options.returning ? ` returning ${options.returning}` : ''}`
  );
}

/**
 * What a market value reads of each comparable, for its figures and to rank the closest sales, in
 * the order of the lists each dialect's comparablesJson writes (storage/dialects/{sqlite,postgres}/market-rows.ts):
 * all held by lots_market_idx (0023), so the read touches no table row. Not the damage key: it is
 * marketKey of the damage (every upsert writes it so), computed once per spelling, where reading it
 * cost a string per comparable.
 */
export const COMPARABLE_COLUMNS = ['price', 'retail_value', 'primary_damage', 'sale_date', 'year', 'odometer', 'auction', 'lot_id'] as const;

/** The comparables as the dialects' JSON gives them: one list per column of COMPARABLE_COLUMNS, in the same row order. */
export type ComparableLists = [
  prices: number[],
  retailValues: (number | null)[],
  damages: (string | null)[],
  saleDates: string[],
  years: number[],
  odometers: (number | null)[],
  auctions: string[],
  lotIds: number[],
];
