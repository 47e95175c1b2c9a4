import type { Db } from '../database.ts';

/** Password hashes, apart from the accounts table so that no `selectAll` on accounts carries one. */
export class AccountPasswordsRepository {
  constructor(private readonly db: Db) {}

  /** The stored hash, or undefined when the account has no password yet (made by the operator's CLI). */
  async get(accountId: string): Promise<string | undefined> {
    const row = await this.db.kysely
      .selectFrom('account_passwords')
      .select('password_hash')
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row?.password_hash;
  }

  async set(accountId: string, passwordHash: string, now = new Date()): Promise<void> {
    const updated_at = now.toISOString();
    await this.db.kysely
      .insertInto('account_passwords')
      .values({ account_id: accountId, password_hash: passwordHash, updated_at })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ password_hash: passwordHash, updated_at }))
      .execute();
  }

  /** The account can no longer log in with a password (its deletion). */
  async delete(accountId: string): Promise<void> {
    await this.db.kysely.deleteFrom('account_passwords').where('account_id', '=', accountId).execute();
  }
}
