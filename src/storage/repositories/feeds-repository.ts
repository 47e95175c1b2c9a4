import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { FeedsTable } from '../schema.ts';
import { newId } from '../../domain/ids.ts';
import type { Feed, FeedCheckpoint, FeedCounts, FeedLastGood, FeedSettings, FeedStatus } from '../../domain/feed.ts';

function parsed<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

function toFeed(row: FeedsTable): Feed {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    format: row.format as Feed['format'],
    mapping: row.mapping,
    everySeconds: row.every_seconds,
    headers: JSON.parse(row.headers) as Feed['headers'],
    listing: row.listing === 1,
    paging: parsed<Feed['paging']>(row.paging),
    paused: row.paused === 1,
    createdAt: row.created_at,
    nextRunAt: row.next_run_at,
    lastAttemptAt: row.last_attempt_at,
    lastSuccessAt: row.last_success_at,
    lastStatus: row.last_status as FeedStatus | null,
    lastError: row.last_error,
    lastCounts: parsed<FeedCounts>(row.last_counts),
    failuresInRow: row.failures_in_row,
    alerted: row.alerted === 1,
    newestLotAt: row.newest_lot_at,
    acceptChanges: row.accept_changes === 1,
    lastGood: {
      etag: row.good_etag,
      lastModified: row.good_last_modified,
      bytes: row.good_bytes === null ? null : Number(row.good_bytes),
      rows: row.good_rows === null ? null : Number(row.good_rows),
      header: row.good_header,
      startedAt: row.good_started_at,
    },
    checkpoint: parsed<FeedCheckpoint>(row.checkpoint),
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
  };
}

/** How a pull ended, as the feed's row records it (the feeds room decides the values). */
export interface FeedPullRecord {
  status: FeedStatus;
  attemptAt: string;
  error: string | null;
  counts: FeedCounts;
  failuresInRow: number;
  alerted: boolean;
  nextRunAt: string;
  /** Set on a good pull: what the next one is sent with and judged against. */
  lastGood?: FeedLastGood;
  /** Set when the pull stored a new lot. */
  newestLotAt?: string;
  checkpoint: FeedCheckpoint | null;
}

export type LotKey = readonly [auction: string, lotId: number];

const LISTING_CHUNK = 400;

/**
 * Feeds (0021): what the operator registered, the state of the pulls, the lease that lets one
 * instance at a time pull a feed, and a paged pull's checkpoint. The lease is taken by one
 * conditional UPDATE, which both databases run atomically (PostgreSQL re-reads the row's
 * condition after waiting for a competing writer), so two instances never both win it.
 */
export class FeedsRepository {
  constructor(private readonly db: Db) {}

  /** A new feed, due at once; null when a feed has the name already. */
  async create(settings: FeedSettings, now: Date): Promise<Feed | null> {
    const at = now.toISOString();
    const row: FeedsTable = {
      id: newId('feed'),
      name: settings.name,
      url: settings.url,
      format: settings.format,
      mapping: settings.mapping,
      every_seconds: settings.everySeconds,
      headers: JSON.stringify(settings.headers),
      listing: settings.listing ? 1 : 0,
      paging: settings.paging ? JSON.stringify(settings.paging) : null,
      paused: 0,
      created_at: at,
      next_run_at: at,
      last_attempt_at: null,
      last_success_at: null,
      last_status: null,
      last_error: null,
      last_counts: null,
      failures_in_row: 0,
      alerted: 0,
      newest_lot_at: null,
      accept_changes: 0,
      good_etag: null,
      good_last_modified: null,
      good_bytes: null,
      good_rows: null,
      good_header: null,
      good_started_at: null,
      lease_owner: null,
      lease_until: null,
      checkpoint: null,
    };
    const inserted = await this.db.kysely.insertInto('feeds').values(row).onConflict((c) => c.column('name').doNothing()).executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1 ? toFeed(row) : null;
  }

