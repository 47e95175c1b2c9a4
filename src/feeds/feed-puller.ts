import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import type { FastifyBaseLogger } from 'fastify';
import { emptyFeedCounts, type Feed, type FeedCheckpoint, type FeedCounts, type FeedFormat, type FeedPullResult } from '../domain/feed.ts';
import type { FeedImportResult, IngestService } from '../ingest/ingest-service.ts';
import { parseCsvMapping, type CsvMapping } from '../ingest/formats/csv-mapping.ts';
import { IngestError } from '../ingest/ingest-error.ts';
import type { ImportSummary } from '../ingest/import-summary.ts';
import type { FormatName } from '../ingest/sources/open-lot-source.ts';
import { OutboundClient, OutboundError } from '../outbound/outbound-client.ts';
import type { FeedsRepository, LotKey } from '../storage/repositories/feeds-repository.ts';
import { MAX_LISTING_KEYS, type LotHistoryRepository } from '../storage/repositories/lot-history-repository.ts';
import { comparisonRefusal, contentRefusal, firstLine, formatRefusal, type PulledMeasure } from './feed-checks.ts';
import { resolveHeaders } from './feed-headers.ts';
import { nextPage, recordsOf, withParam } from './paging.ts';
import { NORMAL_PRIORITY, withGiveWay, withThreadPriority, type GiveWaySetting, type ThreadPriority } from '../worker-threads.ts';

/** The pace of pulls: how long to wait, how often to retry. Tests shorten them. */
export interface FeedTuning {
  /** Attempts after the first, for a 5xx, a 429, a time-out or a broken connection. */
  retries: number;
  /** The first retry's delay; each next one doubles, with jitter, up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Until an answer's headers arrive. */
  headersTimeoutMs: number;
  /** Between two chunks of a body. */
  idleTimeoutMs: number;
  /** The largest page of a paged JSON API. */
  maxPageBytes: number;
  /** Pages of one pull at most (a loop in a vendor's next links ends here). */
  maxPages: number;
  /** Lots per transaction of a pull: each holds the server's event loop and the SQLite write lock while it is stored. */
  batchSize: number;
}

export const DEFAULT_FEED_TUNING: FeedTuning = {
  retries: 3,
  backoffMs: 2_000,
  maxBackoffMs: 60_000,
  headersTimeoutMs: 60_000,
  idleTimeoutMs: 120_000,
  maxPageBytes: 64 * 1024 * 1024,
  maxPages: 100_000,
  batchSize: 250,
};

const IMPORT_FORMAT: Record<FeedFormat, FormatName> = { auto: 'auto', ndjson: 'ndjson', 'copart-csv': 'copart-csv', 'auctionsapi-json': 'auctionsapi', csv: 'csv' };
const HEAD_BYTES = 64 * 1024;

export interface FeedPullerOptions {
  outbound: OutboundClient;
  ingest: IngestService;
  feeds: FeedsRepository;
  /** Where a listing feed records the lots that left it. */
  history: Pick<LotHistoryRepository, 'recordListing'>;
  /** Opens a sealed header value. */
  open: (sealed: string) => Promise<string>;
  environment: (name: string) => string | undefined;
  /** Where downloads are kept while they are checked and read (DATA_DIR/feeds). */
  dir: string;
  maxBytes: number;
  /** The OS priority of the threads a pull starts (FEEDS_THREAD_PRIORITY); none: as the server's. */
  threadPriority?: ThreadPriority;
  /** The server's counted requests in flight, which the threads a pull starts give way to (FEEDS_YIELD_MS); none: they never pause. */
  giveWay?: GiveWaySetting | null;
  tuning: FeedTuning;
  now: () => Date;
  log: FastifyBaseLogger;
  random?: () => number;
  /** Told how long each batch held the write lock, when the batches were stored on a thread of their own (the metrics). */
  onBatchesHeld?: (feed: Feed, heldMs: readonly number[]) => void;
}

