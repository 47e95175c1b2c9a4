import type { FastifyBaseLogger } from 'fastify';
import type { ClaimedMail, MailKind } from '../../domain/mail.ts';
import type { MailQueueRepository } from '../../storage/repositories/mail-queue-repository.ts';
import type { MailQueue } from './mail-queue.ts';
import type { MailMessage, MailSender } from './mail-sender.ts';
import { WakeablePause } from '../../wakeable-pause.ts';

/** What a queued message becomes at send time: a message (and the secrets it carries), or nothing to send. */
export type PreparedMail =
  | { kind: 'send'; message: MailMessage; secrets: string[]; logContext?: Record<string, string> }
  | { kind: 'skip'; reason: string };

/** Per kind, how a claimed message is made ready to send (a reset link minted, say). */
export type MailPreparers = Record<MailKind, (mail: ClaimedMail, now: Date) => Promise<PreparedMail>>;

/** A message complete when queued (billing mail, a disabled endpoint's notice: no secret to add), sent as it is with its HTML part. */
export async function sendAsQueued(mail: ClaimedMail): Promise<PreparedMail> {
  return { kind: 'send', message: { to: mail.recipient, subject: mail.subject, text: mail.body, ...(mail.html ? { html: mail.html } : {}) }, secrets: [] };
}

export interface MailDeliveryTuning {
  /** How long a claim holds a message: well above the longest send (SMTP_TIMEOUTS). */
  leaseMs: number;
  /** How often the queue is looked at when no message of this process wakes the worker. */
  pollMs: number;
  /** Messages claimed (and sent side by side) per pass. */
  batchSize: number;
  /** Attempts before a message is given up. */
  maxAttempts: number;
  /** The wait after the n-th failed attempt (n from 1). */
  retryDelayMs: (attempts: number) => number;
}

/** 30 s, 1, 2, 4, 8, 16, 32 min, ... at most an hour: eight attempts span about an hour. */
export function backoffDelayMs(attempts: number): number {
  return Math.min(60 * 60 * 1000, 30_000 * 2 ** Math.max(0, attempts - 1));
}

export const DEFAULT_MAIL_DELIVERY: MailDeliveryTuning = {
  leaseMs: 2 * 60 * 1000,
  pollMs: 10_000,
  batchSize: 5,
  maxAttempts: 8,
  retryDelayMs: backoffDelayMs,
};

/** Settled messages are kept this long for the operator (`vinhistory mail status`), then deleted. */
const KEEP_SENT_MS = 7 * 24 * 60 * 60 * 1000;
const KEEP_FAILED_MS = 30 * 24 * 60 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

export interface MailDeliveryDeps {
  repository: MailQueueRepository;
  /** Wakes the worker when this process queues a message. */
  queue: MailQueue;
  transport: MailSender;
  prepare: MailPreparers;
  log: FastifyBaseLogger;
  now?: () => Date;
  tuning?: Partial<MailDeliveryTuning>;
}

/**
 * Sends queued account mail after the requests that queued it have answered. Runs inside
 * `vinhistory serve` (start/stop with the server); on several instances each runs one, and claims
 * (a lease in the database) keep any message from being sent by two at once. A failed attempt is
 * retried with backoff; after `maxAttempts` the message is given up, logged, and kept as failed.
 */
export class MailDeliveryWorker {
  private readonly tuning: MailDeliveryTuning;
  private readonly now: () => Date;
  private running: Promise<void> | null = null;
  private stopping = false;
  private woken = false;
  // The server's listening socket keeps the process up, not this pause's timer.
  private readonly pause = new WakeablePause({ holdsProcess: false });
  private unsubscribe: (() => void) | null = null;
  private nextPruneAt = 0;

  constructor(private readonly deps: MailDeliveryDeps) {
    this.tuning = { ...DEFAULT_MAIL_DELIVERY, ...deps.tuning };
    this.now = deps.now ?? (() => new Date());
  }

  get transportKind(): MailSender['kind'] {
    return this.deps.transport.kind;
  }

