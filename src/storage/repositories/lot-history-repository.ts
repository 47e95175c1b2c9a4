import type { Kysely } from 'kysely';
import type { Db } from '../database.ts';
import type { Database, LotRow } from '../schema.ts';
import {
  BEFORE_HISTORY_SOURCE,
  LISTING_FIELD,
  normaliseSource,
  type ListingState,
  type LotChanges,
  type LotVersion,
  type StoredLotHistory,
} from '../../domain/lot-history.ts';
import type { LotRef } from '../../domain/lot-ref.ts';
import { lotFromRow } from '../lot-rows.ts';
import { lotKey, type VersionRow } from './lot-versions.ts';

/** What a listing change did: how many of the lots named changed their listing (the others already had it, or are not known). */
export interface ListingResult {
  changed: number;
}

/** The most lots one listing call takes: a feed's pull is read in pages of far fewer. */
export const MAX_LISTING_KEYS = 10_000;

/**
 * The kept history of lots (0019): the versions the imports append (lot-versions.ts, in the lots
 * repository's batch), read back for the history endpoint and the report, and the listing changes
 * a feed records when lots leave its listing or come back.
 */
export class LotHistoryRepository {
  constructor(private readonly db: Db) {}

  /** One lot's history, or null when the lot is not known. */
  async historyOf(ref: LotRef): Promise<StoredLotHistory | null> {
    const row = await this.lotsWithSightings()
      .where('lots.auction', '=', ref.auction)
      .where('lots.lot_id', '=', ref.lotId)
      .executeTakeFirst();
    if (!row) return null;
    const versions = await this.db.kysely
      .selectFrom('lot_versions')
      .select(['observed_at', 'source', 'changed'])
      .where('auction', '=', ref.auction)
      .where('lot_id', '=', ref.lotId)
      .orderBy('observed_at')
      .execute();
    return storedHistory(row, versions.map(versionFromRow));
  }

  /** The history of every lot of a vehicle (the report), by `auction/lot_id`. Two probes: lots_vin_idx, then the versions of those lots. */
  async historiesOfVin(vin: string): Promise<Map<string, StoredLotHistory>> {
    const rows = await this.lotsWithSightings().where('lots.vin', '=', vin).execute();
    const histories = new Map<string, StoredLotHistory>();
    if (rows.length === 0) return histories;
    const versions = await this.db.kysely
      .selectFrom('lot_versions')
      .innerJoin('lots', (join) => join.onRef('lots.auction', '=', 'lot_versions.auction').onRef('lots.lot_id', '=', 'lot_versions.lot_id'))
      .select(['lot_versions.auction', 'lot_versions.lot_id', 'lot_versions.observed_at', 'lot_versions.source', 'lot_versions.changed'])
      .where('lots.vin', '=', vin)
      .orderBy('lot_versions.observed_at')
      .execute();
    const byLot = new Map<string, LotVersion[]>();
    for (const version of versions) {
      const key = lotKey(version.auction, Number(version.lot_id));
      const list = byLot.get(key) ?? [];
      list.push(versionFromRow(version));
      byLot.set(key, list);
    }
    for (const row of rows) histories.set(historyKey(row.auction, row.lot_id), storedHistory(row, byLot.get(lotKey(row.auction, row.lot_id)) ?? []));
    return histories;
  }

  /** Lots with their sighting of lot_sightings (0024), if any: one probe of its primary key a lot. */
  private lotsWithSightings() {
    return this.db.kysely
      .selectFrom('lots')
      .leftJoin('lot_sightings as s', (join) => join.onRef('s.auction', '=', 'lots.auction').onRef('s.lot_id', '=', 'lots.lot_id'))
      .selectAll('lots')
      .select('s.last_seen_at as sighted_at');
  }

  /**
   * Records that these lots left their auction's listing (`left`), or came back to it (`listed`),
   * at `now`, as seen by `source` (a feed's name): a version `{"listing": {"from", "to"}}` for
   * each lot whose listing this changes, in one transaction. A lot an import names again is back
   * in its listing by that import (lot-versions.ts). At most MAX_LISTING_KEYS lots a call.
   */
  async recordListing(refs: readonly LotRef[], to: ListingState, options: { now?: Date; source?: string } = {}): Promise<ListingResult> {
    if (refs.length > MAX_LISTING_KEYS) throw new RangeError(`recordListing takes at most ${MAX_LISTING_KEYS} lots a call; got ${refs.length}`);
    if (refs.length === 0) return { changed: 0 };
    const at = (options.now ?? new Date()).toISOString();
    const source = normaliseSource(options.source);
    const write = async (kysely: Kysely<Database>): Promise<ListingResult> => {
      const rows = await this.db.dialect.lotRowsByKey(kysely, refs);
      const moving = rows.filter((row) => (to === 'left') === (row.left_listing_at === null));
      const changed: LotChanges = { [LISTING_FIELD]: to === 'left' ? { from: 'listed', to: 'left' } : { from: 'left', to: 'listed' } };
      const versions: VersionRow[] = moving.map((row) => ({ auction: row.auction, lot_id: row.lot_id, observed_at: at, source, changed: JSON.stringify(changed) }));
      if (to === 'listed') {
        await this.db.dialect.touchLots(kysely, moving.map((row) => ({ auction: row.auction, lotId: row.lot_id })), at);
      } else {
        for (const row of moving) {
          await kysely.updateTable('lots').set({ left_listing_at: at }).where('auction', '=', row.auction).where('lot_id', '=', row.lot_id).execute();
        }
      }
      await this.db.dialect.appendVersions(kysely, versions);
      return { changed: moving.length };
    };
    if (this.db.kysely.isTransaction) return write(this.db.kysely);
    return this.db.kysely.transaction().execute(write);
  }
}

/** The key historiesOfVin answers by. */
export const historyKey = (auction: string, lotId: number) => `${auction}/${lotId}`;

function versionFromRow(row: { observed_at: string; source: string; changed: string }): LotVersion {
  return { observed_at: row.observed_at, source: row.source, changed: JSON.parse(row.changed) as LotChanges };
}

function storedHistory(row: LotRow & { sighted_at: string | null }, laterVersions: LotVersion[]): StoredLotHistory {
  // Set by every write since 0019, and by its backfill before.
  const written = row.last_seen_at ?? row.updated_at;
  return {
    lot: lotFromRow(row),
    firstSeenAt: row.created_at,
    // The later of the two: a lot's row moves when a batch writes it, its sighting when a batch leaves it unchanged (0024).
    lastSeenAt: row.sighted_at !== null && row.sighted_at > written ? row.sighted_at : written,
    firstSource: row.source ?? BEFORE_HISTORY_SOURCE,
    laterVersions,
  };
}
