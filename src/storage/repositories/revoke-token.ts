import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';

/**
 * Revokes the live token of `table` whose `column` has `value` (and, for a customer's token, that
 * belongs to `accountId`): one conditional UPDATE, so two revocations racing change it once.
 * True when a live token was revoked.
 */
export async function revokeLiveToken(
  kysely: Kysely<Database>,
  target:
    | { table: 'api_tokens'; column: 'id' | 'token_hash'; value: string; accountId?: string }
    | { table: 'operator_tokens'; column: 'id' | 'token_hash'; value: string },
  now: Date,
): Promise<boolean> {
  // Both tables have id, token_hash and revoked_at of the same types; Kysely cannot type an
  // update over a union of tables, so the query is typed as the customers' table.
  let query = kysely
    .updateTable(target.table as 'api_tokens')
    .set({ revoked_at: now.toISOString() })
    .where(target.column, '=', target.value)
    .where('revoked_at', 'is', null);
  if ('accountId' in target && target.accountId !== undefined) query = query.where('account_id', '=', target.accountId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
