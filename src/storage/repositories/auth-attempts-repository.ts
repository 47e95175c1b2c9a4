import { randomBytes } from 'node:crypto';
import type { Db } from '../database.ts';

export type AttemptKind = 'login_failure' | 'reset_request' | 'signup';

/**
 * Attempts counted in a sliding window (failed log-ins per email and per address, reset mails per
 * email), in the database so that every instance of a scaled-out deployment counts together.
 */
export class AuthAttemptsRepository {
  constructor(private readonly db: Db) {}

  async record(kind: AttemptKind, subject: string, now = new Date()): Promise<void> {
    await this.db.kysely
      .insertInto('auth_attempts')
      .values({ id: randomBytes(12).toString('hex'), kind, subject, created_at: now.toISOString() })
      .execute();
  }

  /** How many attempts since `since`, and when the oldest of them was (to say when one frees up). */
  async since(kind: AttemptKind, subject: string, since: Date): Promise<{ count: number; oldest: string | null }> {
    const row = await this.db.kysely
      .selectFrom('auth_attempts')
      .select((eb) => [eb.fn.countAll<string | number>().as('n'), eb.fn.min('created_at').as('oldest')])
      .where('kind', '=', kind)
      .where('subject', '=', subject)
      .where('created_at', '>', since.toISOString())
      .executeTakeFirstOrThrow();
    return { count: Number(row.n), oldest: (row.oldest as string | null) ?? null };
  }

  async clear(kind: AttemptKind, subject: string): Promise<void> {
    await this.db.kysely.deleteFrom('auth_attempts').where('kind', '=', kind).where('subject', '=', subject).execute();
  }

  async deleteOlderThan(cutoff: Date): Promise<number> {
    const result = await this.db.kysely.deleteFrom('auth_attempts').where('created_at', '<=', cutoff.toISOString()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
