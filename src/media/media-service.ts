import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { Lot } from '../domain/lot.ts';
import { MEDIA_PATH, MEDIA_TYPES, RENDITION_EXT, mediaFileName, parseMediaName, type ArchivedImage, type MediaStatus } from '../domain/media.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { MediaStoreConfig } from '../config.ts';
import type { OutboundPolicy } from '../outbound/outbound-policy.ts';
import type { MediaRepository } from '../storage/repositories/media-repository.ts';
import { MediaArchiver, type ArchiverOptions } from './archiver.ts';
import type { ImageSetup } from './image-worker.ts';
import type { ByteRange, MediaStore } from './media-store.ts';
import { queuedUrlsOf } from './archive-queue.ts';

export interface MediaServiceOptions {
  repo: MediaRepository;
  /** Null: the archive is off (MEDIA_ARCHIVE=off). */
  store: MediaStore | null;
  /** The store's settings, for the archive's image process, which opens its own; null with the archive off. */
  storeConfig: MediaStoreConfig | null;
  /** The outbound rules the archive's image process fetches photos under. */
  policy: OutboundPolicy;
  metrics: Metrics;
  log: FastifyBaseLogger;
  publicBaseUrl: string;
  concurrency: number;
  hostConcurrency: number;
  maxBytes: number;
  /** The most of the time the image process may spend on photos (image-process.ts). */
  imageShare: number;
}

/** A photo of the report page: the thumbnail shown, the full image it opens. */
export interface PhotoLink {
  readonly src: string;
  readonly href: string;
}

export type MediaFile =
  | { kind: 'found'; size: number; body: Readable; contentType: string; etag: string; range: ByteRange | null }
  | { kind: 'not_found' };

export interface BackfillProgress {
  lotsTotal: number;
  lotsRead: number;
  queued: number;
}

/**
 * The photo archive: the copies' URLs for answers and pages, the files for the media route, the
 * archiver, and the operator's backfill, status and deletion.
 */
export class MediaService {
  private readonly prefix: string;

  constructor(private readonly options: MediaServiceOptions) {
    this.prefix = `${options.publicBaseUrl}${MEDIA_PATH}/`;
  }

  get enabled(): boolean {
    return this.options.store !== null;
  }

  get storeKind(): 'directory' | 's3' | null {
    return this.options.store?.kind ?? null;
  }

