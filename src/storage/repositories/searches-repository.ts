import { CompiledQuery, sql, type Transaction } from 'kysely';
import { PreparedQuery } from '../prepared-query.ts';
import type { Db } from '../database.ts';
import type { Database, SearchRow } from '../schema.ts';
import { newId, newReportId } from '../../domain/ids.ts';
import type { Lot } from '../../domain/lot.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** The most searches one SQLite group commit takes: bounds how long one transaction holds the writer. */
const MAX_GROUP_COMMIT = 64;
const SAVEPOINT = CompiledQuery.raw('savepoint search');
const RELEASE_SAVEPOINT = CompiledQuery.raw('release savepoint search');
const ROLLBACK_TO_SAVEPOINT = CompiledQuery.raw('rollback to savepoint search');

interface PendingCommit {
  input: SearchToCommit;
  resolve: (result: CommitResult) => void;
  reject: (error: unknown) => void;
}

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

/** A row of the customer's search history. */
export interface AccountSearch {
  id: string;
  vin: string;
  createdAt: string;
  outcome: SearchRow['outcome'];
  reportId: string | null;
  tokenName: string | null;
  tokenPrefix: string | null;
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
  private readonly count: PreparedQuery<{ accountId: string; periodStart: string; quota: number }, { used: number }>;
  private readonly insertReport: PreparedQuery<{ id: string; accountId: string; vin: string; at: string; lots: string }, unknown>;
  private readonly insertSearch: PreparedQuery<Record<keyof SearchRow, unknown>, unknown>;
  private readonly insertKey: PreparedQuery<{ accountId: string; key: string; vin: string; searchId: string; at: string }, unknown>;
  private readonly selectUsed: PreparedQuery<{ accountId: string; periodStart: string }, { used: number }>;
  /** SQLite only: searches waiting for the next group commit. */
  private readonly pending: PendingCommit[] = [];
  private flushing = false;

  constructor(private readonly db: Db) {
    const k = db.kysely;
    // One statement checks and counts: the conditional upsert only increments while used < quota,
    // and on PostgreSQL the row lock it takes serialises concurrent searches of one account.
    this.count = new PreparedQuery(k, ['accountId', 'periodStart', 'quota'], (p) =>
      k
        .insertInto('usage_counters')
        .values({ account_id: p.accountId, period_start: p.periodStart, used: 1 })
        .onConflict((oc) =>
          oc
            .columns(['account_id', 'period_start'])
            .doUpdateSet((eb) => ({ used: eb('usage_counters.used', '+', 1) }))
            .where('usage_counters.used', '<', p.quota),
        )
        .returning('used'),
    );
    this.insertReport = new PreparedQuery(k, ['id', 'accountId', 'vin', 'at', 'lots'], (p) =>
      k.insertInto('reports').values({ id: p.id, account_id: p.accountId, vin: p.vin, created_at: p.at, lots: p.lots }),
    );
    const searchColumns = ['id', 'account_id', 'token_id', 'vin', 'created_at', 'outcome', 'report_id', 'period_start'] as const;
    this.insertSearch = new PreparedQuery(k, searchColumns, (p) => k.insertInto('searches').values(p as SearchRow));
    this.insertKey = new PreparedQuery(k, ['accountId', 'key', 'vin', 'searchId', 'at'], (p) =>
      k.insertInto('idempotency_keys').values({ account_id: p.accountId, key: p.key, vin: p.vin, search_id: p.searchId, created_at: p.at }),
    );
    this.selectUsed = new PreparedQuery(k, ['accountId', 'periodStart'], (p) =>
      k.selectFrom('usage_counters').select('used').where('account_id', '=', p.accountId).where('period_start', '=', p.periodStart),
    );
  }