  async list(): Promise<Feed[]> {
    const rows = await this.db.kysely.selectFrom('feeds').selectAll().orderBy('name').execute();
    return rows.map(toFeed);
  }

  async findByName(name: string): Promise<Feed | null> {
    const row = await this.db.kysely.selectFrom('feeds').selectAll().where('name', '=', name).executeTakeFirst();
    return row ? toFeed(row) : null;
  }

  async remove(name: string): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('feeds').select('id').where('name', '=', name).executeTakeFirst();
      if (!row) return false;
      await trx.deleteFrom('feed_listing').where('feed_id', '=', row.id).execute();
      await trx.deleteFrom('feeds').where('id', '=', row.id).execute();
      return true;
    });
  }

  async setPaused(name: string, paused: boolean): Promise<Feed | null> {
    await this.db.kysely.updateTable('feeds').set({ paused: paused ? 1 : 0 }).where('name', '=', name).execute();
    return this.findByName(name);
  }

  /** Due at once (the next poll of any instance pulls it); `acceptChanges` lets that pull differ from the last good one. */
  async makeDue(name: string, now: Date, acceptChanges: boolean): Promise<Feed | null> {
    await this.db.kysely
      .updateTable('feeds')
      .set({ next_run_at: now.toISOString(), ...(acceptChanges ? { accept_changes: 1 } : {}) })
      .where('name', '=', name)
      .execute();
    return this.findByName(name);
  }

  /**
   * Takes the lease of up to `limit` due feeds (not paused, due, nobody's lease running) for
   * `owner`; each is taken by one conditional UPDATE, so a feed another instance took first is
   * skipped.
   */
  async claimDue(owner: string, now: Date, leaseMs: number, limit: number): Promise<Feed[]> {
    const at = now.toISOString();
    const candidates = await this.db.kysely
      .selectFrom('feeds')
      .select('id')
      .where('paused', '=', 0)
      .where('next_run_at', '<=', at)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]))
      .orderBy('next_run_at')
      .limit(limit)
      .execute();
    const claimed: Feed[] = [];
    for (const { id } of candidates) {
      const feed = await this.claim(id, owner, now, leaseMs, true);
      if (feed) claimed.push(feed);
    }
    return claimed;
  }

  /** Takes the lease of one feed, due or not (`feeds run`); null when another holder's lease runs. */
  async claimByName(name: string, owner: string, now: Date, leaseMs: number): Promise<Feed | null> {
    const row = await this.db.kysely.selectFrom('feeds').select('id').where('name', '=', name).executeTakeFirst();
    return row ? this.claim(row.id, owner, now, leaseMs, false) : null;
  }

  private async claim(id: string, owner: string, now: Date, leaseMs: number, dueOnly: boolean): Promise<Feed | null> {
    const at = now.toISOString();
    let update = this.db.kysely
      .updateTable('feeds')
      .set({ lease_owner: owner, lease_until: new Date(now.getTime() + leaseMs).toISOString() })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', at)]));
    if (dueOnly) update = update.where('paused', '=', 0).where('next_run_at', '<=', at);
    const result = await update.executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return null;
    const row = await this.db.kysely.selectFrom('feeds').selectAll().where('id', '=', id).where('lease_owner', '=', owner).executeTakeFirst();
    return row ? toFeed(row) : null;
  }

  /** Extends the lease while the holder still has it; false when it was lost (expired and taken). */
  async renewLease(id: string, owner: string, until: Date): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('feeds')
      .set({ lease_until: until.toISOString() })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** A paged pull's progress, after a page is stored: a pull that dies resumes from here. */
  async saveCheckpoint(id: string, owner: string, checkpoint: FeedCheckpoint): Promise<void> {
    await this.db.kysely.updateTable('feeds').set({ checkpoint: JSON.stringify(checkpoint) }).where('id', '=', id).where('lease_owner', '=', owner).execute();
  }

  /** Records how a pull ended and gives the lease up; false when the lease had been lost. */
  async finishPull(id: string, owner: string, record: FeedPullRecord): Promise<boolean> {
    const good = record.lastGood;
    const result = await this.db.kysely
      .updateTable('feeds')
      .set({
        last_attempt_at: record.attemptAt,
        last_status: record.status,
        last_error: record.error,
        last_counts: JSON.stringify(record.counts),
        failures_in_row: record.failuresInRow,
        alerted: record.alerted ? 1 : 0,
        next_run_at: record.nextRunAt,
        checkpoint: record.checkpoint ? JSON.stringify(record.checkpoint) : null,
        lease_owner: null,
        lease_until: null,
        ...(record.status !== 'failed' ? { last_success_at: record.attemptAt, accept_changes: 0 } : {}),
        ...(good
          ? {
              good_etag: good.etag,
              good_last_modified: good.lastModified,
              good_bytes: good.bytes,
              good_rows: good.rows,
              good_header: good.header,
              good_started_at: good.startedAt,
            }
          : {}),
        ...(record.newestLotAt ? { newest_lot_at: record.newestLotAt } : {}),
      })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * A listing feed's good pull: the lots it listed are recorded; those listed before and missing
   * now have left (returned), and those that had left and are listed again have come back.
   */
  async applyListing(feedId: string, current: readonly LotKey[], now: Date): Promise<{ left: LotKey[]; returned: LotKey[] }> {
    const at = now.toISOString();
    return this.db.kysely.transaction().execute(async (trx) => {
      const rows = await trx.selectFrom('feed_listing').select(['auction', 'lot_id', 'listed']).where('feed_id', '=', feedId).execute();
      const before = new Map(rows.map((row) => [`${row.auction}\u0000${Number(row.lot_id)}`, row.listed === 1]));
      const seen = new Set<string>();
      const fresh: LotKey[] = [];
      const returned: LotKey[] = [];
      for (const key of current) {
        const text = `${key[0]}\u0000${key[1]}`;
        if (seen.has(text)) continue;
        seen.add(text);
        const listed = before.get(text);
        if (listed === undefined) fresh.push(key);
        else if (!listed) returned.push(key);
      }
      const left: LotKey[] = rows.filter((row) => row.listed === 1 && !seen.has(`${row.auction}\u0000${Number(row.lot_id)}`)).map((row) => [row.auction, Number(row.lot_id)] as const);
      for (let i = 0; i < fresh.length; i += LISTING_CHUNK) {
        const chunk = fresh.slice(i, i + LISTING_CHUNK).map(([auction, lotId]) => ({ feed_id: feedId, auction, lot_id: lotId, listed: 1, changed_at: at }));
        await trx.insertInto('feed_listing').values(chunk).execute();
      }
      for (const [keys, listed] of [[left, 0], [returned, 1]] as const) {
        for (let i = 0; i < keys.length; i += LISTING_CHUNK) {
          const chunk = keys.slice(i, i + LISTING_CHUNK);
          await trx
            .updateTable('feed_listing')
            .set({ listed, changed_at: at })
            .where('feed_id', '=', feedId)
            .where((eb) => eb.or(chunk.map(([auction, lotId]) => eb.and([eb('auction', '=', auction), eb('lot_id', '=', lotId)]))))
            .execute();
        }
      }
      return { left, returned };
    });
  }

  /** Lots a listing feed lists now and lots that left it. */
  async listingCounts(feedId: string): Promise<{ listed: number; left: number }> {
    const rows = await this.db.kysely
      .selectFrom('feed_listing')
      .select(['listed', sql<number>`count(*)`.as('n')])
      .where('feed_id', '=', feedId)
      .groupBy('listed')
      .execute();
    const of = (listed: number) => Number(rows.find((row) => row.listed === listed)?.n ?? 0);
    return { listed: of(1), left: of(0) };
  }
}
