/**
 * The lean server's storage (bench/lean-search-server.ts): the real server's statements, prepared
 * once on better-sqlite3, run the leanest way. Used on the event loop, or inside the lean server's
 * store thread (lean-store-worker.ts), which then reads the lots too; and by bench:commit-cost,
 * which runs its commit with one part changed at a time (CommitPlan).
 */
import { randomUUID } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { compareLotsNewestFirst } from '../../src/domain/lot.ts';
import { newSortableId } from '../../src/domain/ids.ts';
import { namedSnapshotText } from '../../src/domain/report-snapshot.ts';
import type { ActivePrincipal } from '../../src/domain/principal.ts';
import type { Db } from '../../src/storage/database.ts';
import { lotsJsonByVinSqlite, withImages } from '../../src/storage/dialects/sqlite/lot-json.ts';
import type { SqliteStorageDialect } from '../../src/storage/dialects/sqlite/index.ts';
import { PreparedQuery } from '../../src/storage/prepared-query.ts';
import { PrincipalRecheck, principalHolds, reportBaseUrlOf, type LiveTokenRow, type SubscriptionInForceRow } from '../../src/storage/principal-recheck.ts';
import { createRepositories } from '../../src/storage/repositories/index.ts';

/**
 * How far each search's commit goes. Only `all` is the contract: `none` answers as if committed and
 * opens no transaction; `recheck`, `counter` and `report` stop after that statement, inside the
 * transaction. Each level less the one below it is what that step costs.
 */
export const COMMIT_LEVELS = ['none', 'recheck', 'counter', 'report', 'all'] as const;
export type CommitLevel = (typeof COMMIT_LEVELS)[number];

/**
 * What a commit runs after the principal re-check. The lean server's levels copy the lots into the
 * report (the service before 0025); the report's other forms are bench:commit-cost's: an id
 * ordered by time instead of a UUID v4, no lots in it, or the lots named by their versions (the
 * service since 0025). A report not inserted is still named in the answer, not in the search record.
 */
export interface CommitPlan {
  counter: boolean;
  /** `named`: the snapshot names each lot and its count of versions (src/history/report-snapshot.ts) instead of copying it. */
  report: 'uuid' | 'time-ordered' | 'empty-lots' | 'named' | 'none';
  search: boolean;
}

/** The plan of each level; `none` opens no transaction. */
const LEVEL_PLANS: Record<CommitLevel, CommitPlan | null> = {
  none: null,
  recheck: { counter: false, report: 'none', search: false },
  counter: { counter: true, report: 'none', search: false },
  report: { counter: true, report: 'uuid', search: false },
  all: { counter: true, report: 'uuid', search: true },
};

