import { LISTING_FIELD, type LotChanges } from './lot-history.ts';
import { lotJson, type Lot, type LotJson } from './lot.ts';

/**
 * A report snapshot that names versions instead of copying lots (issue 29, item 7; 0025): each lot
 * the report showed, by its key and the number of versions it had when the search read it (one
 * statement read both, so they are of one moment). The lot as the report showed it is its state now
 * rolled back through the versions appended since, newest first: the rollback firstState does, cut
 * at that count instead of at the first version. docs/decisions.md, "A report snapshot that names
 * lot versions", says why this is exact and what falls back to a copy.
 */
export interface NamedLot {
  auction: string;
  lot_id: number;
  /** How many lot_versions rows the lot had when the report's search read it. */
  versions: number;
}

/** A lot's state now and its versions in the order they were appended (not by observed_at: two may share a moment). */
export interface LotNowAndVersions {
  lot: Lot;
  /** `changed` of each version, oldest appended first. */
  changes: readonly LotChanges[];
}

/**
 * The stored text of a named snapshot: an object, where a copied snapshot is an array of lots, so
 * that one look at the first character tells the two forms apart (reports made before 0025, and
 * reports whose photos the archive rewrote, keep copies).
 */
export function namedSnapshotText(lots: readonly NamedLot[]): string {
  return `{"versions":${JSON.stringify(lots.map((lot) => [lot.auction, lot.lot_id, lot.versions]))}}`;
}

/** Whether a stored snapshot names versions (else it is a JSON array of copied lots). */
export const isNamedSnapshot = (snapshot: string): boolean => snapshot.startsWith('{');

/** The lots a named snapshot names, or null for a copied one (a JSON array of lots). */
export function namedLotsOf(snapshot: string): NamedLot[] | null {
  if (!isNamedSnapshot(snapshot)) return null;
  const { versions } = JSON.parse(snapshot) as { versions: [string, number, number][] };
  return versions.map(([auction, lot_id, count]) => ({ auction, lot_id, versions: count }));
}

/**
 * The lot as a report that named it showed it: its state now with every version appended after
 * the first `named.versions` undone, newest first, as LotJson (the bytes a search answers).
 */
export function namedLotJson(named: NamedLot, stored: LotNowAndVersions): LotJson {
  const state = { ...stored.lot } as Record<string, unknown>;
  for (let i = stored.changes.length - 1; i >= named.versions; i--) {
    for (const [field, change] of Object.entries(stored.changes[i]!)) {
      if (field !== LISTING_FIELD) state[field] = change.from;
    }
  }
  return lotJson(state as Lot);
}