  async commit(input: SearchToCommit): Promise<CommitResult> {
    if (this.db.dialect === 'sqlite') return this.enqueue(input);
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
   * Group commit, for SQLite: one writer, where each COMMIT costs more than the statements of a
   * search. The searches that arrive while a transaction runs wait for the next one and commit
   * together, each inside a savepoint of its own, so every search is still all-or-nothing and a
   * failing one takes no other with it. Their answers are given only after the COMMIT. With no
   * concurrency a batch is one search, with no added wait.
   */
  private enqueue(input: SearchToCommit): Promise<CommitResult> {
    return new Promise<CommitResult>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, MAX_GROUP_COMMIT);
        const outcomes: ({ ok: true; result: CommitResult } | { ok: false; error: unknown })[] = [];
        try {
          await this.db.kysely.transaction().execute(async (trx) => {
            for (const item of batch) {
              await trx.executeQuery(SAVEPOINT);
              try {
                outcomes.push({ ok: true, result: await this.commitIn(trx, item.input) });
                await trx.executeQuery(RELEASE_SAVEPOINT);
              } catch (error) {
                await trx.executeQuery(ROLLBACK_TO_SAVEPOINT);
                await trx.executeQuery(RELEASE_SAVEPOINT);
                outcomes.push({ ok: false, error });
              }
            }
          });
        } catch (error) {
          for (const item of batch) item.reject(error);
          continue;
        }
        batch.forEach((item, i) => {
          const outcome = outcomes[i]!;
          if (outcome.ok) item.resolve(outcome.result);
          else item.reject(outcome.error);
        });
      }
    } finally {
      this.flushing = false;
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

    const [counted] = await this.count.execute(trx, { accountId: input.accountId, periodStart: input.periodStart, quota: input.quota });
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
      await this.insertReport.execute(trx, { id: reportId, accountId: input.accountId, vin: input.vin, at, lots: JSON.stringify(input.lots) });
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
    await this.insertSearch.execute(trx, search);
    if (key !== null) {
      await this.insertKey.execute(trx, { accountId: input.accountId, key, vin: input.vin, searchId: search.id, at });
    }
    return {
      kind: 'committed',
      used: Number(counted.used),
      search: { searchId: search.id, reportId, vin: input.vin, createdAt: at, lots: input.lots },
    };
  }

  private async usedIn(trx: Transaction<Database> | Db['kysely'], accountId: string, periodStart: string): Promise<number> {
    const [row] = await this.selectUsed.execute(trx, { accountId, periodStart });
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

  /**
   * Searches per UTC day in [from, to), for the usage chart. Days without searches are absent.
   * A range scan of searches_account_idx; substr of the ISO text is the UTC day on both dialects.
   */
  async dailyCounts(accountId: string, from: string, to: string): Promise<{ day: string; count: number }[]> {
    const day = sql<string>`substr(created_at, 1, 10)`;
    const rows = await this.db.kysely
      .selectFrom('searches')
      .select([day.as('day'), (eb) => eb.fn.countAll<string | number>().as('n')])
      .where('account_id', '=', accountId)
      .where('created_at', '>=', from)
      .where('created_at', '<', to)
      .groupBy(day)
      .orderBy(day)
      .execute();
    return rows.map((row) => ({ day: row.day, count: Number(row.n) }));
  }

  /**
   * One page of the account's searches, newest first, with the name of the token used. Keyset
   * paging on (created_at, id): a page stays cheap however far back the customer reads.
   */
  async pageForAccount(
    accountId: string,
    options: { limit: number; before?: { createdAt: string; id: string } },
  ): Promise<{ searches: AccountSearch[]; hasMore: boolean }> {
    let query = this.db.kysely
      .selectFrom('searches as s')
      .leftJoin('api_tokens as t', 't.id', 's.token_id')
      .select(['s.id', 's.vin', 's.created_at', 's.outcome', 's.report_id', 't.name as token_name', 't.display_prefix as token_prefix'])
      .where('s.account_id', '=', accountId);
    const before = options.before;
    if (before) {
      query = query.where((eb) =>
        eb.or([eb('s.created_at', '<', before.createdAt), eb.and([eb('s.created_at', '=', before.createdAt), eb('s.id', '<', before.id)])]),
      );
    }
    const rows = await query.orderBy('s.created_at', 'desc').orderBy('s.id', 'desc').limit(options.limit + 1).execute();
    return {
      hasMore: rows.length > options.limit,
      searches: rows.slice(0, options.limit).map((row) => ({
        id: row.id,
        vin: row.vin,
        createdAt: row.created_at,
        outcome: row.outcome,
        reportId: row.report_id,
        tokenName: row.token_name,
        tokenPrefix: row.token_prefix,
      })),
    };
  }

  /** Idempotency keys live 24 hours; older ones are only dead weight. */
  async deleteExpiredIdempotencyKeys(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
    const result = await this.db.kysely.deleteFrom('idempotency_keys').where('created_at', '<=', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
