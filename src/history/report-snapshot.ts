import { LISTING_FIELD, type LotChanges } from '../domain/lot-history.ts';
import { lotJson, type Lot, type LotJson } from '../domain/lot.ts';

/**
 * A report snapshot that names versions instead of copying lots (issue 29, item 7): each lot the
 * report showed, by its key and the number of versions it had when the search read it. The state
 * of the lot then is its state now rolled back through the versions appended since, newest first
 * (the rollback firstState does, cut at that count instead of at the first version).
 *
 * Measured against the copying snapshot in docs/benchmarks.md ("A report snapshot that names
 * versions"), and not taken: docs/decisions.md says why. Kept as the reference the byte-identity
 * test holds both databases to, so that the figures can be taken again.
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
