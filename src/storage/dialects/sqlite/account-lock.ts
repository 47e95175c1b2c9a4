import type { Kysely } from 'kysely';
import type { Database } from '../../schema.ts';

/**
 * SQLite: nothing to take. A transaction that writes holds the database's one write lock, so a
 * count and the insert after it cannot interleave with another connection's.
 */
export async function lockAccountSqlite(_trx: Kysely<Database>, _accountId: string): Promise<void> {}
