import { randomBytes } from 'node:crypto';
import { newId } from '../../domain/ids.ts';
import type { ClaimedMail, MailKind, MailQueueSummary, MailStatus, QueuedMail } from '../../domain/mail.ts';
import type { Db } from '../database.ts';
import type { MailQueueRow } from '../schema.ts';

/** A claimed message is settled only by its claim's holder, and only while the claim is its own. */
export type MailClaimRef = Pick<ClaimedMail, 'id' | 'claimId'>;

/** The longest last_error kept: enough for an SMTP reply, no room for a message body. */
const MAX_ERROR_LENGTH = 500;

function toMail(row: MailQueueRow): QueuedMail {
  return {
    id: row.id,
    kind: row.kind as MailKind,
    recipient: row.recipient,
    subject: row.subject,
    body: row.body,
    html: row.html,
    status: row.status,
    attempts: Number(row.attempts),
    createdAt: row.created_at,
    nextAttemptAt: row.next_attempt_at,
    sentAt: row.sent_at,
    failedAt: row.failed_at,
    lastError: row.last_error,
  };
}

/**
 * The durable mail queue. A message is queued by the request that wants it sent, then claimed by
 * one delivery worker for a lease, sent, and settled (sent, skipped, retried later, or given up).
 * A worker that dies while holding a claim leaves the message to be claimed again once the lease
 * has run out.
 */
export class MailQueueRepository {
  constructor(private readonly db: Db) {}

  async enqueue(mail: { kind: MailKind; recipient: string; subject: string; body: string; html?: string | null }, now: Date): Promise<string> {
    const id = newId('mail');
    const at = now.toISOString();
    await this.db.kysely
      .insertInto('mail_queue')
      .values({
        id,
        kind: mail.kind,
        recipient: mail.recipient,
        subject: mail.subject,
        body: mail.body,
        html: mail.html ?? null,
        status: 'queued',
        attempts: 0,
        created_at: at,
        next_attempt_at: at,
        claim_id: null,
        lease_until: null,
        sent_at: null,
        failed_at: null,
        last_error: null,
      })
      .execute();
    return id;
  }

  /**
   * Claims up to `limit` due messages (queued, next attempt reached, no live lease) until
   * `now + leaseMs`, counting an attempt for each: a message whose sender dies mid-send has that
   * attempt counted too, so a message that kills its sender cannot loop forever.
   */
  async claim(now: Date, leaseMs: number, limit: number): Promise<ClaimedMail[]> {
    const claim = {
      claimId: randomBytes(12).toString('base64url'),
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + leaseMs).toISOString(),
      limit: Math.max(1, Math.trunc(limit)),
    };
    const rows = await this.db.dialect.claimMail(this.db.kysely, claim);
    return rows
      .map((row) => ({ ...toMail(row), claimId: row.claim_id!, leaseUntil: row.lease_until! }))
      .sort((a, b) => a.nextAttemptAt.localeCompare(b.nextAttemptAt) || a.id.localeCompare(b.id));
  }

  /** True when the claim was still this worker's (false: its lease ran out and another took it). */
  async markSent(claim: MailClaimRef, now: Date): Promise<boolean> {
    return this.settle(claim, { status: 'sent', sent_at: now.toISOString(), last_error: null });
  }

  /** Nothing to send after all (the address has no account): settled without a message. */
  async markSkipped(claim: MailClaimRef, reason: string): Promise<boolean> {
    return this.settle(claim, { status: 'skipped', last_error: reason.slice(0, MAX_ERROR_LENGTH) });
  }

  /** The attempt failed: the message waits until `nextAttemptAt`, free for any worker to claim. */
  async retryLater(claim: MailClaimRef, nextAttemptAt: Date, error: string): Promise<boolean> {
    return this.settle(claim, { status: 'queued', next_attempt_at: nextAttemptAt.toISOString(), last_error: error.slice(0, MAX_ERROR_LENGTH) });
  }

  /** No more attempts: the message stays, failed, for the operator to see. */
  async giveUp(claim: MailClaimRef, now: Date, error: string): Promise<boolean> {
    return this.settle(claim, { status: 'failed', failed_at: now.toISOString(), last_error: error.slice(0, MAX_ERROR_LENGTH) });
  }

  private async settle(
    claim: MailClaimRef,
    values: { status: MailStatus; sent_at?: string; failed_at?: string; next_attempt_at?: string; last_error: string | null },
  ): Promise<boolean> {
    const result = await this.db.kysely
      .updateTable('mail_queue')
      .set({ ...values, claim_id: null, lease_until: null })
      .where('id', '=', claim.id)
      .where('claim_id', '=', claim.claimId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async find(id: string): Promise<QueuedMail | undefined> {
    const row = await this.db.kysely.selectFrom('mail_queue').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toMail(row);
  }

  async summary(): Promise<MailQueueSummary> {
    const rows = await this.db.kysely
      .selectFrom('mail_queue')
      .select((eb) => [
        'status',
        eb.fn.countAll<string | number>().as('n'),
        eb.fn.sum<string | number | null>(eb.case().when('last_error', 'is not', null).then(1).else(0).end()).as('retrying'),
        eb.fn.min('created_at').as('oldest'),
      ])
      .groupBy('status')
      .execute();
    const summary: MailQueueSummary = { queued: 0, retrying: 0, sent: 0, skipped: 0, failed: 0, oldestQueuedAt: null };
    for (const row of rows) {
      summary[row.status] = Number(row.n);
      if (row.status === 'queued') {
        summary.retrying = Number(row.retrying ?? 0);
        summary.oldestQueuedAt = (row.oldest) ?? null;
      }
    }
    return summary;
  }

  /** Messages of one status (or queued ones that failed at least once, with their error), oldest first. */
  async list(filter: MailStatus | 'retrying', limit: number): Promise<QueuedMail[]> {
    let query = this.db.kysely.selectFrom('mail_queue').selectAll();
    query = filter === 'retrying' ? query.where('status', '=', 'queued').where('last_error', 'is not', null) : query.where('status', '=', filter);
    const rows = await query.orderBy('created_at').orderBy('id').limit(limit).execute();
    return rows.map(toMail);
  }

  /** Deletes messages of these statuses queued before `cutoff`: settled mail is only weight, and holds addresses. */
  async deleteSettled(statuses: Exclude<MailStatus, 'queued'>[], cutoff: Date): Promise<number> {
    if (statuses.length === 0) return 0;
    const result = await this.db.kysely
      .deleteFrom('mail_queue')
      .where('status', 'in', statuses)
      .where('created_at', '<', cutoff.toISOString())
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
