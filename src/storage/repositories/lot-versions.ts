import { LISTING_FIELD, lotChanges, type LotChanges } from '../../domain/lot-history.ts';
import type { LotRef } from '../../domain/lot-ref.ts';
import { LOT_FIELDS, lotJson, type Lot } from '../../domain/lot.ts';
import type { LotUpdate, LotVersionRow, StoredLotJson } from '../dialects/dialect.ts';
import { mergeLot } from '../lot-rows.ts';

/** A lot on its way in, with the values derived for it (lots-repository.ts, IncomingLot). */
type Incoming = Lot & { readonly derived?: Partial<Lot> | undefined };

/** A version row to append (appended by the dialect's appendVersions). */
export type VersionRow = LotVersionRow;

/** What a batch leaves in the history: the versions to append and the lots seen that no upsert wrote. */
export interface BatchHistory {
  versions: VersionRow[];
  /** Lots stored before the batch that were out of their listing: back in it, their row's sighting moves with it. */
  touched: LotRef[];
  /**
   * Lots stored before the batch, in their listing, that its upsert left as they were: only their
   * sighting moves, in lot_sightings (0024), so that their wide row is not rewritten. A lot the
   * upsert wrote has its sighting in its row (a row it may still have in lot_sightings is older,
   * and the later of the two is read).
   */
  sighted: LotRef[];
}

export const lotKey = (auction: string, lotId: number) => `${auction}\u0000${lotId}`;

/** The batch's distinct lots, in their first order; without the lines `skip` marks (written by the dialect already: writeKnownLots). */
export function batchKeys(lots: readonly Lot[], skip: readonly boolean[] | null = null): LotRef[] {
  const seen = new Set<string>();
  const keys: LotRef[] = [];
  for (let i = 0; i < lots.length; i++) {
    if (skip?.[i]) continue;
    const lot = lots[i]!;
    const key = lotKey(lot.auction, lot.lot_id);
    if (seen.has(key)) continue;
    seen.add(key);
    keys.push({ auction: lot.auction, lotId: lot.lot_id });
  }
  return keys;
}

const plainLot = (lot: Incoming): Lot => {
  const copy = {} as Record<string, unknown>;
  for (const field of LOT_FIELDS) copy[field] = lot[field];
  return copy as Lot;
};

/** A lot stored before the batch, as the batch goes through its lines. */
interface StoredState {
  row: StoredLotJson;
  /** The stored lot, parsed from its JSON text only when a line differs from that text (or derived values may fill it). */
  original: Lot | null;
  /** The lot after the lines so far (the stored one until a line changes it). */
  lot: Lot | null;
  /** The lines that change it, in order. */
  lines: Lot[];
  written: boolean;
  filled: boolean;
  /** What the lines change (lotChanges of original and lot), once they are all merged in. */
  changes: LotChanges | null;
}

const parsed = (state: StoredState): Lot => {
  if (state.lot === null) state.original = state.lot = JSON.parse(state.row.lot) as Lot;
  return state.lot;
};

/** What a batch leaves in the history, and which of its lines its upsert must write. */
export interface BatchPlan extends BatchHistory {
  /**
   * Per line, in order: false when the line changes nothing of the lot as stored (or as the lines
   * before it in the batch left it), so that the upsert may skip it: the upsert's own rule would
   * find nothing to write.
   */
  write: boolean[];
  /** Per line, in order: its lot was stored before the batch (a line that writes it updates it). */
  known: boolean[];
  /** The lots stored before the batch that its lines change, with what they change (dialect.ts, LotUpdate). */
  updates: LotUpdate[];
}

/**
 * What one batch changes in each lot stored before it, worked out from the stored lots read before
 * its upsert with the upsert's own rules (mergeLot, in line order; then the derived values, which
 * fill only what is still unknown): one version per lot per batch, whatever the number of its
 * lines, since one import is one observation. A lot the batch inserts gets no row: its first
 * version is its state rolled back through the later ones (src/history/).
 *
 * A line whose JSON text is the stored lot's is unchanged without parsing either (the common
 * case of a re-import): the stored text is the database's LotJson, which equals lotJson() of the
 * same values. A line that differs from it is merged into the parsed lot, as the upsert would.
 * The lines `handled` marks were written by the dialect itself (writeKnownLots: each its lot's
 * only line), versions and all: they count here as known and not to write, and nothing else.
 */
