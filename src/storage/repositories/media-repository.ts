import { sql } from 'kysely';
import type { Db } from '../database.ts';
import type { QueuedUrl } from '../dialects/dialect.ts';
import type { Lot } from '../../domain/lot.ts';
import { isMediaExt, type ArchivedImage, type MediaClaim, type MediaObject, type MediaStatus } from '../../domain/media.ts';

export type { QueuedUrl };

export interface FailureRecord {
  readonly error: string;
  /** Attempts made, this one included. */
  readonly attempts: number;
  readonly nextAttemptAt: string;
  /** Every attempt failed: 'failed' (retried after a long pause) rather than queued again. */
  readonly givenUp: boolean;
}

/** The photo archive's queue and what it archived (0008). */
export class MediaRepository {
  constructor(private readonly db: Db) {}

  /**
   * Queues URLs not yet known, in the caller's transaction if this repository is bound to one (what
   * to queue is media/archive-queue.ts's): one insert-or-ignore per URL, so a URL is queued once
   * whichever lot or import names it again. Returns how many were new.
   */
  async enqueue(urls: readonly QueuedUrl[], now = new Date()): Promise<number> {
    if (urls.length === 0) return 0;
    return this.db.dialect.enqueueMediaUrls(this.db.kysely, urls, now.toISOString());
  }

