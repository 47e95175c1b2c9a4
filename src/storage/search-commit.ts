import type { Transaction } from 'kysely';
import type { Db } from './database.ts';
import type { Database, SearchRow } from './schema.ts';
import type { IdempotencyKeysRepository } from './repositories/idempotency-keys-repository.ts';
import type { ReportsRepository } from './repositories/reports-repository.ts';
import type { SearchesRepository } from './repositories/searches-repository.ts';
import type { UsageCountersRepository } from './repositories/usage-counters-repository.ts';
import { newId, newReportId } from '../domain/ids.ts';
import type { Lot } from '../domain/lot.ts';
import type { CommittedSearch } from '../domain/search.ts';
import type { TokenPrincipal } from '../domain/principal.ts';
import { PrincipalRecheck } from './principal-recheck.ts';

export interface SearchToCommit {
  accountId: string;
  tokenId: string;
  /**
   * The principal the search ran for, perhaps from the search path's cache: the commit re-checks
   * the token and the subscription in force it names before anything else (principal-recheck.ts).
   */
  principal: TokenPrincipal;
  /** The VIN the search answers for; for a lot that is not known, the lot it asked for (`copart/12345678`). */
  vin: string;
  /** What was asked, which a repeat of its Idempotency-Key must ask again: the lot for a lookup by lot; by default the VIN. */
  subject?: string;
  now: Date;
  /** ISO start of the billing period the search counts in. */
  periodStart: string;
  quota: number;
  /** The lots found; empty means a counted "not found" search with no report. */
  lots: Lot[];
  idempotencyKey: string | null;
  /**
   * A sandbox token's search: recorded with its report and key, flagged, and never counted. Its
   * Idempotency-Keys live apart from the live ones (a key may name one test and one live search).
   */
  sandbox?: boolean;
}

/** Live keys are 1 to 255 visible ASCII characters: a space never occurs in one, so this prefix cannot collide. */
const SANDBOX_KEY_PREFIX = 'test ';

export type CommitResult =
  | { kind: 'committed'; search: CommittedSearch; used: number }
  | { kind: 'replayed'; search: CommittedSearch; used: number }
  | { kind: 'quota_exceeded'; used: number }
  | { kind: 'idempotency_conflict'; originalVin: string }
  /** The token or subscription the search relied on changed (revoked, cancelled, another plan): nothing was written. */
  | { kind: 'principal_changed' };

export interface SearchCommitStores {
  usageCounters: UsageCountersRepository;
  idempotencyKeys: IdempotencyKeysRepository;
  reports: ReportsRepository;
  searches: SearchesRepository;
}

/** Commits searches: each dialect's search-commit.ts cuts the transactions its own way. */
export interface SearchCommit {
  commit(input: SearchToCommit): Promise<CommitResult>;
}

/**
 * One counted search's unit of work, in a transaction it is given: the principal re-check, the
 * quota count, the search record, the report and the idempotency key, all of them or none
 * (contract, Limits). How the transactions are cut is the dialect's (storage/dialects/<dialect>/search-commit.ts).
 */
export class SearchUnit {
  private readonly recheck: PrincipalRecheck;

  constructor(
    db: Db,
    private readonly stores: SearchCommitStores,
  ) {
    this.recheck = new PrincipalRecheck(db.kysely);
  }

  run(trx: Transaction<Database>, input: SearchToCommit): Promise<CommitResult> {
    return this.commitIn(trx, input);
  }

  private async commitIn(trx: Transaction<Database>, given: SearchToCommit): Promise<CommitResult> {
    const input = { ...given, subject: given.subject ?? given.vin, sandbox: given.sandbox ?? false };
    const { usageCounters, reports, searches, idempotencyKeys } = this.stores;
    const at = input.now.toISOString();
    const key = input.idempotencyKey === null ? null : input.sandbox ? SANDBOX_KEY_PREFIX + input.idempotencyKey : input.idempotencyKey;
    if (!(await this.recheck.holds(trx, input.principal, at))) return { kind: 'principal_changed' };
    if (key !== null) {
      const earlier = await this.earlierResult(trx, input, key);
      if (earlier) return earlier;
    }

    const used = input.sandbox ? await usageCounters.usedInPeriod(input.accountId, input.periodStart, trx) : await usageCounters.countOne(trx, input);
    if (used === null) {
      // On PostgreSQL a request with the same new key may have committed the last search of the
      // quota while this one waited for the counter's row lock; its result is the answer to a
      // repeat, not a refusal. This statement sees that commit (READ COMMITTED).
      if (key !== null) {
        const earlier = await this.earlierResult(trx, input, key);
        if (earlier) return earlier;
      }
      return { kind: 'quota_exceeded', used: await usageCounters.usedInPeriod(input.accountId, input.periodStart, trx) };
    }

    const reportId = input.lots.length > 0 ? newReportId() : null;
    if (reportId !== null) {
      await reports.insert(trx, { id: reportId, accountId: input.accountId, vin: input.vin, at, lots: JSON.stringify(input.lots), sandbox: input.sandbox ? 1 : 0, tokenId: input.tokenId });
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
      sandbox: input.sandbox ? 1 : 0,
    };
    await searches.insert(trx, search);
    if (key !== null) {
      await idempotencyKeys.insert(trx, { accountId: input.accountId, key, vin: input.subject, searchId: search.id, at });
    }
    return {
      kind: 'committed',
      used,
      search: { searchId: search.id, reportId, vin: input.vin, createdAt: at, lots: input.lots },
    };
  }

  /** The answer an earlier search with this Idempotency-Key gives: a replay of it, or a conflict. */
  private async earlierResult(trx: Transaction<Database>, input: SearchToCommit & { subject: string }, key: string): Promise<CommitResult | null> {
    const earlier = await this.stores.idempotencyKeys.earlier(trx, input, key);
    if (earlier === null) return null;
    if (earlier.kind === 'conflict') return { kind: 'idempotency_conflict', originalVin: earlier.originalVin };
    return { kind: 'replayed', used: await this.stores.usageCounters.usedInPeriod(input.accountId, input.periodStart, trx), search: earlier.search };
  }
}
