import { sql, type Kysely } from 'kysely';
import type { BatchRow, Database } from '../../schema.ts';
import type { BatchClaim } from '../dialect.ts';

/**
 * Any number of instances claim at once: FOR UPDATE SKIP LOCKED makes each pass over the batches
 * another is claiming, and the lease written in the same statement keeps them out until it ends,
 * so the batches of an instance that died are taken over by another when their leases run out.
 */
export async function claimBatchesPostgres(kysely: Kysely<Database>, claim: BatchClaim): Promise<BatchRow[]> {
  const { rows } = await sql<BatchRow>`
    with due as (
      select id from batches
      where status != 'done' and (lease_until is null or lease_until <= ${claim.now})
      order by created_at
      limit ${claim.limit}
      for update skip locked
    )
    update batches b set lease_owner = ${claim.owner}, lease_until = ${claim.leaseUntil},
      status = 'running', started_at = coalesce(b.started_at, ${claim.now})
    from due where b.id = due.id
    returning b.*`.execute(kysely);
  return rows;
}
