import type { Db } from '../database.ts';
import type { WebhookAttemptRow, WebhookOutboxRow } from '../schema.ts';
import { newId } from '../../domain/ids.ts';
import { encodeCursor, type Page, type PagePosition } from '../../domain/watch.ts';
import type { ClaimedEvent, Delivery, DeliveryAttempt, DeliveryStatus, WebhookEventType } from '../../domain/webhook.ts';

function toClaimed(row: WebhookOutboxRow): ClaimedEvent {
  return { id: row.id, accountId: row.account_id, type: row.type as WebhookEventType, payload: row.payload, createdAt: row.created_at, attempts: Number(row.attempts) };
}

function toAttempt(row: WebhookAttemptRow): DeliveryAttempt {
  return {
    attemptedAt: row.attempted_at,
    url: row.url,
    statusCode: row.status_code === null ? null : Number(row.status_code),
    durationMs: Number(row.duration_ms),
    error: row.error,
    responseExcerpt: row.response_excerpt,
  };
}

/** An event to deliver: made at `at`, given up at `giveUpAt` (both ISO). */
export interface NewWebhookEvent {
  id: string;
  accountId: string;
  type: WebhookEventType;
  payload: string;
  at: string;
  giveUpAt: string;
}

/** What one attempt came to, and what follows from it for the event. */
export type AttemptOutcome =
  | { kind: 'delivered' }
  | { kind: 'retry'; at: Date }
  | { kind: 'failed' };

export interface QueueStats {
  pending: number;
  /** created_at of the oldest pending event, or null when none is pending. */
  oldestPendingAt: string | null;
}

/** The outbox: webhook events, their delivery state and the workers' leases; and every attempt. */
export class WebhookOutboxRepository {
  constructor(private readonly db: Db) {}

  /**
   * Events due at once, retried until `giveUpAt` (the window is the webhooks' rule:
   * webhooks/retry-schedule.ts); 200 a statement. In the caller's transaction if this repository
   * is bound to one (an import's lot events).
   */
  async insertEvents(events: readonly NewWebhookEvent[]): Promise<void> {
    const rows: WebhookOutboxRow[] = events.map((event) => ({
      id: event.id,
      account_id: event.accountId,
      type: event.type,
      payload: event.payload,
      created_at: event.at,
      status: 'pending',
      attempts: 0,
      next_attempt_at: event.at,
      give_up_at: event.giveUpAt,
      lease_owner: null,
      lease_until: null,
      last_attempt_at: null,
      finished_at: null,
    }));
    for (let start = 0; start < rows.length; start += 200) await this.db.kysely.insertInto('webhook_outbox').values(rows.slice(start, start + 200)).execute();
  }

  /** Takes the lease of up to `limit` due events (or of the one named), for `leaseMs`. */
  async claim(options: { owner: string; now: Date; leaseMs: number; limit: number; eventId?: string }): Promise<ClaimedEvent[]> {
    const claim = {
      owner: options.owner,
      now: options.now.toISOString(),
      leaseUntil: new Date(options.now.getTime() + options.leaseMs).toISOString(),
      limit: options.limit,
      ...(options.eventId !== undefined ? { eventId: options.eventId } : {}),
    };
    const rows = await this.db.dialect.claimWebhookEvents(this.db.kysely, claim);
    return rows.map(toClaimed);
  }

  /** When the event gives up: no retry is scheduled after this. */
  async giveUpAt(eventId: string): Promise<string | undefined> {
    const row = await this.db.kysely.selectFrom('webhook_outbox').select('give_up_at').where('id', '=', eventId).executeTakeFirst();
    return row?.give_up_at;
  }