  /**
   * Whether the store takes a write, for readiness: null when it does (or the archive is off), else
   * why not. Writes, reads back and deletes a probe object whose key no photo can have (photo keys
   * are content hashes); two instances probing at once only delete each other's probe.
   */
  async probeStore(): Promise<string | null> {
    const store = this.options.store;
    if (!store) return null;
    const key = `${'0'.repeat(64)}-readyprobe.txt`;
    try {
      await store.put(key, Buffer.from('vinhistory readiness probe\n'), 'text/plain');
      await store.stat(key);
      await store.delete(key);
      return null;
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 300);
      return `the photo archive's ${store.kind} store cannot be written: ${reason}`;
    }
  }

  private urlOf(image: ArchivedImage, size: 'thumb' | null = null, prefix = this.prefix): string {
    return `${prefix}${mediaFileName({ hash: image.hash, ext: size ? RENDITION_EXT : image.ext, size })}`;
  }

  /**
   * The lots with each archived image URL replaced by its copy's, in the same order (the original
   * URL until its copy exists). One indexed query for all the lots' images; none with the archive off.
   */
  async resolveLots(lots: Lot[]): Promise<Lot[]> {
    if (!this.enabled) return lots;
    const urls: string[] = [];
    for (const lot of lots) for (const url of lot.images) urls.push(url);
    if (urls.length === 0) return lots;
    const archived = await this.options.repo.archivedByUrl(urls);
    if (archived.size === 0) return lots;
    return lots.map((lot) => {
      if (!lot.images.some((url) => archived.has(url))) return lot;
      return { ...lot, images: lot.images.map((url) => { const copy = archived.get(url); return copy ? this.urlOf(copy) : url; }) };
    });
  }

  /**
   * The report page's photos: each URL of a snapshot (an original, or already a copy's URL when the
   * search came after archiving) to the thumbnail shown and the full image opened. A URL without a
   * copy shows and opens itself. `base` is where the copies' links start (the archive's own
   * address unless given: a branded page gives `./media/`, under its report path).
   */
  async photoLinks(urls: readonly string[], base: string = this.prefix): Promise<Map<string, PhotoLink>> {
    const links = new Map<string, PhotoLink>();
    const originals: string[] = [];
    for (const url of urls) {
      const own = url.startsWith(this.prefix) ? parseMediaName(url.slice(this.prefix.length)) : null;
      if (own && own.size === null) links.set(url, { src: this.urlOf(own, 'thumb', base), href: this.urlOf(own, null, base) });
      else originals.push(url);
    }
    const archived = this.enabled && originals.length > 0 ? await this.options.repo.archivedByUrl(originals) : new Map<string, ArchivedImage>();
    for (const url of originals) {
      const copy = archived.get(url);
      links.set(url, copy ? { src: this.urlOf(copy, 'thumb', base), href: this.urlOf(copy, null, base) } : { src: url, href: url });
    }
    return links;
  }

  /** The size of an archived file, or null (no such file, or the archive is off). */
  async stat(name: string): Promise<number | null> {
    const parsed = parseMediaName(name);
    if (!parsed || !this.options.store) return null;
    return (await this.options.store.stat(mediaFileName(parsed)))?.size ?? null;
  }

  /** An archived file (or a range of it, already checked against its size by the caller). */
  async open(name: string, range: ByteRange | null = null): Promise<MediaFile> {
    const parsed = parseMediaName(name);
    if (!parsed || !this.options.store) return { kind: 'not_found' };
    const key = mediaFileName(parsed);
    const stored = await this.options.store.get(key, range ?? undefined);
    if (!stored) return { kind: 'not_found' };
    return { kind: 'found', size: stored.size, body: stored.body, contentType: MEDIA_TYPES[parsed.ext], etag: `"${key.slice(0, key.lastIndexOf('.'))}"`, range };
  }

  /** A new archiver over the configured store; null with the archive off. */
  createArchiver(
    overrides: Partial<Pick<ArchiverOptions, 'concurrency' | 'hostConcurrency' | 'idleMs' | 'retry' | 'now' | 'fetchTimeoutMs' | 'leaseMs' | 'images' | 'pacing'>> = {},
  ): MediaArchiver | null {
    const { storeConfig, repo, metrics, log, concurrency, hostConcurrency, maxBytes, imageShare } = this.options;
    if (!storeConfig) return null;
    return new MediaArchiver({ repo, setup: this.imageSetup()!, metrics, log: log.child({ component: 'media-archiver' }), concurrency, hostConcurrency, maxBytes, imageShare, ...overrides });
  }

  /** What the archive's image process needs (an archiver's own ImageProcess, in tests); null with the archive off. */
  imageSetup(): ImageSetup | null {
    const { storeConfig, policy } = this.options;
    return storeConfig ? { policy, store: storeConfig } : null;
  }

  /**
   * Queues the images of every stored lot (lots imported before the archive was on), a page of lots
   * at a time; URLs already queued or archived are left as they are.
   */
  async backfill(options: { signal?: AbortSignal; onProgress?: (progress: BackfillProgress) => void; pageSize?: number } = {}): Promise<BackfillProgress> {
    const pageSize = options.pageSize ?? 1000;
    const progress: BackfillProgress = { lotsTotal: await this.options.repo.countLots(), lotsRead: 0, queued: 0 };
    options.onProgress?.(progress);
    let after: { auction: string; lotId: number } | null = null;
    while (!options.signal?.aborted) {
      const { lots } = await this.options.repo.lotImagesPage(after, pageSize);
      if (lots.length === 0) break;
      progress.queued += await this.options.repo.enqueue(queuedUrlsOf(lots));
      progress.lotsRead += lots.length;
      const last = lots[lots.length - 1]!;
      after = { auction: last.auction, lotId: last.lot_id };
      options.onProgress?.(progress);
    }
    return progress;
  }

  status(): Promise<MediaStatus> {
    return this.options.repo.status();
  }

  retryFailed(): Promise<number> {
    return this.options.repo.retryFailed();
  }

  /**
   * Deletes a lot's archived photos (a takedown request): its images stay out of the archive even
   * when the lot is imported again, and every file no other image uses is deleted from the store.
   * Answers the lot's answers use its original URLs from then on.
   */
  async removeLot(
    auction: string,
    lotId: number,
  ): Promise<{ kind: 'archive_off' } | { kind: 'not_found' } | { kind: 'removed'; images: number; filesDeleted: number }> {
    // Without the store its files could not be deleted, and their rows would be gone.
    if (!this.options.store) return { kind: 'archive_off' };
    const images = await this.options.repo.imagesOfLot(auction, lotId);
    if (images === undefined) return { kind: 'not_found' };
    const { orphans } = await this.options.repo.remove(queuedUrlsOf([{ images }]));
    let filesDeleted = 0;
    for (const object of orphans) {
      for (const size of [null, 'thumb', 'display'] as const) {
        await this.options.store.delete(mediaFileName({ hash: object.hash, ext: size ? RENDITION_EXT : object.ext, size }));
        filesDeleted++;
      }
    }
    return { kind: 'removed', images: images.length, filesDeleted };
  }

  async close(): Promise<void> {
    await this.options.store?.close();
  }
}
