import { sql, type Kysely } from 'kysely';
import type { Database, MailQueueRow } from '../../schema.ts';
import type { MailClaim } from '../dialect.ts';

/**
 * PostgreSQL: several instances claim at once. The due rows are locked with FOR UPDATE SKIP
 * LOCKED, so a claimer passes over rows another one is claiming instead of waiting for them, and
 * a row claimed and committed meanwhile is re-checked against the condition (its lease is now in
 * the future) and left out: one message, one claim. The lease, not the row lock, then guards the
 * send, which happens outside any transaction.
 */
export async function claimMailPostgres(kysely: Kysely<Database>, claim: MailClaim): Promise<MailQueueRow[]> {
  const { rows } = await sql<MailQueueRow>`with due as (
      select id from mail_queue
      where status = 'queued' and next_attempt_at <= ${claim.now} and (lease_until is null or lease_until <= ${claim.now})
      order by next_attempt_at
      limit ${claim.limit}
      for update skip locked
    )
    update mail_queue
    set claim_id = ${claim.claimId}, lease_until = ${claim.leaseUntil}, attempts = mail_queue.attempts + 1
    from due
    where mail_queue.id = due.id
    returning mail_queue.*`.execute(kysely);
  return rows;
}