/** A pull's failure with its reason in words (never a header value). */
class PullFailure extends Error {
  constructor(
    message: string,
    readonly retryable = false,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

function addCounts(a: FeedCounts, b: ImportSummary): FeedCounts {
  return { read: a.read + b.read, inserted: a.inserted + b.inserted, updated: a.updated + b.updated, unchanged: a.unchanged + b.unchanged, skipped: a.skipped + b.skipped };
}

function header(headers: Readonly<Record<string, string | string[] | undefined>>, name: string): string | null {
  const value = headers[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? (value[0] ?? null) : null;
}

function retryAfterMs(value: string | null): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

function statusFailure(status: number, retryAfter: string | null): PullFailure {
  const retryable = status >= 500 || status === 429 || status === 408;
  return new PullFailure(`the source answered HTTP ${status}`, retryable, status === 429 ? retryAfterMs(retryAfter) : null);
}

function outboundFailure(error: OutboundError): PullFailure {
  return new PullFailure(error.message === '' ? error.failure : `${error.failure}: ${error.message}`, ['timeout', 'network'].includes(error.failure));
}

/** Drops a body not read (a 304, an error page): its abort is no failure of anyone's. */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Counts a download's bytes and lines and keeps its first bytes, as it passes to the file. */
class Measure extends Transform {
  bytes = 0;
  newlines = 0;
  lastByte = -1;
  private readonly headChunks: Buffer[] = [];
  private headLength = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) return done(new PullFailure(`the file is larger than ${Math.round(this.maxBytes / 1024 / 1024)} MiB (FEEDS_MAX_MB)`));
    let at = chunk.indexOf(10);
    while (at !== -1) {
      this.newlines++;
      at = chunk.indexOf(10, at + 1);
    }
    if (chunk.length > 0) this.lastByte = chunk[chunk.length - 1]!;
    if (this.headLength < HEAD_BYTES) {
      this.headChunks.push(chunk);
      this.headLength += chunk.length;
    }
    done(null, chunk);
  }

  head(): string {
    return Buffer.concat(this.headChunks).subarray(0, HEAD_BYTES).toString('utf8');
  }

  /** Lines with content: a last line without its newline counts too. */
  lines(): number {
    return this.newlines + (this.bytes > 0 && this.lastByte !== 10 ? 1 : 0);
  }
}

/** Passes a gzip body through gunzip (by Content-Encoding or by its first bytes, as a .gz file), else as it is. */
async function* plainBytes(body: Readable, encoded: boolean): AsyncGenerator<Buffer> {
  const iterator = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await iterator.next();
  if (first.done) return;
  const head = first.value;
  const rest = (async function* () {
    yield head;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  })();
  if (encoded || (head[0] === 0x1f && head[1] === 0x8b)) {
    const gunzip = createGunzip();
    const source = Readable.from(rest);
    source.on('error', (error) => gunzip.destroy(error));
    source.pipe(gunzip);
    for await (const chunk of gunzip) yield chunk as Buffer;
  } else {
    yield* rest;
  }
}

/**
 * One pull of one feed: the download (conditional, gzip, retried with backoff), the checks that
 * refuse what is not the feed, and the import through the ingest pipeline, with the feed's name
 * on the lots. A paged JSON API is pulled page by page, each page stored and checkpointed before
 * the next is asked for.
 */
export class FeedPuller {
  private readonly random: () => number;

  constructor(private readonly options: FeedPullerOptions) {
    this.random = options.random ?? Math.random;
  }