/** A UUID-shaped id whose first 12 hex digits are the time: each insert lands at the index's end. */
function timeOrderedId(): string {
  const hex = Date.now().toString(16).padStart(12, '0') + randomUUID().replace(/-/g, '').slice(12);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export interface LeanSearch {
  principal: ActivePrincipal;
  vin: string;
  /** The lots' JSON text; absent when the store is to read them itself (the store thread). */
  lots?: string[];
  /** The snapshot that names the lots (plan `named`): `{"versions":[[auction, lot_id, count], ...]}`. */
  named?: string;
  nowMs: number;
  periodStart: string;
}

/** A committed search (null: the principal no longer holds; used past the quota: refused). */
export interface Committed {
  used: number;
  reportId: string | null;
  reportBaseUrl: string | null;
  lots: string[];
}

export interface LeanStore {
  readLots(vin: string): string[];
  /** The lots as the service reads them since 0025, and the snapshot naming their versions. */
  readLotsNamed(vin: string): { lots: string[]; named: string };
  /** The lots as the service read them before 0025: without each lot's count of versions. */
  readLotsCopied(vin: string): string[];
  /** The searches in one transaction (BEGIN IMMEDIATE, as the real commit), the lots read first where not given. */
  commitAll(batch: LeanSearch[]): (Committed | null)[];
}

export function leanStore(db: Db, commit: CommitLevel | CommitPlan): LeanStore {
  const plan = typeof commit === 'string' ? LEVEL_PLANS[commit] : commit;
  const raw: BetterSqlite3.Database = (db.dialect as SqliteStorageDialect).raw;
  const kysely = db.kysely;
  const repos = createRepositories(db);
  const recheck = new PrincipalRecheck(kysely);
  const statement = <P extends Record<string, unknown>>(query: PreparedQuery<P, unknown>) => {
    const prepared = raw.prepare(query.sql);
    return { prepared, args: (params: P) => query.parameters(params) };
  };
  const lotsOf = statement(new PreparedQuery(kysely, ['vin'], (p: { vin: string }) => lotsJsonByVinSqlite(kysely, p.vin)));
  const liveToken = statement(recheck.liveToken);
  const subscriptionInForce = statement(recheck.subscriptionInForce);
  const countSearch = statement(repos.usageCounters.count);
  const insertReport = statement(repos.reports.insertReport);
  const insertSearch = statement(repos.searches.insertSearch);
  /** The count of a run that does not count in the database. */
  let uncommitted = 0;

  // The read as the service made it before 0025: the same statement less each lot's count of versions.
  const COUNT_COLUMN = / \(select count\(\*\) from lot_versions as v where v\.auction = lots\.auction and v\.lot_id = lots\.lot_id\) as "versions",/;
  if (!COUNT_COLUMN.test(lotsOf.prepared.source)) throw new Error('the lots read no longer reads each count of versions as this benchmark expects');
  const lotsCopiedOf = raw.prepare(lotsOf.prepared.source.replace(COUNT_COLUMN, ''));
  const readLotsCopied = (vin: string): string[] => {
    const rows = lotsCopiedOf.all(lotsOf.args({ vin })) as { lot: string; images: string; vin: string; sale_date: string | null; auction: string; lot_id: number }[];
    if (rows.length > 1) rows.sort(compareLotsNewestFirst);
    return rows.map((row) => withImages(row).lot);
  };
  const readLotsNamed = (vin: string) => {
    const rows = lotsOf.prepared.all(lotsOf.args({ vin })) as { lot: string; images: string; vin: string; sale_date: string | null; auction: string; lot_id: number; versions: number }[];
    if (rows.length > 1) rows.sort(compareLotsNewestFirst);
    return { lots: rows.map((row) => withImages(row).lot), named: namedSnapshotText(rows.map((row) => ({ auction: row.auction, lot_id: row.lot_id, versions: row.versions }))) };
  };

  const readLots = (vin: string): string[] => {
    const rows = lotsOf.prepared.all(lotsOf.args({ vin })) as { lot: string; images: string; vin: string; sale_date: string | null; auction: string; lot_id: number }[];
    if (rows.length > 1) rows.sort(compareLotsNewestFirst);
    return rows.map((row) => withImages(row).lot);
  };

  const commitOne = (plan: CommitPlan, item: LeanSearch): Committed | null => {
    const lots = item.lots ?? readLots(item.vin);
    const at = new Date(item.nowMs).toISOString();
    const { principal } = item;
    const token = liveToken.prepared.get(liveToken.args({ tokenId: principal.tokenId, at })) as LiveTokenRow | undefined;
    if (token === undefined) return null;
    const subscription = subscriptionInForce.prepared.get(subscriptionInForce.args({ accountId: principal.accountId, at })) as SubscriptionInForceRow | undefined;
    if (!principalHolds(principal, true, subscription)) return null;
    const reportBaseUrl = reportBaseUrlOf(token);
    let used: number;
    if (plan.counter) {
      const counted = countSearch.prepared.get(countSearch.args({ accountId: principal.accountId, periodStart: item.periodStart, quota: principal.subscription.monthlyQuota })) as
        | { used: number }
        | undefined;
      if (counted === undefined) return { used: principal.subscription.monthlyQuota + 1, reportId: null, reportBaseUrl, lots };
      used = Number(counted.used);
    } else used = ++uncommitted;
    const reportId = lots.length > 0 ? (plan.report === 'time-ordered' ? timeOrderedId() : randomUUID()) : null;
    const reported = reportId !== null && plan.report !== 'none';
    if (reported) {
      const stored = plan.report === 'empty-lots' ? '[]' : plan.report === 'named' ? item.named! : `[${lots.join(',')}]`;
      insertReport.prepared.run(insertReport.args({ id: reportId, accountId: principal.accountId, vin: item.vin, at, lots: stored, sandbox: 0, tokenId: principal.tokenId }));
    }
    if (plan.search) {
      insertSearch.prepared.run(
        insertSearch.args({
          id: newSortableId('srch', item.nowMs),
          account_id: principal.accountId,
          token_id: principal.tokenId,
          vin: item.vin,
          created_at: at,
          outcome: reported ? 'found' : 'not_found',
          report_id: reported ? reportId : null,
          period_start: item.periodStart,
          sandbox: 0,
          kind: 'search',
        }),
      );
    }
    return { used, reportId, reportBaseUrl, lots };
  };
  const inTransaction = raw.transaction((batch: LeanSearch[], planned: CommitPlan) => batch.map((item) => commitOne(planned, item)));

  return {
    readLots,
    readLotsNamed,
    readLotsCopied,
    commitAll: (batch) =>
      plan !== null
        ? inTransaction.immediate(batch, plan)
        : batch.map((item) => {
            const lots = item.lots ?? readLots(item.vin);
            return { used: ++uncommitted, reportId: lots.length > 0 ? randomUUID() : null, reportBaseUrl: null, lots };
          }),
  };
}
