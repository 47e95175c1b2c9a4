import { sql, type Kysely } from 'kysely';
import type { BatchRow, Database } from '../../schema.ts';
import type { BatchClaim } from '../dialect.ts';

/**
 * SQLite has one writer at a time, so one statement claims atomically; the lease keeps a batch
 * that a server runs from being taken by another process on the same file until it ends (and a
 * restarted server takes over the batches of the one that died once their leases run out).
 */
export async function claimBatchesSqlite(kysely: Kysely<Database>, claim: BatchClaim): Promise<BatchRow[]> {
  const { rows } = await sql<BatchRow>`
    update batches set lease_owner = ${claim.owner}, lease_until = ${claim.leaseUntil},
      status = 'running', started_at = coalesce(started_at, ${claim.now})
    where id in (
      select id from batches
      where status != 'done' and (lease_until is null or lease_until <= ${claim.now})
      order by created_at
      limit ${claim.limit}
    )
    returning *`.execute(kysely);
  return rows;
}
