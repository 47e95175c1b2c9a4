import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Database } from '../../schema.ts';
import { BatchItemTaken, SearchUnit, type CommitResult, type SearchCommit, type SearchToCommit } from '../../search-commit.ts';
import { anyCause } from '../dialect.ts';
import { isPostgresBusy, isPostgresUniqueViolation } from './connection.ts';
import type { SubscriptionInForceRow } from '../../principal-recheck.ts';
import { GroupCommit, type UnitStep } from './commits.ts';

/** At most this many searches in one transaction (GroupCommitOptions.maxBatch: below 64 savepoints that write). */
const MAX_BATCH = 32;
/**
 * Transactions in flight at once. The server's pool holds 10 connections, which the search's reads
 * (the lots) and every other request share; 4 leaves them room.
 */
const MAX_IN_FLIGHT = 4;

export interface PostgresSearchCommitOptions {
  maxBatch?: number;
  maxInFlight?: number;
}

/**
 * PostgreSQL: group commit. The searches that arrive while transactions are in flight commit
 * together in the next one, each in a savepoint of its own (commits.ts), so a COMMIT's WAL flush
 * counts many searches. The usage counter's row lock still orders the searches of one account
 * across instances: inside a batch they run account by account in one order, so that batches of
 * different instances that count for the same accounts never wait on each other in a circle.
 */
export class PostgresSearchCommit implements SearchCommit {
  private readonly committer: GroupCommit<SearchToCommit, CommitResult>;

  /** `pool` is Kysely's own, under `kysely`. */
  constructor(kysely: Kysely<Database>, pool: pg.Pool, options: PostgresSearchCommitOptions = {}) {
    const unit = new SearchUnit(kysely);
    // What a search's statements answer when it goes through (commits.ts sends its statements on
    // these guesses): the token is live, the subscription in force is the one the search ran
    // for, the counter has room, the Idempotency-Key is new, a batch item has no result yet and
    // gets this one. A search past the quota, or whose principal changed, or that repeats a key,
    // runs again statement by statement.
    const { ledger } = unit;
    const written: unknown[] = [];
    const itemWritten = [{ idx: 0 }];
    const itemPending = [{ status: null }];
    const guesses = new Map<UnitStep['query'], (input: SearchToCommit) => unknown[]>([
      [unit.recheck.liveToken, () => [{ id: null, tokenBrandId: null, tokenBrandBaseUrl: null, defaultBrandBaseUrl: null }]],
      [unit.recheck.subscriptionInForce, (input) => (input.principal.subscription === null ? [] : [subscriptionRow(input.principal.subscription)])],
      [ledger.earlierKey, () => []],
      [ledger.count, () => [{ used: 1 }]],
      [ledger.selectUsed, () => [{ used: 0 }]],
      [ledger.insertReport, () => written],
      [ledger.insertSearch, () => written],
      [ledger.insertKey, () => written],
      [ledger.batchItemStatus, () => itemPending],
      [ledger.recordBatchItem, () => itemWritten],
    ]);
    this.committer = new GroupCommit(pool, (input) => unit.plan(input), {
      maxBatch: options.maxBatch ?? MAX_BATCH,
      maxInFlight: options.maxInFlight ?? MAX_IN_FLIGHT,
      lockKey: (input) => input.accountId,
      compare: lockOrder,
      // Two requests with the same new Idempotency-Key raced and the other one committed first; run
      // again, and this time the key is found and the first result replayed. Likewise two runs of
      // one batch item: run again, the item's row now has the other's result (item_done).
      retry: (input, error) => (input.idempotencyKey !== null && isPostgresUniqueViolation(error)) || (input.batchItem !== undefined && error instanceof BatchItemTaken),
      contended: (error) => anyCause(error, isPostgresBusy),
      guess: (step, input) => guesses.get(step.query)?.(input),
    });
  }

  commit(input: SearchToCommit): Promise<CommitResult> {
    return this.committer.commit(input);
  }
}

/**
 * The order of the row locks a batch takes: the account's usage counter (per billing period), then
 * its Idempotency-Keys and batch items. Counted searches come before a sandbox token's (which lock
 * no counter), and keys and items in their order, so that two batches racing on the same keys or
 * items take them alike. (A counted item's row is written after its counter, so the counter
 * already orders those; a sandbox item's row is the only lock its search takes.)
 */
function lockOrder(a: SearchToCommit, b: SearchToCommit): number {
  return (
    compareText(a.accountId, b.accountId) ||
    compareText(a.periodStart, b.periodStart) ||
    Number(a.sandbox ?? false) - Number(b.sandbox ?? false) ||
    compareText(a.idempotencyKey ?? '', b.idempotencyKey ?? '') ||
    compareText(a.batchItem?.batchId ?? '', b.batchItem?.batchId ?? '') ||
    (a.batchItem?.index ?? 0) - (b.batchItem?.index ?? 0)
  );
}

function subscriptionRow(subscription: NonNullable<SearchToCommit['principal']['subscription']>): SubscriptionInForceRow {
  return { id: subscription.id, startedAt: subscription.startedAt, monthlyQuota: subscription.monthlyQuota, ratePerSecond: subscription.ratePerSecond };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
