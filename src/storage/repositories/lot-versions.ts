import type { Kysely } from 'kysely';
import { LISTING_FIELD, lotChanges, type LotChanges } from '../../domain/lot-history.ts';
import type { LotRef } from '../../domain/lot-ref.ts';
import { LOT_FIELDS, type Lot } from '../../domain/lot.ts';
import { lotFromRow, mergeLot } from '../lot-rows.ts';
import type { Database, LotRow } from '../schema.ts';

/** A lot on its way in, with the values derived for it (lots-repository.ts, IncomingLot). */
type Incoming = Lot & { readonly derived?: Partial<Lot> | undefined };

/** A version row to append. */
export interface VersionRow {
  auction: string;
  lot_id: number;
  observed_at: string;
  source: string;
  changed: string;
}

/** What a batch leaves in the history: the versions to append and the lots seen that no upsert wrote. */
export interface BatchHistory {
  versions: VersionRow[];
  /** Lots stored before the batch that its upsert left as they were, or that were out of their listing: their sighting moves. */
  touched: LotRef[];
}

export const lotKey = (auction: string, lotId: number) => `${auction}\u0000${lotId}`;

/** The batch's distinct lots, in their first order. */
export function batchKeys(lots: readonly Lot[]): LotRef[] {
  const seen = new Set<string>();
  const keys: LotRef[] = [];
  for (const lot of lots) {
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

/**
 * What one batch changed in each lot stored before it, worked out from the rows read before its
 * upsert with the upsert's own rules (mergeLot, in line order; then the derived values, which fill
 * only what is still unknown): one version per lot per batch, whatever the number of its lines,
 * since one import is one observation. A lot the batch inserted gets no row: its first version is
 * its state rolled back through the later ones (src/history/).
 */
export function batchHistory(
  before: readonly LotRow[],
  lots: readonly Incoming[],
  derivable: ReadonlySet<string>,
  at: string,
  source: string,
): BatchHistory {
  const states = new Map<string, { row: LotRow; lot: Lot; written: boolean }>();
  for (const row of before) states.set(lotKey(row.auction, row.lot_id), { row, lot: lotFromRow(row), written: false });
  for (const line of lots) {
    const state = states.get(lotKey(line.auction, line.lot_id));
    if (!state) continue;
    const merged = mergeLot(state.lot, plainLot(line));
    if (merged) {
      state.lot = merged;
      state.written = true;
    }
  }
  for (const line of lots) {
    const { derived } = line;
    const state = derived && states.get(lotKey(line.auction, line.lot_id));
    if (!state) continue;
    const filled = { ...state.lot } as Record<string, unknown>;
    for (const [field, value] of Object.entries(derived)) {
      if (derivable.has(field) && value !== null && value !== undefined && filled[field] === null) filled[field] = value;
    }
    state.lot = filled as Lot;
  }
  const versions: VersionRow[] = [];
  const touched: LotRef[] = [];
  for (const { row, lot, written } of states.values()) {
    const changed: LotChanges = lotChanges(lotFromRow(row), lot);
    if (row.left_listing_at !== null) changed[LISTING_FIELD] = { from: 'left', to: 'listed' };
    if (Object.keys(changed).length > 0) {
      versions.push({ auction: row.auction, lot_id: row.lot_id, observed_at: at, source, changed: JSON.stringify(changed) });
    }
    if (!written || row.left_listing_at !== null) touched.push({ auction: row.auction, lotId: row.lot_id });
  }
  return { versions, touched };
}

/** 500 rows a statement: five parameters each stays far below either database's limit. */
export async function appendVersions(kysely: Kysely<Database>, versions: readonly VersionRow[]): Promise<void> {
  for (let start = 0; start < versions.length; start += 500) {
    await kysely.insertInto('lot_versions').values(versions.slice(start, start + 500)).execute();
  }
}