  async pull(feed: Feed, owner: string, signal: AbortSignal): Promise<FeedPullResult> {
    const startedAt = this.options.now();
    const resolved = await resolveHeaders(feed.headers, { environment: this.options.environment, open: this.options.open });
    if ('error' in resolved) return { status: 'failed', error: resolved.error, counts: emptyFeedCounts(), checkpoint: feed.checkpoint };
    try {
      return feed.paging?.paged || feed.paging?.updatedSinceParam
        ? await this.pullPages(feed, owner, resolved.headers, startedAt, signal)
        : await this.pullFile(feed, resolved.headers, startedAt, signal);
    } catch (error) {
      if (error instanceof PullFailure) return { status: 'failed', error: error.message, counts: emptyFeedCounts(), checkpoint: feed.checkpoint };
      throw error;
    }
  }

  /** Runs an attempt again after a retryable failure, waiting longer each time (Retry-After when the source says). */
  private async withRetries<T>(attempt: () => Promise<T>, signal: AbortSignal): Promise<T> {
    const { retries, backoffMs, maxBackoffMs } = this.options.tuning;
    for (let tried = 0; ; tried++) {
      try {
        return await attempt();
      } catch (error) {
        const failure = error instanceof OutboundError ? outboundFailure(error) : error;
        if (!(failure instanceof PullFailure) || !failure.retryable || tried >= retries || signal.aborted) throw failure;
        const delay = Math.min(maxBackoffMs, failure.retryAfterMs ?? backoffMs * 2 ** tried * (0.5 + this.random()));
        this.options.log.info({ attempt: tried + 1, delayMs: Math.round(delay), reason: failure.message }, 'feed pull retrying');
        await sleep(delay, undefined, { signal }).catch(() => undefined);
      }
    }
  }

