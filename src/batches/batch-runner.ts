import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { MAX_BATCH_ITEMS, type BatchItemResult } from '../domain/batch.ts';
import { canSearch, type SearchPrincipal } from '../domain/principal.ts';
import { SANDBOX_ALLOWANCE } from '../search/sandbox/catalogue.ts';
import type { ItemDone, SearchOutcome, SearchPace, SearchService } from '../search/search-service.ts';
import type { Db } from '../storage/database.ts';
import type { ClaimedBatch, PendingItem } from '../storage/repositories/batches-repository.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { inTransaction } from '../storage/transaction.ts';
import { queueBatchCompleted } from '../webhooks/batch-events.ts';
import { batchShare } from './pacing.ts';
import { failed, itemResultOf, SUBSCRIPTION_REQUIRED_MESSAGE, UNAUTHENTICATED_MESSAGE } from './item-result.ts';
import { WakeablePause } from '../wakeable-pause.ts';

/**
 * How long a runner's claim holds a batch: renewed every third of it while the batch runs, so a
 * live runner never loses one, and short enough that the batch of a runner that died (kill -9)
 * is taken over well within a minute (by a restarted server, or another instance on PostgreSQL).
 */
export const BATCH_LEASE_MS = 30_000;
/** Searches of one batch in flight at once, at most (fewer on a slow plan: its half of the rate). */
const MAX_IN_FLIGHT = 16;
/**
 * Results the runner writes itself (an item whose search committed nothing: invalid input, past
 * the quota, a revoked token) go this many to a transaction at most, and wait at most this long.
 * A found or not-found item's result is written by its search's own commit.
 */
const RESULTS_GROUP = 32;
const RESULTS_MAX_WAIT_MS = 1_000;
/** Batches one runner works on at once. */
const MAX_BATCHES = 4;

export interface BatchRunnerOptions {
  db: Db;
  repos: Repositories;
  search: SearchService;
  log: FastifyBaseLogger;
  now: () => Date;
  pollMs?: number;
  leaseMs?: number;
  /** Called when a batch.completed event was queued (the delivery worker sends it at once). */
  onEventQueued?: () => void;
}

/**
 * Runs the items of stored batches in the background, each a search through SearchService: so
 * counted, recorded and stored like one. A found or not-found item's result is written in its
 * search's own commit (search-commit.ts), so an item is counted exactly when it has its result,
 * whatever kill -9 comes between; the same commit reads the item's row first, so that a second
 * runner that ran the same item meanwhile (a lease taken over from one that stalled) finds its
 * result there and counts nothing.
 *
 * Pacing (pacing.ts): an item's search is admitted to the account's per-second window only while
 * the window holds fewer than the batch's share (half the plan's rate, at least 1), counting live
 * searches and every batch of the account on every instance alike. So batches never hold more
 * than the share of any one-second window, and the window always has the other half free for
 * live searches whenever a batch item is admitted: batches take what live searches leave of the
 * first half. An item refused waits for a slot and runs again: a rate refusal is never an item's result.
 */
export class BatchRunner {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly active = new Map<string, Promise<void>>();
  private running: Promise<void> | null = null;
  private stopping = false;
  private readonly pause = new WakeablePause({ holdsProcess: false });

  constructor(private readonly options: BatchRunnerOptions) {
    this.pollMs = options.pollMs ?? 2_000;
    this.leaseMs = options.leaseMs ?? BATCH_LEASE_MS;
  }

