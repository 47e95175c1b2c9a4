import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { ClaimedEvent } from '../domain/webhook.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { DELIVERY_TIMEOUT_MS, type SendResult, type WebhookSender } from './webhook-sender.ts';
import { WakeablePause } from '../wakeable-pause.ts';

/**
 * How long a claim holds an event unless WEBHOOK_LEASE_MS says otherwise: well past the 10 s an attempt may take and the time to record
 * it, so that a live worker never loses an event it is sending, and short enough that the events
 * of a worker that died (kill -9) are sent by another within a minute.
 */
export const LEASE_MS = 6 * DELIVERY_TIMEOUT_MS;

/**
 * Finished events (delivered, or failed once their 72 hours ran out) are kept this long after they
 * finished, for `GET /api/v1/webhook/deliveries` and a resend, then deleted with their attempts.
 */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** How often a running worker deletes what passed the retention, and how many events a transaction deletes. */
export const PRUNE_EVERY_MS = 60 * 60 * 1000;
export const PRUNE_BATCH = 500;

export interface DeliveryWorkerOptions {
  repos: Repositories;
  sender: WebhookSender;
  log: FastifyBaseLogger;
  now: () => Date;
  /** Deliveries in flight at once. */
  concurrency?: number;
  /** How often an idle worker looks for due events. */
  pollMs?: number;
  /** How long a claim holds an event (config.webhooks.leaseMs); LEASE_MS when not given. */
  leaseMs?: number;
}

/**
 * Takes due events from the outbox and sends them, `concurrency` at a time. On PostgreSQL any
 * number of workers (instances, `vinhistory deliver` processes) share the outbox: each claims with
 * a lease (webhook-claims.ts), so no event is sent by two at the same time; on SQLite, one
 * process. stop() claims nothing more, lets the attempts in flight finish (each is bounded by the
 * 10 s timeout) and records them.
 */
export class DeliveryWorker {
  /** Names this worker's leases: the host, the process and a random part. */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly inFlight = new Set<Promise<unknown>>();
  private running: Promise<void> | null = null;
  private stopping = false;
  private readonly pause = new WakeablePause({ holdsProcess: true });
  private lastPrune = Number.NEGATIVE_INFINITY;
  private pruning: Promise<number> | null = null;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.concurrency = options.concurrency ?? 16;
    this.pollMs = options.pollMs ?? 500;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
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

  /** Looks for due events now instead of at the next poll (an event was just queued). */
  wake(): void {
    this.pause.wake();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.running;
    await Promise.allSettled([...this.inFlight]);
    await this.pruning;
  }

  /**
   * Deletes the events finished more than EVENT_RETENTION_MS ago, PRUNE_BATCH at a time (each
   * batch its own short transaction, so that claims and imports are never held behind one large
   * delete), until none is left or the worker stops. Answers how many went. Any number of workers
   * may run it at once: a row deleted twice is deleted once.
   */
  async prune(): Promise<number> {
    const cutoff = new Date(this.options.now().getTime() - EVENT_RETENTION_MS);
    let total = 0;
    for (;;) {
      const deleted = await this.options.repos.webhookOutbox.deleteFinishedBefore(cutoff, PRUNE_BATCH);
      total += deleted;
      if (deleted < PRUNE_BATCH || this.stopping) return total;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Starts a prune in the background of the loop when one is due; a failed one is tried at the next. */
  private pruneWhenDue(): void {
    const now = this.options.now().getTime();
    if (this.pruning || now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    this.pruning = this.prune()
      .catch((error: unknown) => {
        this.options.log.warn({ err: error }, 'could not delete old webhook events');
        return 0;
      })
      .finally(() => {
        this.pruning = null;
      });
  }

  /**
   * One pass, for tests and the deliver command's --once: claims what is due (up to the
   * concurrency) and sends it all. Returns how many events were attempted.
   */
  async runOnce(): Promise<number> {
    const claimed = await this.claim(this.concurrency);
    await Promise.all(claimed.map((event) => this.sendOne(event)));
    return claimed.length;
  }

  /** Claims one event by id and sends it now, if it is due and no worker holds it. */
  async sendNow(eventId: string): Promise<SendResult | null> {
    const [event] = await this.options.repos.webhookOutbox.claim({ owner: this.owner, now: this.options.now(), leaseMs: this.leaseMs, limit: 1, eventId });
    return event ? this.sendOne(event) : null;
  }

  private claim(limit: number): Promise<ClaimedEvent[]> {
    return this.options.repos.webhookOutbox.claim({ owner: this.owner, now: this.options.now(), leaseMs: this.leaseMs, limit });
  }

  private async sendOne(event: ClaimedEvent): Promise<SendResult | null> {
    try {
      return await this.options.sender.send(event, this.owner);
    } catch (error) {
      // The lease runs out and another pass (or worker) tries again: at least once, never lost.
      this.options.log.error({ err: error, eventId: event.id }, 'webhook delivery failed to complete; it will be retried when its lease ends');
      return null;
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.pruneWhenDue();
      const free = this.concurrency - this.inFlight.size;
      let claimed: ClaimedEvent[] = [];
      if (free > 0) {
        try {
          claimed = await this.claim(free);
        } catch (error) {
          this.options.log.warn({ err: error }, 'could not claim webhook events');
        }
      }
      for (const event of claimed) {
        const sending = this.sendOne(event).finally(() => {
          this.inFlight.delete(sending);
          this.wake();
        });
        this.inFlight.add(sending);
      }
      if (this.stopping) break;
      // More may be due when every free place was filled; otherwise wait for a poll, a wake-up or a free place.
      if (free > 0 && claimed.length === free) continue;
      await this.pause.for(this.pollMs);
    }
  }
}