  private async pullFile(feed: Feed, headers: Record<string, string>, startedAt: Date, signal: AbortSignal): Promise<FeedPullResult> {
    const conditional: Record<string, string> = {};
    if (feed.lastGood.etag) conditional['if-none-match'] = feed.lastGood.etag;
    if (feed.lastGood.lastModified) conditional['if-modified-since'] = feed.lastGood.lastModified;
    await mkdir(this.options.dir, { recursive: true });
    const file = path.join(this.options.dir, `${feed.id}-${randomBytes(6).toString('hex')}.part`);
    try {
      const download = await this.withRetries(async () => {
        const answer = await this.options.outbound.stream(feed.url, {
          headers: { ...headers, ...conditional, 'accept-encoding': 'gzip' },
          headersTimeoutMs: this.options.tuning.headersTimeoutMs,
          idleTimeoutMs: this.options.tuning.idleTimeoutMs,
          maxRedirects: 5,
          signal,
        });
        if (answer.status === 304) {
          discard(answer.body);
          return null;
        }
        if (answer.status !== 200) {
          discard(answer.body);
          throw statusFailure(answer.status, header(answer.headers, 'retry-after'));
        }
        const measure = new Measure(this.options.maxBytes);
        const encoded = /\bgzip\b/i.test(header(answer.headers, 'content-encoding') ?? '');
        try {
          await pipeline(Readable.from(plainBytes(answer.body, encoded)), measure, createWriteStream(file), { signal });
        } catch (error) {
          if (error instanceof PullFailure) throw error;
          const failure = OutboundClient.failureOf(error);
          // A gzip stream that ends early is a truncated download: worth another try.
          const truncatedGzip = (error as { code?: string }).code === 'Z_BUF_ERROR' || /unexpected end of file/i.test((error as Error).message);
          throw truncatedGzip ? new PullFailure('the download ended early (a truncated gzip stream)', true) : outboundFailure(failure);
        }
        return { measure, headers: answer.headers };
      }, signal);
      if (download === null) return { status: 'not_modified', counts: emptyFeedCounts() };

      const head = download.measure.head();
      const contentType = header(download.headers, 'content-type');
      const refusal = contentRefusal(head, contentType) ?? formatRefusal(feed.format, head);
      if (refusal) throw new PullFailure(refusal);
      const csv = !/^\s*(?:\uFEFF)?\s*[[{]/.test(head);
      const lines = download.measure.lines();
      const measured: PulledMeasure = { bytes: download.measure.bytes, rows: csv ? Math.max(0, lines - 1) : lines, header: csv ? firstLine(head) : null };
      if (!feed.acceptChanges) {
        const compared = comparisonRefusal(measured, feed.lastGood);
        if (compared) throw new PullFailure(compared);
      }

      const keys: LotKey[] = [];
      const result = await this.importFile(feed, file, measured.bytes, keys, signal);
      if (result.heldMs) this.options.onBatchesHeld?.(feed, result.heldMs);
      if (result.failure) throw new PullFailure(`reading stopped after line ${result.failure.afterLine}: ${result.failure.message} (${result.summary.inserted + result.summary.updated} lots stored before it)`);
      const counts = addCounts(emptyFeedCounts(), result.summary);
      if (counts.read > 0 && counts.skipped === counts.read) throw new PullFailure(`none of the ${counts.read} records could be read as ${feed.format} lots`);
      const listing = feed.listing ? await this.applyListing(feed, keys, startedAt) : { left: [], returned: [] };
      return {
        status: 'ok',
        counts,
        newLots: counts.inserted > 0,
        left: listing.left.length,
        returned: listing.returned.length,
        lastGood: {
          etag: header(download.headers, 'etag'),
          lastModified: header(download.headers, 'last-modified'),
          bytes: measured.bytes,
          rows: measured.rows,
          header: measured.header,
          startedAt: startedAt.toISOString(),
        },
      };
    } finally {
      await rm(file, { force: true });
    }
  }

  private async importFile(feed: Feed, file: string, bytes: number, keys: LotKey[], signal: AbortSignal): Promise<FeedImportResult> {
    try {
      // The reading and storing threads the import starts run at the pull's background priority,
      // and pause while the server answers a counted request.
      return await withGiveWay(this.options.giveWay ?? null, () => withThreadPriority(this.options.threadPriority ?? NORMAL_PRIORITY, () => this.options.ingest.importFeedFile(file, {
        bytes,
        batchSize: this.options.tuning.batchSize,
        format: IMPORT_FORMAT[feed.format],
        source: feed.name,
        mapping: this.mappingOf(feed),
        signal,
        ...(feed.listing ? { onStored: (stored) => keys.push(...stored) } : {}),
      })));
    } catch (error) {
      if (error instanceof IngestError) throw new PullFailure(error.message);
      throw error;
    }
  }

  /**
   * A listing feed's good pull: the lots of the last good pull it no longer lists have left the
   * auction's listing, recorded in their history as a version from this feed (a lot that comes
   * back is back in its listing by the import that names it again).
   */
  private async applyListing(feed: Feed, keys: readonly LotKey[], at: Date): Promise<{ left: LotKey[]; returned: LotKey[] }> {
    const changes = await this.options.feeds.applyListing(feed.id, keys, at);
    for (let i = 0; i < changes.left.length; i += MAX_LISTING_KEYS) {
      const refs = changes.left.slice(i, i + MAX_LISTING_KEYS).map(([auction, lotId]) => ({ auction, lotId }));
      await this.options.history.recordListing(refs, 'left', { source: feed.name, now: at });
    }
    return changes;
  }

  private mappingOf(feed: Feed): CsvMapping | undefined {
    return feed.mapping === null ? undefined : parseCsvMapping(JSON.parse(feed.mapping), `the ${feed.name} feed's mapping`);
  }

  /**
   * A JSON API, page after page. Each page is stored, then the checkpoint names the next one, so
   * a pull that dies (a page that keeps failing, a killed instance) resumes there on its next run
   * with the counts of the pages before; the `updated_since` of a fresh pull is the start of the
   * last good one.
   */
  private async pullPages(feed: Feed, owner: string, headers: Record<string, string>, startedAt: Date, signal: AbortSignal): Promise<FeedPullResult> {
    const paging = feed.paging!;
    let first = feed.url;
    if (paging.updatedSinceParam && feed.lastGood.startedAt) first = withParam(first, paging.updatedSinceParam, feed.lastGood.startedAt);
    let checkpoint: FeedCheckpoint = feed.checkpoint ?? { nextUrl: first, pages: 0, counts: emptyFeedCounts(), startedAt: startedAt.toISOString() };
    const resumed = feed.checkpoint !== null;
    const keys: LotKey[] = [];
    for (;;) {
      if (checkpoint.pages >= this.options.tuning.maxPages) {
        return { status: 'failed', error: `more than ${this.options.tuning.maxPages} pages: does the API's next link loop?`, counts: checkpoint.counts, checkpoint: null };
      }
      let page: { body: unknown; next: string | null; records: unknown[] };
      try {
        page = await this.withRetries(async () => {
          const answer = await this.options.outbound.request(checkpoint.nextUrl, {
            headers: { ...headers, 'accept-encoding': 'identity', accept: 'application/json' },
            timeoutMs: this.options.tuning.headersTimeoutMs + this.options.tuning.idleTimeoutMs,
            maxBytes: this.options.tuning.maxPageBytes,
            maxRedirects: 5,
          });
          if (answer.status !== 200) throw statusFailure(answer.status, header(answer.headers, 'retry-after'));
          const text = answer.body.toString('utf8');
          const refusal = contentRefusal(text.slice(0, HEAD_BYTES), header(answer.headers, 'content-type'));
          if (refusal) throw new PullFailure(`page ${checkpoint.pages + 1}: ${refusal}`);
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            throw new PullFailure(`page ${checkpoint.pages + 1} is not JSON`);
          }
          const records = recordsOf(body);
          if (!records) throw new PullFailure(`page ${checkpoint.pages + 1} holds no array of records (an array, or one under data, items, results, records, lots or vehicles)`);
          return { body, records, next: paging.paged ? nextPage(body, answer.headers.link, answer.url, paging) : null };
        }, signal);
      } catch (error) {
        if (error instanceof PullFailure) return { status: 'failed', error: error.message, counts: checkpoint.counts, checkpoint: checkpoint.pages > 0 ? checkpoint : null };
        throw error;
      }
      if (page.records.length > 0) {
        const ndjson = Readable.from(page.records.map((record) => `${JSON.stringify(record)}\n`));
        const stored = await this.options.ingest.importFeedPage(ndjson, {
          format: IMPORT_FORMAT[feed.format],
          batchSize: this.options.tuning.batchSize,
          source: feed.name,
          signal,
          ...(feed.listing ? { onStored: (stored) => keys.push(...stored) } : {}),
        }).catch((error: unknown) => {
          if (error instanceof IngestError) throw new PullFailure(`page ${checkpoint.pages + 1}: ${error.message}`);
          throw error;
        });
        checkpoint = { ...checkpoint, counts: addCounts(checkpoint.counts, stored.summary) };
      }
      checkpoint = { ...checkpoint, pages: checkpoint.pages + 1 };
      if (page.next === null || page.records.length === 0) break;
      checkpoint = { ...checkpoint, nextUrl: page.next };
      await this.options.feeds.saveCheckpoint(feed.id, owner, checkpoint);
      if (signal.aborted) return { status: 'failed', error: 'stopped (the instance is shutting down); the next run resumes', counts: checkpoint.counts, checkpoint };
    }
    const counts = checkpoint.counts;
    // A listing is known whole only from a pull that read every page itself.
    const listing = feed.listing && !resumed ? await this.applyListing(feed, keys, startedAt) : { left: [], returned: [] };
    return {
      status: 'ok',
      counts,
      newLots: counts.inserted > 0,
      left: listing.left.length,
      returned: listing.returned.length,
      lastGood: { etag: null, lastModified: null, bytes: null, rows: counts.read, header: null, startedAt: checkpoint.startedAt },
    };
  }
}
