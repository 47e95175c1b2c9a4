import { sql, type Kysely } from 'kysely';
import type { Database, MailQueueRow } from '../../schema.ts';
import type { MailClaim } from '../dialect.ts';

/**
 * SQLite: one statement picks the due messages and claims them. It takes the database's write
 * lock before it reads, so claims are serial across connections and processes: no two claim one
 * message. (One process is the deployment on SQLite; this holds for a CLI beside it too.)
 */
export async function claimMailSqlite(kysely: Kysely<Database>, claim: MailClaim): Promise<MailQueueRow[]> {
  const { rows } = await sql<MailQueueRow>`update mail_queue
    set claim_id = ${claim.claimId}, lease_until = ${claim.leaseUntil}, attempts = attempts + 1
    where id in (
      select id from mail_queue
      where status = 'queued' and next_attempt_at <= ${claim.now} and (lease_until is null or lease_until <= ${claim.now})
      order by next_attempt_at
      limit ${claim.limit}
    )
    returning *`.execute(kysely);
  return rows;
}