  /**
   * Leases up to `limit` due images to `owner` until `now + leaseMs`, in queue order (a lot's
   * images in the lot's order). Another claim, here or in another instance, skips them until the
   * lease runs out.
   */
  async claim(owner: string, limit: number, leaseMs: number, options: { skipHosts?: readonly string[]; now?: Date } = {}): Promise<MediaClaim[]> {
    const now = options.now ?? new Date();
    const rows = await this.db.dialect.claimMediaImages(this.db.kysely, {
      owner,
      limit,
      skipHosts: options.skipHosts ?? [],
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + leaseMs).toISOString(),
    });
    return rows
      .map((row) => ({ id: Number(row.id), url: row.url, host: row.host, attempts: Number(row.attempts) }))
      .sort((a, b) => a.id - b.id);
  }

  async findObject(hash: string): Promise<MediaObject | undefined> {
    const row = await this.db.kysely.selectFrom('media_objects').selectAll().where('hash', '=', hash).executeTakeFirst();
    if (!row || !isMediaExt(row.ext)) return undefined;
    return {
      hash: row.hash,
      ext: row.ext,
      contentType: row.content_type,
      bytes: Number(row.bytes),
      renditionBytes: Number(row.rendition_bytes),
      width: Number(row.width),
      height: Number(row.height),
    };
  }

  /** Records the copy of a claimed URL (and its content, if new), and ends the lease. */
  async markArchived(claim: Pick<MediaClaim, 'id'>, owner: string, object: MediaObject, now = new Date()): Promise<void> {
    const at = now.toISOString();
    await this.db.kysely.transaction().execute(async (trx) => {
      await trx
        .insertInto('media_objects')
        .values({
          hash: object.hash,
          ext: object.ext,
          content_type: object.contentType,
          bytes: object.bytes,
          rendition_bytes: object.renditionBytes,
          width: object.width,
          height: object.height,
          created_at: at,
        })
        .onConflict((oc) => oc.column('hash').doNothing())
        .execute();
      await trx
        .updateTable('media_images')
        .set({ state: 'archived', hash: object.hash, ext: object.ext, last_error: null, lease_owner: null, lease_until: null, updated_at: at })
        .where('id', '=', claim.id)
        .where('lease_owner', '=', owner)
        .where('state', 'in', ['queued', 'failed'])
        .execute();
    });
  }

  /** Records a failed attempt: queued again for `nextAttemptAt`, the lease ended. */
  async markFailed(claim: Pick<MediaClaim, 'id'>, owner: string, failure: FailureRecord, now = new Date()): Promise<void> {
    await this.db.kysely
      .updateTable('media_images')
      .set({
        state: failure.givenUp ? 'failed' : 'queued',
        attempts: failure.attempts,
        next_attempt_at: failure.nextAttemptAt,
        last_error: failure.error.slice(0, 500),
        lease_owner: null,
        lease_until: null,
        updated_at: now.toISOString(),
      })
      .where('id', '=', claim.id)
      .where('lease_owner', '=', owner)
      .where('state', 'in', ['queued', 'failed'])
      .execute();
  }

  /** Gives claimed images back untried (a worker stopping), for the next claim to take at once. */
  async release(claims: readonly Pick<MediaClaim, 'id'>[], owner: string): Promise<void> {
    if (claims.length === 0) return;
    await this.db.kysely
      .updateTable('media_images')
      .set({ lease_owner: null, lease_until: null })
      .where('id', 'in', claims.map((claim) => claim.id))
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** The copies of these URLs that exist; a URL missing from the map is not archived (yet). */
  async archivedByUrl(urls: readonly string[]): Promise<Map<string, ArchivedImage>> {
    const found = new Map<string, ArchivedImage>();
    if (urls.length === 0) return found;
    const rows = await this.db.dialect.archivedMediaByUrl(this.db.kysely, urls);
    for (const row of rows) if (isMediaExt(row.ext)) found.set(row.url, { hash: row.hash, ext: row.ext });
    return found;
  }

  /** Makes every given-up image due now (the operator's --retry-failed). */
  async retryFailed(now = new Date()): Promise<number> {
    const at = now.toISOString();
    const result = await this.db.kysely
      .updateTable('media_images')
      .set({ state: 'queued', attempts: 0, next_attempt_at: at, updated_at: at })
      .where('state', '=', 'failed')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * A page of stored lots' images in key order, after `after` (exclusive), for the backfill: it
   * walks the lots table once without holding it.
   */
  async lotImagesPage(after: { auction: string; lotId: number } | null, limit: number): Promise<{ lots: Pick<Lot, 'auction' | 'lot_id' | 'images'>[] }> {
    let query = this.db.kysely.selectFrom('lots').select(['auction', 'lot_id', 'images']).orderBy('auction').orderBy('lot_id').limit(limit);
    if (after) {
      query = query.where((eb) =>
        eb.or([eb('auction', '>', after.auction), eb.and([eb('auction', '=', after.auction), eb('lot_id', '>', after.lotId)])]),
      );
    }
    const rows = await query.execute();
    return { lots: rows.map((row) => ({ auction: row.auction, lot_id: Number(row.lot_id), images: JSON.parse(row.images) as string[] })) };
  }

  async countLots(): Promise<number> {
    const row = await this.db.kysely.selectFrom('lots').select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async imagesOfLot(auction: string, lotId: number): Promise<string[] | undefined> {
    const row = await this.db.kysely.selectFrom('lots').select('images').where('auction', '=', auction).where('lot_id', '=', lotId).executeTakeFirst();
    return row ? (JSON.parse(row.images) as string[]) : undefined;
  }

  /**
   * Takes URLs (as media/archive-queue.ts queues them) out of the archive for good (a lot's media
   * deleted): their rows become 'removed', so
   * that importing the lot again does not queue them anew. Returns the contents no other URL still
   * uses, whose files the caller deletes; their rows are gone when this returns.
   */
  async remove(queued: readonly QueuedUrl[], now = new Date()): Promise<{ removed: number; orphans: MediaObject[] }> {
    if (queued.length === 0) return { removed: 0, orphans: [] };
    const at = now.toISOString();
    const urls = queued.map((entry) => entry.url);
    return this.db.kysely.transaction().execute(async (trx) => {
      // URLs never queued (the archive was off when the lot came) are recorded as removed too.
      await this.db.dialect.enqueueMediaUrls(trx, queued, at);
      const touched = await trx.selectFrom('media_images').select('hash').where('url', 'in', urls).where('hash', 'is not', null).execute();
      const result = await trx
        .updateTable('media_images')
        .set({ state: 'removed', hash: null, ext: null, lease_owner: null, lease_until: null, updated_at: at })
        .where('url', 'in', urls)
        .where('state', '<>', 'removed')
        .executeTakeFirst();
      const hashes = [...new Set(touched.map((row) => row.hash!))];
      const orphans: MediaObject[] = [];
      for (const hash of hashes) {
        const still = await trx.selectFrom('media_images').select('id').where('hash', '=', hash).limit(1).executeTakeFirst();
        if (still) continue;
        const object = await trx.deleteFrom('media_objects').where('hash', '=', hash).returningAll().executeTakeFirst();
        if (object && isMediaExt(object.ext)) {
          orphans.push({
            hash: object.hash,
            ext: object.ext,
            contentType: object.content_type,
            bytes: Number(object.bytes),
            renditionBytes: Number(object.rendition_bytes),
            width: Number(object.width),
            height: Number(object.height),
          });
        }
      }
      return { removed: Number(result.numUpdatedRows), orphans };
    });
  }

  async status(limitErrors = 10): Promise<MediaStatus> {
    const k = this.db.kysely;
    const byHost = await k
      .selectFrom('media_images')
      .select((eb) => [
        'host',
        sql<string>`sum(case when state = 'queued' and attempts = 0 then 1 else 0 end)`.as('queued'),
        sql<string>`sum(case when state = 'queued' and attempts > 0 then 1 else 0 end)`.as('retrying'),
        sql<string>`sum(case when state = 'archived' then 1 else 0 end)`.as('archived'),
        sql<string>`sum(case when state = 'failed' then 1 else 0 end)`.as('failed'),
        sql<string>`sum(case when state = 'removed' then 1 else 0 end)`.as('removed'),
        eb.fn.countAll<string>().as('total'),
      ])
      .groupBy('host')
      .orderBy('host')
      .execute();
    const hostBytes = await k
      .selectFrom('media_images as i')
      .innerJoin('media_objects as o', 'o.hash', 'i.hash')
      .select(['i.host', sql<string>`sum(o.bytes + o.rendition_bytes)`.as('bytes')])
      .where('i.state', '=', 'archived')
      .groupBy('i.host')
      .execute();
    const totals = await k
      .selectFrom('media_objects')
      .select((eb) => [eb.fn.countAll<string>().as('objects'), sql<string | null>`sum(bytes + rendition_bytes)`.as('bytes')])
      .executeTakeFirstOrThrow();
    const errors = await k
      .selectFrom('media_images')
      .select(['url', 'last_error', 'attempts'])
      .where('state', 'in', ['queued', 'failed'])
      .where('last_error', 'is not', null)
      .orderBy('updated_at', 'desc')
      .limit(limitErrors)
      .execute();
    const bytesOf = new Map(hostBytes.map((row) => [row.host, Number(row.bytes)]));
    const hosts = byHost.map((row) => ({
      host: row.host,
      queued: Number(row.queued),
      retrying: Number(row.retrying),
      archived: Number(row.archived),
      failed: Number(row.failed),
      bytes: bytesOf.get(row.host) ?? 0,
    }));
    const sum = (key: 'queued' | 'retrying' | 'archived' | 'failed') => hosts.reduce((total, host) => total + host[key], 0);
    return {
      queued: sum('queued'),
      retrying: sum('retrying'),
      archived: sum('archived'),
      failed: sum('failed'),
      removed: byHost.reduce((total, row) => total + Number(row.removed), 0),
      objects: Number(totals.objects),
      bytes: Number(totals.bytes ?? 0),
      hosts,
      recentErrors: errors.map((row) => ({ url: row.url, error: row.last_error!, attempts: Number(row.attempts) })),
    };
  }
}
