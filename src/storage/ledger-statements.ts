import type { Kysely } from 'kysely';
import { PreparedQuery } from './prepared-query.ts';
import type { Database, SearchRow } from './schema.ts';
import type { CommittedSearch } from '../domain/search.ts';
import { lotJson, type Lot } from '../domain/lot.ts';
import { isNamedSnapshot } from '../domain/report-snapshot.ts';

/**
 * What a counted search's commit writes and reads besides the principal (principal-recheck.ts):
 * the usage counter, the report, the search record and the Idempotency-Key. They sit below the
 * repositories because each dialect's search commit builds them on its own connection (SQLite's
 * commit thread opens one of its own); the repositories that own the tables hand the same
 * statements on.
 */

/** One account's counter in one billing period, and the quota it may not pass. */
export type CounterKey = {
  accountId: string;
  /** ISO start of the billing period. */
  periodStart: string;
  quota: number;
};

export type NewReport = {
  id: string;
  accountId: string;
  vin: string;
  at: string;
  /** The lots as JSON: the snapshot the report page shows. */
  lots: string;
  /** 1 for a sandbox token's report, 0 otherwise. */
  sandbox: number;
  /** The token whose search made it: its brand is the report's. */
  tokenId: string;
};

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
      // A replay is rare: its snapshot is split into its lots' texts the plain way; one that names
      // versions is rebuilt after the commit (search-service.ts), outside the unit's statements.
      ...(row.lots !== null && isNamedSnapshot(row.lots)
        ? { lots: [], namedSnapshot: row.lots }
        : { lots: row.lots ? (JSON.parse(row.lots) as Lot[]).map(lotJson) : [] }),
    },
  };
}

/** A batch item's result, written by the commit of the item's own search (batches/batch-runner.ts). */
export type BatchItemWrite = {
  batchId: string;
  index: number;
  status: number;
  reportId: string | null;
  reportUrl: string | null;
  message: string | null;
  at: string;
};

/** The ledger's statements, built and compiled once per connection. */
export class LedgerStatements {
  /** Checks and counts one search: a row while the quota has room. */
  readonly count: PreparedQuery<CounterKey, { used: number }>;
  readonly selectUsed: PreparedQuery<{ accountId: string; periodStart: string }, { used: number }>;
  readonly insertReport: PreparedQuery<NewReport, unknown>;
  readonly insertSearch: PreparedQuery<Record<keyof SearchRow, unknown>, unknown>;
  readonly insertKey: PreparedQuery<NewIdempotencyKey, unknown>;
  readonly earlierKey: PreparedQuery<{ accountId: string; key: string }, EarlierKeyRow>;
  readonly deleteKey: PreparedQuery<{ accountId: string; key: string }, unknown>;
  readonly recordBatchItem: PreparedQuery<BatchItemWrite, { idx: number }>;
  readonly batchItemStatus: PreparedQuery<{ batchId: string; index: number }, { status: number | null }>;

  constructor(k: Kysely<Database>) {
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
    this.selectUsed = new PreparedQuery(k, ['accountId', 'periodStart'], (p) =>
      k.selectFrom('usage_counters').select('used').where('account_id', '=', p.accountId).where('period_start', '=', p.periodStart),
    );
    this.insertReport = new PreparedQuery(k, ['id', 'accountId', 'vin', 'at', 'lots', 'sandbox', 'tokenId'], (p) =>
      k.insertInto('reports').values({ id: p.id, account_id: p.accountId, vin: p.vin, created_at: p.at, lots: p.lots, sandbox: p.sandbox, token_id: p.tokenId }),
    );
    const searchColumns = ['id', 'account_id', 'token_id', 'vin', 'created_at', 'outcome', 'report_id', 'period_start', 'sandbox', 'kind'] as const;
    this.insertSearch = new PreparedQuery(k, searchColumns, (p) => k.insertInto('searches').values(p as SearchRow));
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
    // Only an item without a result; its row back when written, so that a search that found the
    // item answered meanwhile (PostgreSQL: another instance committed it after this one read the
    // row) is rolled back rather than counted (search-commit.ts, BatchItemTaken).
    this.recordBatchItem = new PreparedQuery(k, ['batchId', 'index', 'status', 'reportId', 'reportUrl', 'message', 'at'], (p) =>
      k
        .updateTable('batch_items')
        .set({ status: p.status, report_id: p.reportId, report_url: p.reportUrl, message: p.message, finished_at: p.at })
        .where('batch_id', '=', p.batchId)
        .where('idx', '=', p.index)
        .where('status', 'is', null)
        .returning('idx'),
    );
    this.batchItemStatus = new PreparedQuery(k, ['batchId', 'index'], (p) =>
      k.selectFrom('batch_items').select('status').where('batch_id', '=', p.batchId).where('idx', '=', p.index),
    );
  }
}