  /** Starts the loop: a pass at once (mail left by a previous run), then on every wake-up or poll. */
  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.unsubscribe = this.deps.queue.onQueued(() => this.wake());
    this.running = this.loop();
  }

  /** Stops taking messages and waits for the sends under way (each bounded by the transport's timeouts). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.wake();
    await this.running;
    this.running = null;
  }

  /**
   * Sends every message due now, pass after pass, until none is left; the number handled. For
   * tests and one-off runs: it does what the loop does, without waiting for a poll.
   */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const handled = await this.pass();
      if (handled === 0) return total;
      total += handled;
    }
  }

  private wake(): void {
    this.woken = true;
    this.pause.wake();
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.woken = false;
      let full = false;
      try {
        await this.pruneNowAndThen();
        full = (await this.pass()) >= this.tuning.batchSize;
      } catch (error) {
        // The database is away or busy: the messages wait in the queue; try again at the next poll.
        this.deps.log.warn({ err: error }, 'mail delivery pass failed');
      }
      // A full batch may have more behind it; a message queued during the pass is due now.
      if (!full && !this.woken && !this.stopping) await this.pause.for(this.tuning.pollMs);
    }
  }

  private async pruneNowAndThen(): Promise<void> {
    const now = this.now();
    if (now.getTime() < this.nextPruneAt) return;
    this.nextPruneAt = now.getTime() + PRUNE_EVERY_MS;
    await this.deps.repository.deleteSettled(['sent', 'skipped'], new Date(now.getTime() - KEEP_SENT_MS));
    await this.deps.repository.deleteSettled(['failed'], new Date(now.getTime() - KEEP_FAILED_MS));
  }

  /** Claims the due messages (up to a batch) and sends them side by side; how many were claimed. */
  private async pass(): Promise<number> {
    const claimed = await this.deps.repository.claim(this.now(), this.tuning.leaseMs, this.tuning.batchSize);
    await Promise.all(claimed.map((mail) => this.deliver(mail)));
    return claimed.length;
  }

  private async deliver(mail: ClaimedMail): Promise<void> {
    const { repository, log } = this.deps;
    const context = { mail: mail.id, kind: mail.kind, attempt: mail.attempts };
    if (mail.attempts > this.tuning.maxAttempts) {
      // Its earlier claims ran out without an outcome (the sender died mid-send, each time).
      await this.failed(mail, `no outcome after ${mail.attempts - 1} attempts (the sender stopped during each)`, context);
      return;
    }
    let prepared: PreparedMail;
    try {
      prepared = await this.deps.prepare[mail.kind](mail, this.now());
    } catch (error) {
      await this.failed(mail, describeError(error, []), context);
      return;
    }
    if (prepared.kind === 'skip') {
      await repository.markSkipped(mail, prepared.reason);
      log.info({ ...context, reason: prepared.reason }, 'mail skipped: nothing to send');
      return;
    }
    try {
      await this.deps.transport.send(prepared.message);
    } catch (error) {
      await this.failed(mail, describeError(error, prepared.secrets), context);
      return;
    }
    // Delivery is at least once: should this write fail, the lease runs out and the message is sent again.
    if (await repository.markSent(mail, this.now())) log.info({ ...context, ...prepared.logContext, transport: this.deps.transport.kind }, 'mail sent');
    else log.warn(context, 'mail sent after its claim ran out: another instance may send it again');
  }

  private async failed(mail: ClaimedMail, error: string, context: Record<string, unknown>): Promise<void> {
    const now = this.now();
    if (mail.attempts >= this.tuning.maxAttempts) {
      await this.deps.repository.giveUp(mail, now, error);
      this.deps.log.error({ ...context, error }, `mail given up after ${mail.attempts} attempts`);
      return;
    }
    const retryAt = new Date(now.getTime() + this.tuning.retryDelayMs(mail.attempts));
    await this.deps.repository.retryLater(mail, retryAt, error);
    this.deps.log.warn({ ...context, error, retryAt: retryAt.toISOString() }, 'mail not sent; it will be retried');
  }
}

/**
 * An error as kept in the queue and the log: its message and code, with the message's secrets
 * (a reset link) and any URL credentials taken out, in case a transport quotes them.
 */
export function describeError(error: unknown, secrets: string[]): string {
  const base = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  let text = typeof code === 'string' && !base.includes(code) ? `${code}: ${base}` : base;
  for (const secret of secrets) if (secret) text = text.split(secret).join('[REDACTED]');
  return text.replace(/\/\/[^/\s@]+@/g, '//[REDACTED]@');
}
