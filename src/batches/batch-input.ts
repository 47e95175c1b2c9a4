import { parse } from 'csv-parse/sync';
import { MAX_BATCH_ITEMS, type BatchItemInput } from '../domain/batch.ts';

/** What a batch's body comes to: its items in order, or why it is refused (the field and what is wrong). */
export type BatchInputResult = { ok: true; items: BatchItemInput[] } | { ok: false; field: string; messages: string[] };

/** Bounds of one item's fields: far past any real VIN or auction word, so that the search's own check words the refusal. */
const MAX_VIN_CHARS = 64;
const MAX_AUCTION_CHARS = 40;
const MAX_LOT_ID = 2147483647;
/** A CSV row of a spreadsheet with a few more columns than ours: past this, a row is not one of a list of vehicles. */
const MAX_CSV_RECORD_BYTES = 4096;

const refuse = (messages: string[], field = 'items'): BatchInputResult => ({ ok: false, field, messages });

function countRefusal(count: number): BatchInputResult | null {
  if (count === 0) return refuse([`A batch holds 1 to ${MAX_BATCH_ITEMS} items; this one has none.`]);
  if (count > MAX_BATCH_ITEMS) return refuse([`A batch holds 1 to ${MAX_BATCH_ITEMS} items; this one has ${count}. Split it into several batches.`]);
  return null;
}

/**
 * A JSON body: `{"items": [{"vin": "..."} | {"auction": "...", "lot_id": n}, ...]}`. The shape is
 * checked here (each item a VIN or a lot, never both); the VIN, auction and lot id themselves are
 * checked by each item's search, whose refusal is that item's 422, not the batch's.
 */
export function itemsFromJson(body: unknown): BatchInputResult {
  const items = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { items?: unknown }).items : undefined;
  if (!Array.isArray(items)) return refuse(['The body must be {"items": [...]}: an array of {"vin": "..."} or {"auction": "...", "lot_id": n}.']);
  const count = countRefusal(items.length);
  if (count) return count;
  const out: BatchItemInput[] = [];
  for (const [index, item] of items.entries()) {
    const checked = checkItem(item);
    if (typeof checked === 'string') return refuse([`Item ${index}: ${checked}`]);
    out.push(checked);
  }
  return { ok: true, items: out };
}

function checkItem(item: unknown): BatchItemInput | string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'must be an object: {"vin": "..."} or {"auction": "...", "lot_id": n}.';
  const { vin, auction, lot_id: lotId, ...rest } = item as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) return `unknown field ${extra[0]}; an item takes vin, or auction and lot_id.`;
  if (vin !== undefined) {
    if (auction !== undefined || lotId !== undefined) return 'give vin, or auction and lot_id, not both.';
    if (typeof vin !== 'string') return 'vin must be a string.';
    if (vin.length > MAX_VIN_CHARS) return `vin is longer than ${MAX_VIN_CHARS} characters.`;
    return { vin };
  }
  if (auction === undefined || lotId === undefined) return 'give vin, or auction and lot_id.';
  if (typeof auction !== 'string' || auction.length === 0 || auction.length > MAX_AUCTION_CHARS) return `auction must be a word of 1 to ${MAX_AUCTION_CHARS} characters.`;
  if (typeof lotId !== 'number' || !Number.isInteger(lotId) || lotId < 1 || lotId > MAX_LOT_ID) return `lot_id must be a whole number from 1 to ${MAX_LOT_ID}.`;
  return { auction, lot_id: lotId };
}

/**
 * A CSV body with a header row naming a `vin` column (case and spaces ignored; other columns are
 * left alone, as a spreadsheet has them). A row whose VIN is empty may name a lot in `auction` and
 * `lot_id` columns instead. Empty lines are skipped; a row that cannot be read is refused with its line.
 */
export function itemsFromCsv(text: string): BatchInputResult {
  let rows: string[][];
  try {
    rows = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true, max_record_size: MAX_CSV_RECORD_BYTES, to: MAX_BATCH_ITEMS + 2 }) satisfies string[][];
  } catch (error) {
    return refuse([`The CSV cannot be read: ${(error as Error).message}`], 'body');
  }
  const [header, ...records] = rows;
  const names = (header ?? []).map((name) => name.trim().toLowerCase());
  const vinAt = names.indexOf('vin');
  if (vinAt < 0) return refuse(['The CSV must start with a header row that names a vin column (vin,auction,lot_id: auction and lot_id are optional).'], 'body');
  const count = countRefusal(records.length);
  if (count) return count;
  const auctionAt = names.indexOf('auction');
  const lotAt = names.indexOf('lot_id');
  const items: BatchItemInput[] = [];
  for (const [offset, record] of records.entries()) {
    const line = offset + 2;
    const vin = record[vinAt] ?? '';
    const auction = auctionAt >= 0 ? (record[auctionAt] ?? '') : '';
    const lot = lotAt >= 0 ? (record[lotAt] ?? '') : '';
    if (vin === '' && auction !== '' && lot !== '') {
      if (!/^[0-9]{1,10}$/.test(lot) || Number(lot) < 1 || Number(lot) > MAX_LOT_ID) return refuse([`Line ${line}: lot_id must be a whole number from 1 to ${MAX_LOT_ID}.`]);
      if (auction.length > MAX_AUCTION_CHARS) return refuse([`Line ${line}: auction is longer than ${MAX_AUCTION_CHARS} characters.`]);
      items.push({ auction, lot_id: Number(lot) });
    } else {
      if (vin.length > MAX_VIN_CHARS) return refuse([`Line ${line}: vin is longer than ${MAX_VIN_CHARS} characters.`]);
      items.push({ vin });
    }
  }
  return { ok: true, items };
}
