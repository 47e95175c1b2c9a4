import type { Kysely } from 'kysely';
import type { Database } from '../../schema.ts';

/**
 * PostgreSQL: the account's row, locked until the transaction ends, so that two transactions
 * counting the account's rows before inserting one (a watch within the plan's limit) run one after
 * the other and cannot both take the last place.
 */
export async function lockAccountPostgres(trx: Kysely<Database>, accountId: string): Promise<void> {
  await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}
