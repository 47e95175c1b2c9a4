import { sql, type Kysely } from 'kysely';
import type { Database, WebhookOutboxRow } from '../../schema.ts';
import type { EventClaim } from '../dialect.ts';

/**
 * Any number of instances claim at once: FOR UPDATE SKIP LOCKED makes each pass over rows another
 * instance is claiming, and the lease written in the same statement keeps them out of every later
 * claim until it ends (a worker that died mid-delivery loses its events when its lease runs out).
 */
export async function claimDueEventsPostgres(kysely: Kysely<Database>, options: EventClaim): Promise<WebhookOutboxRow[]> {
  const only = options.eventId === undefined ? sql`` : sql`and id = ${options.eventId}`;
  const { rows } = await sql<WebhookOutboxRow>`
    with due as (
      select id from webhook_outbox
      where status = 'pending' and next_attempt_at <= ${options.now}
        and (lease_until is null or lease_until <= ${options.now}) ${only}
      order by next_attempt_at
      limit ${options.limit}
      for update skip locked
    )
    update webhook_outbox o set lease_owner = ${options.owner}, lease_until = ${options.leaseUntil}
    from due where o.id = due.id
    returning o.*`.execute(kysely);
  return rows;
}
