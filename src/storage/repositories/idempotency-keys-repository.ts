import type { Kysely } from 'kysely';
import { PreparedQuery } from '../prepared-query.ts';
import type { Db } from '../database.ts';
import type { Database } from '../schema.ts';
import type { CommittedSearch } from '../../domain/search.ts';

/** How long a repeat with the same Idempotency-Key replays the first search. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export type NewIdempotencyKey = {
  accountId: string;
  key: string;
  /** What the search asked for: a VIN, or a lot (`copart/12345678`); a repeat must ask the same. */
  vin: string;
  searchId: string;
  at: string;
};

/** What an earlier search with the same key answers: a replay of it, or a conflict when it was for another VIN. */
export type EarlierSearch = { kind: 'replay'; search: CommittedSearch } | { kind: 'conflict'; originalVin: string };

/** The Idempotency-Keys of the last 24 hours, per account, each naming the search it answered. */
export class IdempotencyKeysRepository {
  private readonly insertKey: PreparedQuery<NewIdempotencyKey, unknown>;

  constructor(private readonly db: Db) {
    const k = db.kysely;
    this.insertKey = new PreparedQuery(k, ['accountId', 'key', 'vin', 'searchId', 'at'], (p) =>
      k.insertInto('idempotency_keys').values({ account_id: p.accountId, key: p.key, vin: p.vin, search_id: p.searchId, created_at: p.at }),
    );
  }

  /** The earlier search this key names, if any. A key older than the window is deleted and no longer answers. */
  async earlier(trx: Kysely<Database>, search: { accountId: string; subject: string; now: Date }, key: string): Promise<EarlierSearch | null> {
    const previous = await trx
      .selectFrom('idempotency_keys as k')
      .innerJoin('searches as s', 's.id', 'k.search_id')
      .leftJoin('reports as r', 'r.id', 's.report_id')
      .select(['k.vin', 'k.created_at as keyCreatedAt', 's.id', 's.vin as searchVin', 's.report_id', 's.created_at', 'r.lots'])
      .where('k.account_id', '=', search.accountId)
      .where('k.key', '=', key)
      .executeTakeFirst();
    if (!previous) return null;
    const fresh = Date.parse(previous.keyCreatedAt) > search.now.getTime() - IDEMPOTENCY_WINDOW_MS;
    if (!fresh) {
      await trx.deleteFrom('idempotency_keys').where('account_id', '=', search.accountId).where('key', '=', key).execute();
      return null;
    }
    if (previous.vin !== search.subject) return { kind: 'conflict', originalVin: previous.vin };
    return {
      kind: 'replay',
      search: {
        searchId: previous.id,
        reportId: previous.report_id,
        // The key's subject is what was asked (a VIN, or a lot); the search's VIN is what it answered.
        vin: previous.searchVin,
        createdAt: previous.created_at,
        lots: previous.lots ? JSON.parse(previous.lots) : [],
      },
    };
  }

  insert(trx: Kysely<Database>, key: NewIdempotencyKey): Promise<unknown> {
    return this.insertKey.execute(trx, key);
  }

  /** Keys live 24 hours; older ones are only dead weight. */
  async deleteExpired(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
    const result = await this.db.kysely.deleteFrom('idempotency_keys').where('created_at', '<=', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