export function planBatch(
  before: readonly StoredLotJson[],
  lots: readonly Incoming[],
  derivable: ReadonlySet<string>,
  at: string,
  source: string,
  handled: readonly boolean[] | null = null,
): BatchPlan {
  const states = new Map<string, StoredState>();
  for (const row of before) states.set(lotKey(row.auction, row.lot_id), { row, original: null, lot: null, lines: [], written: false, filled: false, changes: null });
  const write = new Array<boolean>(lots.length);
  const known = new Array<boolean>(lots.length);
  const sighted: LotRef[] = [];
  // In the order of their first changing line, so that concurrent imports of one file lock rows in one order (PostgreSQL).
  const changing: StoredState[] = [];
  for (let i = 0; i < lots.length; i++) {
    const line = lots[i]!;
    if (handled?.[i]) {
      known[i] = true;
      write[i] = false;
      continue;
    }
    const state = states.get(lotKey(line.auction, line.lot_id));
    known[i] = state !== undefined;
    if (!state) {
      write[i] = true;
      continue;
    }
    if (state.lot === null && lotJson(line) === state.row.lot) {
      write[i] = false;
      continue;
    }
    const plain = plainLot(line);
    const merged = mergeLot(parsed(state), plain);
    write[i] = merged !== null;
    if (merged) {
      if (!state.written) changing.push(state);
      state.lot = merged;
      state.lines.push(plain);
      state.written = true;
    }
  }
  const updates: LotUpdate[] = changing.map((state) => {
    const { row, original, lot, lines } = state;
    state.changes = lotChanges(original!, lot!);
    return { auction: row.auction, lot_id: row.lot_id, lines, stored: original!, merged: lot!, fields: Object.keys(state.changes) };
  });
  for (const line of lots) {
    const { derived } = line;
    const state = derived && states.get(lotKey(line.auction, line.lot_id));
    if (!state) continue;
    const filled = { ...parsed(state) } as Record<string, unknown>;
    for (const [field, value] of Object.entries(derived)) {
      if (derivable.has(field) && value !== null && value !== undefined && filled[field] === null) {
        filled[field] = value;
        state.filled = true;
      }
    }
    state.lot = filled as Lot;
  }
  const versions: VersionRow[] = [];
  const touched: LotRef[] = [];
  for (const { row, original, lot, written, filled, changes } of states.values()) {
    // Nothing merged in and nothing filled: the lot is as it was (the common case of a re-import). Merged in only: the updates' changes.
    const changed: LotChanges = filled && original && lot ? lotChanges(original, lot) : written && changes ? changes : {};
    if (row.left_listing_at !== null) changed[LISTING_FIELD] = { from: 'left', to: 'listed' };
    if (Object.keys(changed).length > 0) {
      versions.push({ auction: row.auction, lot_id: row.lot_id, observed_at: at, source, changed: JSON.stringify(changed) });
    }
    if (row.left_listing_at !== null) touched.push({ auction: row.auction, lotId: row.lot_id });
    else if (!written) sighted.push({ auction: row.auction, lotId: row.lot_id });
  }
  return { versions, touched, sighted, write, known, updates };
}

/**
 * The lines a dialect may check against their stored lot and write in the database (the dialect's
 * writeKnownLots): a lot's only line in the batch, with no derived values to fill in. A lot named
 * twice, or with derived values, goes through planBatch's merge, which follows its lines in order.
 */
export function probeCandidates(lots: readonly Incoming[]): number[] {
  const count = new Map<string, number>();
  for (const lot of lots) {
    const key = lotKey(lot.auction, lot.lot_id);
    count.set(key, (count.get(key) ?? 0) + 1);
  }
  const candidates: number[] = [];
  for (let i = 0; i < lots.length; i++) {
    const lot = lots[i]!;
    if (lot.derived === undefined && count.get(lotKey(lot.auction, lot.lot_id)) === 1) candidates.push(i);
  }
  return candidates;
}
