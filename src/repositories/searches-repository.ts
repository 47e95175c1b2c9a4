import type { Transaction } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Database, SearchRow } from '../db/schema.ts';
import { newId, newReportId } from '../domain/ids.ts';
import type { Lot } from '../domain/lot.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface SearchToCommit {
  accountId: string;
  tokenId: string;
  vin: string;
  now: Date;
  /** ISO start of the billing period the search counts in. */
  periodStart: string;
  quota: number;
  /** The lots found; empty means a counted "not found" search with no report. */
  lots: Lot[];
  idempotencyKey: string | null;
}

export interface CommittedSearch {
  searchId: string;
  reportId: string | null;
  vin: string;
  createdAt: string;
  lots: Lot[];
}

export type CommitResult =
  | { kind: 'committed'; search: CommittedSearch; used: number }
  | { kind: 'replayed'; search: CommittedSearch; used: number }
  | { kind: 'quota_exceeded'; used: number }
  | { kind: 'idempotency_conflict'; originalVin: string };

/**
 * The ledger of counted searches. The quota count, the search record, the report and the
 * idempotency key commit in one transaction: all of them or none (contract, Limits).
 */
export class SearchesRepository {
  constructor(private readonly db: Db) {}

  async commit(input: SearchToCommit): Promise<CommitResult> {
    try {
      return await this.db.kysely.transaction().execute((trx) => this.commitIn(trx, input));
    } catch (error) {
      // Two requests with the same new Idempotency-Key raced and the other one committed first;
      // run again, and this time the key is found and the first result replayed.
      if (input.idempotencyKey !== null && this.db.isUniqueViolation(error)) {
        return this.db.kysely.transaction().execute((trx) => this.commitIn(trx, input));
      }
      throw error;
    }
  }

  /**
   * The answer an earlier search with this Idempotency-Key gives: a replay of it, or a conflict when
   * it was for another VIN. A key older than the window is deleted and no longer answers.
   */
  private async earlierResult(trx: Transaction<Database>, input: SearchToCommit, key: string): Promise<CommitResult | null> {
    const previous = await trx
      .selectFrom('idempotency_keys as k')
      .innerJoin('searches as s', 's.id', 'k.search_id')
      .leftJoin('reports as r', 'r.id', 's.report_id')
      .select(['k.vin', 'k.created_at as keyCreatedAt', 's.id', 's.report_id', 's.created_at', 'r.lots'])
      .where('k.account_id', '=', input.accountId)
      .where('k.key', '=', key)
      .executeTakeFirst();
    if (!previous) return null;
    const fresh = Date.parse(previous.keyCreatedAt) > input.now.getTime() - IDEMPOTENCY_WINDOW_MS;
    if (!fresh) {
      await trx
        .deleteFrom('idempotency_keys')
        .where('account_id', '=', input.accountId)
        .where('key', '=', key)
        .execute();
      return null;
    }
    if (previous.vin !== input.vin) return { kind: 'idempotency_conflict', originalVin: previous.vin };
    return {
      kind: 'replayed',
      used: await this.usedIn(trx, input.accountId, input.periodStart),
      search: {
        searchId: previous.id,
        reportId: previous.report_id,
        vin: previous.vin,
        createdAt: previous.created_at,
        lots: previous.lots ? JSON.parse(previous.lots) : [],
      },
    };
  }

  private async commitIn(trx: Transaction<Database>, input: SearchToCommit): Promise<CommitResult> {
    const at = input.now.toISOString();
    const key = input.idempotencyKey;
    if (key !== null) {
      const earlier = await this.earlierResult(trx, input, key);
      if (earlier) return earlier;
    }

    // One statement checks and counts: the conditional upsert only increments while used < quota,
    // and on PostgreSQL the row lock it takes serialises concurrent searches of one account.
    const counted = await trx
      .insertInto('usage_counters')
      .values({ account_id: input.accountId, period_start: input.periodStart, used: 1 })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'period_start'])
          .doUpdateSet((eb) => ({ used: eb('usage_counters.used', '+', 1) }))
          .where('usage_counters.used', '<', input.quota),
      )
      .returning('used')
      .executeTakeFirst();
    if (!counted || counted.used > input.quota) {
      if (counted) throw new Error('quota invariant broken: a first search counted past a quota below 1');
      // On PostgreSQL a request with the same new key may have committed the last search of the
      // quota while this one waited for the counter's row lock; its result is the answer to a
      // repeat, not a refusal. This statement sees that commit (READ COMMITTED).
      if (key !== null) {
        const earlier = await this.earlierResult(trx, input, key);
        if (earlier) return earlier;
      }
      return { kind: 'quota_exceeded', used: await this.usedIn(trx, input.accountId, input.periodStart) };
    }

    const reportId = input.lots.length > 0 ? newReportId() : null;
    if (reportId !== null) {
      await trx
        .insertInto('reports')
        .values({ id: reportId, account_id: input.accountId, vin: input.vin, created_at: at, lots: JSON.stringify(input.lots) })
        .execute();
    }
    const search: SearchRow = {
      id: newId('srch'),
      account_id: input.accountId,
      token_id: input.tokenId,
      vin: input.vin,
      created_at: at,
      outcome: reportId !== null ? 'found' : 'not_found',
      report_id: reportId,
      period_start: input.periodStart,
    };
    await trx.insertInto('searches').values(search).execute();
    if (key !== null) {
      await trx
        .insertInto('idempotency_keys')
        .values({ account_id: input.accountId, key, vin: input.vin, search_id: search.id, created_at: at })
        .execute();
    }
    return {
      kind: 'committed',
      used: Number(counted.used),
      search: { searchId: search.id, reportId, vin: input.vin, createdAt: at, lots: input.lots },
    };
  }

  private async usedIn(trx: Transaction<Database> | Db['kysely'], accountId: string, periodStart: string): Promise<number> {
    const row = await trx
      .selectFrom('usage_counters')
      .select('used')
      .where('account_id', '=', accountId)
      .where('period_start', '=', periodStart)
      .executeTakeFirst();
    return row ? Number(row.used) : 0;
  }

  /** Searches counted in the billing period that starts at periodStart. */
  async usedInPeriod(accountId: string, periodStart: string): Promise<number> {
    return this.usedIn(this.db.kysely, accountId, periodStart);
  }

  async countForAccount(accountId: string): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('searches')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async listForAccount(accountId: string, limit = 100): Promise<SearchRow[]> {
    return this.db.kysely
      .selectFrom('searches')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
  }

  /** Idempotency keys live 24 hours; older ones are only dead weight. */
  async deleteExpiredIdempotencyKeys(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
    const result = await this.db.kysely.deleteFrom('idempotency_keys').where('created_at', '<=', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
