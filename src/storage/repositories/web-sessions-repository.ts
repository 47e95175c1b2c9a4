import type { Db } from '../database.ts';
import type { LiveSession } from '../../domain/web-session.ts';

/** Browser sessions of the personal account. Only the SHA-256 of a session id is ever stored. */
export class WebSessionsRepository {
  constructor(private readonly db: Db) {}

  async create(session: { idHash: string; accountId: string; expiresAt: Date }, now = new Date()): Promise<void> {
    const at = now.toISOString();
    await this.db.kysely
      .insertInto('web_sessions')
      .values({ id_hash: session.idHash, account_id: session.accountId, created_at: at, last_seen_at: at, expires_at: session.expiresAt.toISOString() })
      .execute();
  }

  /** The session with this id hash, with its account, if it has not expired. */
  async findLive(idHash: string, now = new Date()): Promise<LiveSession | undefined> {
    const row = await this.db.kysely
      .selectFrom('web_sessions as s')
      .innerJoin('accounts as a', 'a.id', 's.account_id')
      .select(['s.id_hash', 's.account_id', 'a.email', 's.created_at', 's.last_seen_at', 's.expires_at'])
      .where('s.id_hash', '=', idHash)
      .where('s.expires_at', '>', now.toISOString())
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      idHash: row.id_hash,
      accountId: row.account_id,
      email: row.email,
      createdAt: row.created_at,
      lastSeenAt: row.last_seen_at,
      expiresAt: row.expires_at,
    };
  }

  async touch(idHash: string, lastSeenAt: Date, expiresAt: Date): Promise<void> {
    await this.db.kysely
      .updateTable('web_sessions')
      .set({ last_seen_at: lastSeenAt.toISOString(), expires_at: expiresAt.toISOString() })
      .where('id_hash', '=', idHash)
      .execute();
  }

  async delete(idHash: string): Promise<void> {
    await this.db.kysely.deleteFrom('web_sessions').where('id_hash', '=', idHash).execute();
  }

  /** Ends every session of the account, but the one given (the browser that changed the password). */
  async deleteForAccount(accountId: string, exceptIdHash?: string): Promise<number> {
    let query = this.db.kysely.deleteFrom('web_sessions').where('account_id', '=', accountId);
    if (exceptIdHash !== undefined) query = query.where('id_hash', '!=', exceptIdHash);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async countForAccount(accountId: string, now = new Date()): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('web_sessions')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('account_id', '=', accountId)
      .where('expires_at', '>', now.toISOString())
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async deleteExpired(now = new Date()): Promise<number> {
    const result = await this.db.kysely.deleteFrom('web_sessions').where('expires_at', '<=', now.toISOString()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
