import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { MailQueue } from '../accounts/mail/mail-queue.ts';
import type { Feed, FeedPullResult } from '../domain/feed.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { FeedsRepository } from '../storage/repositories/feeds-repository.ts';
import { FAILURES_BEFORE_ALERT, feedFailingMail, feedRecoveredMail } from './feed-alerts.ts';
import type { FeedPuller } from './feed-puller.ts';

export interface FeedSchedulerOptions {
  feeds: FeedsRepository;
  puller: FeedPuller;
  mail: MailQueue;
  /** Who is told of a failing feed (OPERATOR_EMAIL); null: nobody, the log says it. */
  operatorEmail: string | null;
  metrics: Metrics;
  log: FastifyBaseLogger;
  now: () => Date;
  leaseMs: number;
  /** How often an idle instance looks for due feeds. */
  pollMs: number;
}

/** When a feed is next due: its schedule from the due time it was pulled for, never in the past. */
export function nextRunAfter(feed: Feed, now: Date): string {
  const every = feed.everySeconds * 1000;
  const due = Date.parse(feed.nextRunAt);
  let next = due + every;
  if (due > now.getTime()) next = due;
  if (next <= now.getTime()) next = now.getTime() + every;
  return new Date(next).toISOString();
}

/**
 * Pulls due feeds, one instance at a time per feed: an instance takes a feed's lease (a row in the
 * database, feeds-repository.ts), renews it while it pulls, and gives it up with the pull's
 * outcome. An instance killed mid-pull renews nothing: once its lease has run out another takes
 * the feed over (a paged pull resumes from its checkpoint). Every instance of `serve` runs one.
 */
export class FeedScheduler {
  /** Who holds a lease: this process, by host and pid, and a random part for two in one process (tests). */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly stopping = new AbortController();

  constructor(private readonly options: FeedSchedulerOptions) {}

  start(): void {
    if (this.timer) return;
    const poll = () => {
      this.running ??= this.tick()
        .then(() => undefined)
        .catch((error: unknown) => this.options.log.warn({ err: error }, 'feed poll failed'))
        .finally(() => {
          this.running = null;
        });
    };
    this.timer = setInterval(poll, this.options.pollMs);
    this.timer.unref();
    poll();
  }

  /** Claims no more feeds; a pull under way is stopped between batches and recorded (a paged one resumes later). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort();
    await this.running;
  }

  /** Pulls every feed due now that no other instance holds, one after the other; how many it pulled. */
  async tick(): Promise<number> {
    let pulled = 0;
    while (!this.stopping.signal.aborted) {
      const [feed] = await this.options.feeds.claimDue(this.owner, this.options.now(), this.options.leaseMs, 1);
      if (!feed) break;
      await this.runClaimed(feed);
      pulled++;
    }
    return pulled;
  }

  /** `feeds run`: a pull now, due or not, unless another instance is pulling it; null then. */
  async runNow(name: string): Promise<{ feed: Feed; result: FeedPullResult } | null> {
    const feed = await this.options.feeds.claimByName(name, this.owner, this.options.now(), this.options.leaseMs);
    if (!feed) return null;
    return { feed, result: await this.runClaimed(feed) };
  }

  /** Pulls a feed whose lease this instance holds, renewing it meanwhile, and records the outcome. */
  async runClaimed(feed: Feed): Promise<FeedPullResult> {
    const { feeds, log, leaseMs } = this.options;
    const lost = new AbortController();
    const signal = AbortSignal.any([lost.signal, this.stopping.signal]);
    const renew = setInterval(() => {
      feeds
        .renewLease(feed.id, this.owner, new Date(this.options.now().getTime() + leaseMs))
        .then((held) => {
          if (!held) lost.abort();
        })
        .catch((error: unknown) => log.warn({ err: error, feed: feed.name }, 'feed lease renewal failed'));
    }, Math.max(250, Math.floor(leaseMs / 3)));
    renew.unref();
    const end = this.options.metrics.feedPullDuration.startTimer({ feed: feed.name });
    let result: FeedPullResult;
    try {
      result = await this.options.puller.pull(feed, this.owner, signal);
    } catch (error) {
      log.error({ err: error, feed: feed.name }, 'feed pull failed with a fault');
      result = { status: 'failed', error: 'a fault of the service (the log has it)', counts: { read: 0, inserted: 0, updated: 0, unchanged: 0, skipped: 0 }, checkpoint: feed.checkpoint };
    } finally {
      clearInterval(renew);
      end();
    }
    await this.record(feed, result);
    return result;
  }

  private async record(feed: Feed, result: FeedPullResult): Promise<void> {
    const { feeds, metrics, log, mail, operatorEmail } = this.options;
    const now = this.options.now();
    const at = now.toISOString();
    const failed = result.status === 'failed';
    const failuresInRow = failed ? feed.failuresInRow + 1 : 0;
    const alertNow = failed && failuresInRow >= FAILURES_BEFORE_ALERT && !feed.alerted;
    const recovered = !failed && feed.alerted;
    const held = await feeds.finishPull(feed.id, this.owner, {
      status: result.status,
      attemptAt: at,
      error: failed ? result.error : null,
      counts: result.counts,
      failuresInRow,
      alerted: failed ? feed.alerted || alertNow : false,
      nextRunAt: nextRunAfter(feed, now),
      checkpoint: failed ? result.checkpoint : null,
      ...(result.status === 'ok' ? { lastGood: result.lastGood } : {}),
      ...(result.status === 'ok' && result.newLots ? { newestLotAt: at } : {}),
    });
    metrics.feedPulls.inc({ feed: feed.name, outcome: result.status });
    for (const [outcome, count] of Object.entries(result.counts) as [string, number][]) if (count > 0) metrics.feedLots.inc({ feed: feed.name, outcome }, count);
    if (result.status === 'ok') {
      if (result.left > 0) metrics.feedLots.inc({ feed: feed.name, outcome: 'left_listing' }, result.left);
      if (result.returned > 0) metrics.feedLots.inc({ feed: feed.name, outcome: 'returned_to_listing' }, result.returned);
    }
    const logged = { feed: feed.name, status: result.status, ...result.counts, ...(failed ? { error: result.error } : {}) };
    if (failed) log.warn(logged, 'feed pull failed');
    else log.info(logged, 'feed pulled');
    if (!held) {
      // Another instance took the feed over after this one's lease ran out: it records its own pull.
      log.warn({ feed: feed.name }, 'feed lease was lost during the pull; its outcome was not recorded');
      return;
    }
    if (!alertNow && !recovered) return;
    if (!operatorEmail) {
      log.warn({ feed: feed.name }, alertNow ? 'feed is failing; set OPERATOR_EMAIL to be told by mail' : 'feed has recovered');
      return;
    }
    await mail.enqueue(alertNow ? feedFailingMail(operatorEmail, feed, failuresInRow, result.status === 'failed' ? result.error : '') : feedRecoveredMail(operatorEmail, feed, at), now);
  }
}
