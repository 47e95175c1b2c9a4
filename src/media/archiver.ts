import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { type MediaClaim, type MediaObject } from '../domain/media.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { MediaRepository } from '../storage/repositories/media-repository.ts';
import { ArchivePacer, type PacerOptions } from './archive-pacer.ts';
import { ImageProcess, ImageProcessError, type Fetched } from './image-process.ts';
import type { ImageSetup, ProcessAnswer } from './image-worker.ts';

export interface RetryPolicy {
  /** The pause after the first failure; each next one is four times longer, up to maxDelayMs. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Failed attempts after which an image is 'failed' and tried again only after givenUpDelayMs. */
  readonly maxAttempts: number;
  readonly givenUpDelayMs: number;
}

const MINUTE = 60_000;
export const DEFAULT_RETRY: RetryPolicy = { baseDelayMs: MINUTE, maxDelayMs: 24 * 60 * MINUTE, maxAttempts: 6, givenUpDelayMs: 7 * 24 * 60 * MINUTE };

export interface ArchiverOptions {
  repo: MediaRepository;
  /** The outbound rules and the store, for the image process, which fetches and stores each photo. */
  setup: ImageSetup;
  metrics: Metrics;
  log: FastifyBaseLogger;
  /** Fetches at once, overall and from one host. */
  concurrency: number;
  hostConcurrency: number;
  /** The largest photo fetched. */
  maxBytes: number;
  /** The most of the time the image process may spend on photos (image-process.ts); 1 unless given. */
  imageShare?: number;
  /** For one fetch, redirects included. */
  fetchTimeoutMs?: number;
  /** How long a claim is this archiver's; past it another may take the image (this one died). */
  leaseMs?: number;
  /** How long to wait before looking again when nothing is due. */
  idleMs?: number;
  retry?: RetryPolicy;
  now?: () => Date;
  /** Where photos are fetched, checked, rendered and stored: a low-priority child process unless given. */
  images?: ImageProcess;
  /** How the archive yields to a busy event loop (archive-pacer.ts); false: never. */
  pacing?: Partial<PacerOptions> | false;
}

export interface ArchiveTotals {
  archived: number;
  deduplicated: number;
  /** Attempts that failed this run, those given up included. */
  failed: number;
  /** Of those, the photos given up on (status's "failed"); the rest are "retrying". */
  givenUp: number;
  bytes: number;
}

type Outcome =
  | { kind: 'archived' | 'deduplicated'; bytes: number }
  | { kind: 'failed'; reason: string; message: string; givenUp?: boolean }
  /** The image process died over another photo while this one was fetched or waited: fetched again. */
  | { kind: 'lost' };

/**
 * Copies queued photos into the store. Work is claimed from the database (a lease per image), so
 * several instances, or a server and a `vinhistory media archive`, share the queue without fetching
 * one image twice at once. Claims are taken in queue order (a lot's photos in its order), at most
 * `concurrency` photos at once and `hostConcurrency` from one host: claims skip the hosts that are
 * busy, and an image claimed past its host's share is given back for a later claim.
 */
export class MediaArchiver {
  /** Names this archiver's leases: a process may run more than one (tests, the CLI beside a server). */
  readonly owner = `arch_${randomBytes(8).toString('hex')}`;
  private readonly running = new Set<Promise<void>>();
  private readonly perHost = new Map<string, number>();
  private readonly retry: RetryPolicy;
  private readonly now: () => Date;
  private readonly images: ImageProcess;
  private loop: Promise<void> | null = null;
  private stopping = new AbortController();

  constructor(private readonly options: ArchiverOptions) {
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.now = options.now ?? (() => new Date());
    this.images = options.images ?? new ImageProcess({ setup: options.setup, share: options.imageShare });
  }

  /** Runs in the background until stop(): what `vinhistory serve` does with the archive on. */
  start(): void {
    if (this.loop) return;
    this.images.warm();
    this.stopping = new AbortController();
    this.loop = this.work({ untilIdle: false, signal: this.stopping.signal }).then(
      () => undefined,
      (error) => this.options.log.error({ err: error }, 'photo archiver stopped'),
    );
  }

