import type { Db } from '../database.ts';

/** Password-reset links. The link's secret is stored as its SHA-256 only, and works once. */
export class PasswordResetsRepository {
  constructor(private readonly db: Db) {}

  async create(input: { tokenHash: string; accountId: string; now: Date; expiresAt: Date }): Promise<void> {
    await this.db.kysely
      .insertInto('password_resets')
      .values({
        token_hash: input.tokenHash,
        account_id: input.accountId,
        created_at: input.now.toISOString(),
        expires_at: input.expiresAt.toISOString(),
        used_at: null,
      })
      .execute();
  }

  /** The account a live (unused, unexpired) link is for. */
  async findLive(tokenHash: string, now = new Date()): Promise<{ accountId: string; email: string } | undefined> {
    const row = await this.db.kysely
      .selectFrom('password_resets as r')
      .innerJoin('accounts as a', 'a.id', 'r.account_id')
      .select(['r.account_id', 'a.email'])
      .where('r.token_hash', '=', tokenHash)
      .where('r.used_at', 'is', null)
      .where('r.expires_at', '>', now.toISOString())
      .executeTakeFirst();
    return row ? { accountId: row.account_id, email: row.email } : undefined;
  }

  /**
   * Uses the link up: true for exactly one caller, however many submit it at once (a conditional
   * update), and only while it is live.
   */
  async consume(tokenHash: string, now = new Date()): Promise<boolean> {
    const at = now.toISOString();
    const result = await this.db.kysely
      .updateTable('password_resets')
      .set({ used_at: at })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', at)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** After a password change every outstanding link of the account is dead. */
  async invalidateForAccount(accountId: string, now = new Date()): Promise<void> {
    await this.db.kysely
      .updateTable('password_resets')
      .set({ used_at: now.toISOString() })
      .where('account_id', '=', accountId)
      .where('used_at', 'is', null)
      .execute();
  }

  async deleteExpired(now = new Date()): Promise<number> {
    const result = await this.db.kysely.deleteFrom('password_resets').where('expires_at', '<=', now.toISOString()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
