import { sql } from 'kysely';
import { newId } from '../../domain/ids.ts';
import type { Db } from '../database.ts';

export type AttemptKind = 'login_failure' | 'reset_request' | 'signup' | 'password_check' | 'webhook_ping' | 'market_look';

/** One place asked for: an attempt of `kind` by `subject`, allowed while fewer than `limit` were made after `since`. */
export interface AttemptClaim {
  kind: AttemptKind;
  subject: string;
  limit: number;
  since: Date;
}

/**
 * Attempts counted in a sliding window (failed log-ins per email and per address, reset mails per
 * email), in the database so that every instance of a scaled-out deployment counts together.
 */
export class AuthAttemptsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Records one attempt under every claim if each is under its limit, else none: the ids of the
   * rows made, or null. Counting and recording are one step for every instance at once, so
   * attempts arriving together cannot all see the same count and all pass.
   *
   * One `insert ... select ... where <counts under limits>` does both; how it is made atomic is the
   * dialect's (dialects/{sqlite,postgres}/auth-attempts.ts): SQLite's write lock alone, PostgreSQL
   * an advisory lock per subject.
   */
  async reserve(claims: AttemptClaim[], now: Date): Promise<string[] | null> {
    const ids = claims.map(() => newId('att'));
    const createdAt = now.toISOString();
    const rows = claims.map(
      (claim, i) =>
        sql`select cast(${ids[i]} as text) as id, cast(${claim.kind} as text) as kind, cast(${claim.subject} as text) as subject, cast(${createdAt} as text) as created_at`,
    );
    const underLimits = claims.map(
      (claim) =>
        sql`(select count(*) from auth_attempts where kind = ${claim.kind} and subject = ${claim.subject} and created_at > ${claim.since.toISOString()}) < ${claim.limit}`,
    );
    const insert = sql`insert into auth_attempts (id, kind, subject, created_at)
      select id, kind, subject, created_at from (${sql.join(rows, sql` union all `)}) as attempt
      where ${sql.join(underLimits, sql` and `)}`;

    const inserted = await this.db.dialect.insertAttempts(
      this.db.kysely,
      insert,
      claims.length,
      claims.map((claim) => `auth_attempts:${claim.kind}:${claim.subject}`),
    );
    return inserted ? ids : null;
  }

  /** Gives back places taken by `reserve` (an attempt that the rules do not count once it is over). */
  async release(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.kysely.deleteFrom('auth_attempts').where('id', 'in', ids).execute();
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
    return { count: Number(row.n), oldest: (row.oldest) ?? null };
  }

  async clear(kind: AttemptKind, subject: string): Promise<void> {
    await this.db.kysely.deleteFrom('auth_attempts').where('kind', '=', kind).where('subject', '=', subject).execute();
  }

  async deleteOlderThan(cutoff: Date): Promise<number> {
    const result = await this.db.kysely.deleteFrom('auth_attempts').where('created_at', '<=', cutoff.toISOString()).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