  /**
   * Records an attempt and its consequence, in one transaction. The event's state changes only
   * while `owner` still holds its lease (a worker that outlived its lease leaves the event to the
   * one that took it over); the attempt is recorded either way, since it was made.
   */
  async recordAttempt(eventId: string, owner: string, attempt: DeliveryAttempt, outcome: AttemptOutcome): Promise<boolean> {
    return this.db.kysely.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_attempts')
        .values({
          id: newId('watt'),
          event_id: eventId,
          attempted_at: attempt.attemptedAt,
          url: attempt.url,
          status_code: attempt.statusCode,
          duration_ms: attempt.durationMs,
          error: attempt.error,
          response_excerpt: attempt.responseExcerpt,
        })
        .execute();
      const state =
        outcome.kind === 'retry'
          ? { next_attempt_at: outcome.at.toISOString() }
          : { status: outcome.kind as DeliveryStatus, finished_at: attempt.attemptedAt };
      const result = await trx
        .updateTable('webhook_outbox')
        .set((eb) => ({ ...state, attempts: eb('attempts', '+', 1), last_attempt_at: attempt.attemptedAt, lease_owner: null, lease_until: null }))
        .where('id', '=', eventId)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    });
  }

  /** Queues one of the account's events again, due now, retried until `giveUpAt` (a fresh window). */
  async resend(accountId: string, eventId: string, now: Date, giveUpAt: Date): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('webhook_outbox')
      .set({
        status: 'pending',
        next_attempt_at: now.toISOString(),
        give_up_at: giveUpAt.toISOString(),
        finished_at: null,
      })
      .where('id', '=', eventId)
      .where('account_id', '=', accountId)
      .where('status', 'in', ['delivered', 'failed'])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The account's events, newest first, each with its attempts (oldest first). */
  async listDeliveries(accountId: string, options: { limit: number; after?: PagePosition | null; eventId?: string }): Promise<Page<Delivery>> {
    let query = this.db.kysely.selectFrom('webhook_outbox').selectAll().where('account_id', '=', accountId);
    if (options.eventId !== undefined) query = query.where('id', '=', options.eventId);
    const after = options.after;
    if (after) {
      query = query.where((eb) =>
        eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]),
      );
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit + 1).execute();
    const page = rows.slice(0, options.limit);
    const attempts = new Map<string, DeliveryAttempt[]>();
    if (page.length > 0) {
      const attemptRows = await this.db.kysely
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('event_id', 'in', page.map((row) => row.id))
        .orderBy('attempted_at')
        .orderBy('id')
        .execute();
      for (const row of attemptRows) {
        const list = attempts.get(row.event_id);
        if (list) list.push(toAttempt(row));
        else attempts.set(row.event_id, [toAttempt(row)]);
      }
    }
    const items: Delivery[] = page.map((row) => ({
      eventId: row.id,
      type: row.type as WebhookEventType,
      createdAt: row.created_at,
      status: row.status,
      attempts: attempts.get(row.id) ?? [],
      nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
      payload: row.payload,
    }));
    const last = page[page.length - 1];
    return { items, nextCursor: rows.length > options.limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null };
  }

  /**
   * Deletes up to `limit` events finished (delivered, or failed) before `cutoff`, oldest first,
   * with their attempts, in one short transaction; answers how many. Pending events are never
   * touched: a resend makes an event pending again and so keeps it.
   */
  async deleteFinishedBefore(cutoff: Date, limit: number): Promise<number> {
    return this.db.kysely.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('webhook_outbox')
        .select('id')
        .where('status', '!=', 'pending')
        .where('finished_at', '<', cutoff.toISOString())
        .orderBy('finished_at')
        .limit(limit)
        .execute();
      if (rows.length === 0) return 0;
      const ids = rows.map((row) => row.id);
      await trx.deleteFrom('webhook_attempts').where('event_id', 'in', ids).execute();
      const deleted = await trx.deleteFrom('webhook_outbox').where('id', 'in', ids).where('status', '!=', 'pending').executeTakeFirst();
      return Number(deleted.numDeletedRows);
    });
  }

  /** Pending events across every account: for the queue metrics. */
  async stats(): Promise<QueueStats> {
    const row = await this.db.kysely
      .selectFrom('webhook_outbox')
      .select((eb) => [eb.fn.countAll<string | number>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return { pending: Number(row.n), oldestPendingAt: (row.oldest) ?? null };
  }
}
