import { LISTING_FIELD, type LotChanges, type LotVersion, type StoredLotHistory } from '../domain/lot-history.ts';
import { LOT_FIELDS, type Lot } from '../domain/lot.ts';

/** A lot's history as the API answers it (contract, "Lot history"): oldest version first. */
export interface LotHistory {
  auction: string;
  lot_id: number;
  vin: string;
  first_seen_at: string;
  last_seen_at: string;
  versions: LotVersion[];
}

const isKnown = (field: string, value: unknown) => (field === 'images' ? Array.isArray(value) && value.length > 0 : value !== null && value !== undefined);

/**
 * The lot as its first version saw it: its state now, rolled back through each later version's
 * `from` values, newest first. Storage keeps no row for the first version (0019): this is it.
 */
export function firstState(current: Lot, laterVersions: readonly LotVersion[]): Lot {
  const state = { ...current } as Record<string, unknown>;
  for (let i = laterVersions.length - 1; i >= 0; i--) {
    for (const [field, change] of Object.entries(laterVersions[i]!.changed)) {
      if (field !== LISTING_FIELD) state[field] = change.from;
    }
  }
  return state as Lot;
}

/** Every known field of a lot as a change from null: a first version's `changed`. */
export function changesFromNothing(lot: Lot): LotChanges {
  const changed: LotChanges = {};
  for (const field of LOT_FIELDS) if (isKnown(field, lot[field])) changed[field] = { from: null, to: lot[field] };
  return changed;
}

/**
 * The versions of a lot, oldest first: the first one (every known field, from null) rebuilt from
 * the kept ones, then each kept one as it was stored.
 */
export function lotHistory(stored: StoredLotHistory): LotHistory {
  const first: LotVersion = {
    observed_at: stored.firstSeenAt,
    source: stored.firstSource,
    changed: changesFromNothing(firstState(stored.lot, stored.laterVersions)),
  };
  return {
    auction: stored.lot.auction,
    lot_id: stored.lot.lot_id,
    vin: stored.lot.vin,
    first_seen_at: stored.firstSeenAt,
    last_seen_at: stored.lastSeenAt,
    versions: [first, ...stored.laterVersions],
  };
}

/** The states a lot went through, oldest first, one per version (listing changes leave the lot as it was). */
export function statesOf(history: LotHistory): Lot[] {
  const states: Lot[] = [];
  let state = {} as Record<string, unknown>;
  for (const field of LOT_FIELDS) state[field] = field === 'images' ? [] : null;
  for (const version of history.versions) {
    state = { ...state };
    for (const [field, change] of Object.entries(version.changed)) if (field !== LISTING_FIELD) state[field] = change.to;
    states.push(state as Lot);
  }
  return states;
}

/**
 * A lot's history as a report that named its versions showed it: the first version and the `later`
 * ones it had then (null when the report did not name the lot), last seen by `at` as historyAsOf.
 */
export function historyAsOfVersions(history: LotHistory, later: number | undefined, at: string): LotHistory | null {
  if (later === undefined) return null;
  return withVersions(history, history.versions.slice(0, 1 + later), at);
}

/**
 * A lot's history as it stood at `at` (a report's moment): the versions observed by then, and the
 * last sighting by then (the last version's, when the lot has been seen since: sightings that
 * changed nothing are not kept one by one). Null when the lot was first seen after `at`.
 */
export function historyAsOf(history: LotHistory, at: string): LotHistory | null {
  const versions = history.versions.filter((version) => version.observed_at <= at);
  return versions.length === 0 ? null : withVersions(history, versions, at);
}

/** The history with these of its versions, last seen by `at`: its last sighting by then, else the last version's. */
function withVersions(history: LotHistory, versions: LotVersion[], at: string): LotHistory {
  const lastSeen = history.last_seen_at <= at ? history.last_seen_at : versions.at(-1)!.observed_at;
  return { ...history, last_seen_at: lastSeen, versions };
}