  get isRunning(): boolean {
    return this.running !== null;
  }

  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = this.loop().finally(() => {
      this.running = null;
    });
  }

  /** Looks for batches now rather than at the next poll (one was just made). */
  wake(): void {
    this.pause.wake();
  }

  /** Claims nothing more, lets the searches in flight finish and gives the leases up, so that the next start takes the batches at once. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.running;
    await Promise.allSettled([...this.active.values()]);
  }

  /**
   * Claims and runs every batch that is free now, to its end; answers how many it ran (tests, the
   * CLI). A stopped runner claims nothing: its runs would give each batch back unfinished, to be
   * claimed again at once.
   */
  async runDue(): Promise<number> {
    let ran = 0;
    while (!this.stopping) {
      const batches = await this.claim(MAX_BATCHES);
      if (batches.length === 0) break;
      await Promise.all(batches.map((batch) => this.run(batch)));
      ran += batches.length;
    }
    return ran;
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      try {
        if (this.active.size < MAX_BATCHES) {
          for (const batch of await this.claim(MAX_BATCHES - this.active.size)) {
            const run = this.run(batch).finally(() => this.active.delete(batch.id));
            this.active.set(batch.id, run);
          }
        }
      } catch (error) {
        this.options.log.warn({ err: error }, 'could not claim batches');
      }
      if (this.stopping) break;
      await this.pause.for(this.pollMs);
    }
  }

  private claim(limit: number): Promise<ClaimedBatch[]> {
    return this.options.repos.batches.claim({ owner: this.owner, now: this.options.now(), leaseMs: this.leaseMs, limit });
  }

  /** Runs a claimed batch's remaining items, keeping its lease, and ends it when none is left. */
  private async run(batch: ClaimedBatch): Promise<void> {
    const { repos, log } = this.options;
    let lost = false;
    const renew = setInterval(() => {
      repos.batches.renewLease(batch.id, this.owner, new Date(this.options.now().getTime() + this.leaseMs)).then(
        (held) => {
          if (!held) lost = true;
        },
        (error: unknown) => log.warn({ err: error, batch: batch.id }, 'could not renew a batch lease'),
      );
    }, Math.max(50, Math.floor(this.leaseMs / 3)));
    renew.unref();
    const go = () => !this.stopping && !lost;
    try {
      const principal = await repos.tokens.reload(batch.tokenId, this.options.now());
      // Every item left, read once: a batch holds at most MAX_BATCH_ITEMS, and one read of them
      // costs less than paging (a page's last searches would leave the others idle).
      const pending = await repos.batches.pendingItems(batch.id, 0, MAX_BATCH_ITEMS);
      if (pending.length === 0) {
        // Nothing left to run (a runner that stopped after its last item): the batch is only to be finished.
      } else if (principal === null || !canSearch(principal)) {
        // The token was revoked, or the plan ended, before the batch ran: each item answers what a search would.
        const result = principal === null ? failed(401, UNAUTHENTICATED_MESSAGE) : failed(402, SUBSCRIPTION_REQUIRED_MESSAGE);
        await repos.batches.recordItems(batch.id, pending.map((item) => ({ index: item.index, result })), this.options.now());
      } else {
        await this.runItems(batch, principal, pending, go);
      }
      if (go()) await this.finish(batch);
    } catch (error) {
      log.error({ err: error, batch: batch.id }, 'batch run failed; it is taken up again when its lease ends');
      return;
    } finally {
      clearInterval(renew);
    }
    if (this.stopping && !lost) await repos.batches.releaseLease(batch.id, this.owner).catch(() => {});
  }

  /**
   * The items, a few at a time, each paced by the account's batch window. The starts are spaced
   * evenly at the batch's share of the rate: a window's share taken in a burst at its start would
   * hold the event loop and the commits of the live searches beside it for that long.
   */
  private async runItems(batch: ClaimedBatch, principal: SearchPrincipal, pending: PendingItem[], go: () => boolean): Promise<void> {
    const rate = principal.subscription?.ratePerSecond ?? SANDBOX_ALLOWANCE.ratePerSecond;
    const share = batchShare(rate);
    const spacingMs = 1000 / share;
    let nextStart = performance.now();
    // Each try of a search waits for a start slot of its own, never earlier than the last one's
    // plus the spacing, and not caught up after a wait (no burst). A slot due now starts at once
    // (null): the search's commit waits for the next turn of the event loop anyway (group commit),
    // so pending I/O gets in between a worker's items without a turn of their own.
    const slot = (): Promise<void> | null => {
      const now = performance.now();
      const at = Math.max(now, nextStart);
      nextStart = at + spacingMs;
      return at - now >= 1 ? sleep(at - now) : null;
    };
    const queue = pending.values();
    // Results the searches did not write (they committed nothing), a group at a time.
    let unwritten: { index: number; result: BatchItemResult }[] = [];
    let writing: Promise<unknown> = Promise.resolve();
    let flushedAt = Date.now();
    const flush = () => {
      const group = unwritten;
      unwritten = [];
      flushedAt = Date.now();
      if (group.length > 0) writing = writing.then(() => this.options.repos.batches.recordItems(batch.id, group, this.options.now()));
      return writing;
    };
    const worker = async () => {
      for (let next = queue.next(); !next.done && go(); next = queue.next()) {
        const item = next.value;
        const { result, written } = await this.runItem(batch, principal, item, share, slot, go);
        if (result === null || written) continue;
        unwritten.push({ index: item.index, result });
        if (unwritten.length >= RESULTS_GROUP || Date.now() - flushedAt >= RESULTS_MAX_WAIT_MS) await flush();
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(MAX_IN_FLIGHT, share, pending.length) }, worker));
    } finally {
      await flush();
    }
  }

  /**
   * Runs one item's search until it has a result (a rate refusal waits and runs it again); null
   * when the runner stops first. `written`: the search's commit wrote it (found, not found), or
   * found it written by an earlier run (item_done).
   */
  private async runItem(
    batch: ClaimedBatch,
    principal: SearchPrincipal,
    item: PendingItem,
    share: number,
    slot: () => Promise<void> | null,
    go: () => boolean,
  ): Promise<{ result: BatchItemResult | null; written: boolean }> {
    const { search } = this.options;
    const pace: SearchPace = { rateLimit: share, batchItem: { batchId: batch.id, index: item.index } };
    while (go()) {
      const wait = slot();
      if (wait !== null) await wait;
      if (!go()) break;
      const outcome: SearchOutcome | ItemDone =
        'vin' in item.input
          ? await search.search(principal, item.input.vin, undefined, pace)
          : await search.searchByLot(principal, item.input.auction, String(item.input.lot_id), undefined, pace);
      if (outcome.kind === 'item_done') return { result: null, written: true };
      const result = itemResultOf(outcome);
      if (result === null) {
        // The account's window holds the batch's share already (its own items, or live searches): wait for a slot.
        await sleep(outcome.kind === 'rate_limited' ? Math.max(outcome.limits.rate.resetMs, 1) : 10);
        continue;
      }
      return { result, written: outcome.kind === 'found' || outcome.kind === 'not_found' };
    }
    return { result: null, written: false };
  }

  /** Marks the batch done and queues its batch.completed event, in one transaction: once, whichever runner gets there. */
  private async finish(batch: ClaimedBatch): Promise<void> {
    const at = this.options.now();
    const queued = await inTransaction(this.options.db, async (tx) => {
      const done = await tx.batches.finish(batch.id, at);
      return done ? queueBatchCompleted(tx, done, at) : false;
    });
    if (queued) this.options.onEventQueued?.();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
