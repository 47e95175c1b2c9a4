import { sql, type Kysely } from 'kysely';
import type { Database, WebhookOutboxRow } from '../../schema.ts';
import type { EventClaim } from '../dialect.ts';

/**
 * SQLite has one writer at a time, so one statement claims atomically; the lease still keeps the
 * server's worker and a `vinhistory deliver` on the same file from sending an event twice.
 */
export async function claimDueEventsSqlite(kysely: Kysely<Database>, options: EventClaim): Promise<WebhookOutboxRow[]> {
  const only = options.eventId === undefined ? sql`` : sql`and id = ${options.eventId}`;
  const { rows } = await sql<WebhookOutboxRow>`
    update webhook_outbox set lease_owner = ${options.owner}, lease_until = ${options.leaseUntil}
    where id in (
      select id from webhook_outbox
      where status = 'pending' and next_attempt_at <= ${options.now}
        and (lease_until is null or lease_until <= ${options.now}) ${only}
      order by next_attempt_at
      limit ${options.limit}
    )
    returning *`.execute(kysely);
  return rows;
}
