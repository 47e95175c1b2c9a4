import { PreparedQuery } from '../prepared-query.ts';
import type { Db } from '../database.ts';
import type { CommittedSearch } from '../../domain/search.ts';
import { lotJson, type Lot } from '../../domain/lot.ts';

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
/** The row an earlier search's key leaves: the key's subject and age, and what the search answered. */
export interface EarlierKeyRow {
  vin: string;
  keyCreatedAt: string;
  id: string;
  searchVin: string;
  report_id: string | null;
  created_at: string;
  lots: string | null;
}

/**
 * What an earlier key's row answers for a search at `now` asking for `subject`: a replay, a
 * conflict, or `expired` (older than the window: the row is to be deleted and the key is free).
 */
export function earlierSearchOf(row: EarlierKeyRow, subject: string, now: Date): EarlierSearch | 'expired' {
  if (Date.parse(row.keyCreatedAt) <= now.getTime() - IDEMPOTENCY_WINDOW_MS) return 'expired';
  if (row.vin !== subject) return { kind: 'conflict', originalVin: row.vin };
  return {
    kind: 'replay',
    search: {
      searchId: row.id,
      reportId: row.report_id,
      // The key's subject is what was asked (a VIN, or a lot); the search's VIN is what it answered.
      vin: row.searchVin,
      createdAt: row.created_at,
      // A replay is rare: its snapshot is split into its lots' texts the plain way.
      lots: row.lots ? (JSON.parse(row.lots) as Lot[]).map(lotJson) : [],
    },
  };
}

/**
 * The Idempotency-Keys of the last 24 hours, per account, each naming the search it answered. The
 * search commit runs the statements below, on either driver.
 */
export class IdempotencyKeysRepository {
  readonly insertKey: PreparedQuery<NewIdempotencyKey, unknown>;
  readonly earlierKey: PreparedQuery<{ accountId: string; key: string }, EarlierKeyRow>;
  readonly deleteKey: PreparedQuery<{ accountId: string; key: string }, unknown>;

  constructor(private readonly db: Db) {
    const k = db.kysely;
    this.insertKey = new PreparedQuery(k, ['accountId', 'key', 'vin', 'searchId', 'at'], (p) =>
      k.insertInto('idempotency_keys').values({ account_id: p.accountId, key: p.key, vin: p.vin, search_id: p.searchId, created_at: p.at }),
    );
    this.earlierKey = new PreparedQuery(k, ['accountId', 'key'], (p) =>
      k
        .selectFrom('idempotency_keys as k')
        .innerJoin('searches as s', 's.id', 'k.search_id')
        .leftJoin('reports as r', 'r.id', 's.report_id')
        .select(['k.vin', 'k.created_at as keyCreatedAt', 's.id', 's.vin as searchVin', 's.report_id', 's.created_at', 'r.lots'])
        .where('k.account_id', '=', p.accountId)
        .where('k.key', '=', p.key),
    );
    this.deleteKey = new PreparedQuery(k, ['accountId', 'key'], (p) =>
      k.deleteFrom('idempotency_keys').where('account_id', '=', p.accountId).where('key', '=', p.key),
    );
  }

  /** Keys live 24 hours; older ones are only dead weight. */
  async deleteExpired(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
    const result = await this.db.kysely.deleteFrom('idempotency_keys').where('created_at', '<=', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