  /**
   * Stops claiming and waits for the photos in flight, up to `graceMs`: one still running after it
   * is left to its lease, which runs out so that another archiver tries it again.
   */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopping.abort();
    if (this.loop) await Promise.race([this.loop, sleep(graceMs, undefined, { ref: false })]);
    this.loop = null;
  }

  /**
   * Archives what is due now and returns when nothing is left (a backfill, a test): images whose
   * retry lies in the future, or that another archiver holds, are left to later.
   */
  async drain(options: { signal?: AbortSignal; onArchived?: (totals: ArchiveTotals) => void } = {}): Promise<ArchiveTotals> {
    return this.work({ untilIdle: true, signal: options.signal ?? new AbortController().signal, ...(options.onArchived ? { onArchived: options.onArchived } : {}) });
  }

  private async work(options: { untilIdle: boolean; signal: AbortSignal; onArchived?: (totals: ArchiveTotals) => void }): Promise<ArchiveTotals> {
    const { concurrency, hostConcurrency, log } = this.options;
    const idleMs = this.options.idleMs ?? 2_000;
    const totals: ArchiveTotals = { archived: 0, deduplicated: 0, failed: 0, givenUp: 0, bytes: 0 };
    const pacer = this.options.pacing === false ? null : new ArchivePacer(this.options.pacing ?? {});
    const count = (outcome: Outcome) => {
      if (outcome.kind === 'lost') return;
      if (outcome.kind === 'failed') {
        totals.failed++;
        if (outcome.givenUp) totals.givenUp++;
      } else {
        totals[outcome.kind]++;
        totals.bytes += outcome.bytes;
      }
      options.onArchived?.(totals);
    };
    while (!options.signal.aborted) {
      const free = concurrency - this.running.size;
      let started = 0;
      // Hosts skipped by this claim: they may have freed up while it ran, so a claim that skipped
      // some and found nothing does not mean the queue is empty.
      let busy: string[] = [];
      if (free > 0) {
        busy = [...this.perHost].filter(([, n]) => n >= hostConcurrency).map(([host]) => host);
        let claims: MediaClaim[] = [];
        try {
          claims = await this.options.repo.claim(this.owner, free, this.options.leaseMs ?? 5 * MINUTE, { skipHosts: busy, now: this.now() });
        } catch (error) {
          log.warn({ err: error }, 'photo archive: claiming work failed; trying again shortly');
        }
        const giveBack: MediaClaim[] = [];
        for (const claim of claims) {
          if ((this.perHost.get(claim.host) ?? 0) >= hostConcurrency) {
            giveBack.push(claim);
            continue;
          }
          started++;
          this.perHost.set(claim.host, (this.perHost.get(claim.host) ?? 0) + 1);
          const task = this.archiveOne(claim, pacer, options.signal)
            .then(count)
            .finally(() => {
              this.running.delete(task);
              const left = (this.perHost.get(claim.host) ?? 1) - 1;
              if (left === 0) this.perHost.delete(claim.host);
              else this.perHost.set(claim.host, left);
            });
          this.running.add(task);
        }
        if (giveBack.length > 0) await this.options.repo.release(giveBack, this.owner).catch((error) => log.warn({ err: error }, 'photo archive: giving back claims failed'));
      }
      if (this.running.size === 0 && started === 0) {
        if (busy.length > 0) continue;
        if (options.untilIdle) break;
        await sleep(idleMs, undefined, { signal: options.signal, ref: false }).catch(() => {});
        continue;
      }
      // Wait for a slot (or, with every slot busy on a few hosts, a moment) before claiming again.
      if (this.running.size > 0) await Promise.race([...this.running, sleep(started === 0 ? idleMs : 0, undefined, { ref: false })]);
    }
    await Promise.allSettled([...this.running]);
    pacer?.close();
    await this.images.close();
    return totals;
  }

  private async archiveOne(claim: MediaClaim, pacer: ArchivePacer | null, signal: AbortSignal): Promise<Outcome> {
    const { metrics, log } = this.options;
    const stopTimer = metrics.mediaDuration.startTimer();
    metrics.mediaInFlight.inc();
    try {
      const outcome = await this.fetchAndStore(claim, pacer, signal);
      if (outcome.kind === 'lost') {
        // Not the photo's fault: given back at once, for this archiver's next claim or another's.
        await this.options.repo.release([claim], this.owner);
        return outcome;
      }
      if (outcome.kind === 'failed') {
        const attempts = claim.attempts + 1;
        const givenUp = attempts >= this.retry.maxAttempts;
        const delay = givenUp ? this.retry.givenUpDelayMs : Math.min(this.retry.baseDelayMs * 4 ** (attempts - 1), this.retry.maxDelayMs);
        const now = this.now();
        await this.options.repo.markFailed(
          claim,
          this.owner,
          { error: outcome.message, attempts, givenUp, nextAttemptAt: new Date(now.getTime() + delay).toISOString() },
          now,
        );
        metrics.mediaFailures.inc({ reason: outcome.reason });
        log.debug({ url: claim.url, attempts, givenUp, error: outcome.message }, 'photo archive: attempt failed');
        metrics.mediaFetches.inc({ outcome: outcome.kind });
        return { ...outcome, givenUp };
      }
      metrics.mediaFetches.inc({ outcome: outcome.kind });
      return outcome;
    } catch (error) {
      // The database failed while recording: the lease runs out and another claim tries again.
      log.warn({ err: error, url: claim.url }, 'photo archive: recording an attempt failed');
      return { kind: 'failed', reason: 'store', message: (error as Error).message };
    } finally {
      metrics.mediaInFlight.dec();
      stopTimer();
    }
  }

  /**
   * The photo's fetch, check, renditions and files are the image process's (image-worker.ts); what
   * stays here is the queue's side: the outcome, and the object recorded in the database.
   */
  private async fetchAndStore(claim: MediaClaim, pacer: ArchivePacer | null, signal: AbortSignal): Promise<Outcome> {
    const { repo, metrics } = this.options;
    let fetched: Fetched;
    try {
      fetched = await this.images.fetch({
        url: claim.url,
        timeoutMs: this.options.fetchTimeoutMs ?? 20_000,
        maxBytes: this.options.maxBytes,
        maxRedirects: 3,
        headers: { accept: 'image/avif,image/webp,image/png,image/jpeg,image/*;q=0.8' },
      });
    } catch (error) {
      if (error instanceof ImageProcessError) return imageWorkFailed(error);
      return { kind: 'failed', reason: 'network', message: (error as Error).message };
    }
    if (fetched.kind === 'status') return { kind: 'failed', reason: 'http', message: `HTTP ${fetched.status}` };
    if (fetched.kind === 'failed') {
      return { kind: 'failed', reason: fetched.failure === 'too-many-redirects' ? 'http' : fetched.failure.replace('-', '_'), message: fetched.message };
    }

    // The image work waits while the searches have no room to spare (the bytes wait in the child).
    const waitedMs = (await pacer?.wait(signal)) ?? 0;
    if (waitedMs > 0) metrics.mediaPausedSeconds.inc(waitedMs / 1000);
    let done: ProcessAnswer;
    try {
      done = await this.images.process(fetched.key);
    } catch (error) {
      return imageWorkFailed(error);
    }
    switch (done.kind) {
      case 'lost':
        return { kind: 'lost' };
      case 'not_image':
        return { kind: 'failed', reason: 'not_image', message: done.reason };
      case 'store_failed':
        return { kind: 'failed', reason: 'store', message: done.message };
      case 'present': {
        // Another URL (another lot, the same photo re-hosted) brought these bytes already.
        const known = await repo.findObject(done.hash);
        await repo.markArchived(claim, this.owner, known ?? objectOf(done), this.now());
        return { kind: 'deduplicated', bytes: 0 };
      }
      case 'stored': {
        const object = objectOf(done);
        await repo.markArchived(claim, this.owner, object, this.now());
        const written = object.bytes + object.renditionBytes;
        metrics.mediaBytesStored.inc(written);
        return { kind: 'archived', bytes: written };
      }
    }
  }
}

function objectOf(done: Extract<ProcessAnswer, { kind: 'present' | 'stored' }>): MediaObject {
  const { check } = done;
  return { hash: done.hash, ext: check.ext, contentType: check.contentType, bytes: done.bytes, renditionBytes: done.renditionBytes, width: check.width, height: check.height };
}

/**
 * The image process died over the photo (a decoder crash, most likely the photo's doing, or a kill)
 * or took too long: the photo is tried again later like any failed fetch.
 */
function imageWorkFailed(error: unknown): Outcome {
  const message = (error as Error).message;
  if (error instanceof ImageProcessError && error.failure === 'lost') return { kind: 'lost' };
  if (error instanceof ImageProcessError && error.failure === 'timeout') return { kind: 'failed', reason: 'timeout', message };
  return { kind: 'failed', reason: 'not_image', message };
}
