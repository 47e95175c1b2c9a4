import type { Kysely, Transaction } from 'kysely';
import type { Database, SearchRow } from './schema.ts';
import { newReportId, newSortableId } from '../domain/ids.ts';
import type { LotJson } from '../domain/lot.ts';
import { namedSnapshotText, type NamedLot } from '../domain/report-snapshot.ts';
import type { CommittedSearch, SearchKind } from '../domain/search.ts';
import type { TokenPrincipal } from '../domain/principal.ts';
import { PrincipalRecheck } from './principal-recheck.ts';
import { runSteps, type Step } from './prepared-query.ts';
import { earlierSearchOf, LedgerStatements, type EarlierKeyRow } from './ledger-statements.ts';

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
  /** What was asked, which a repeat of its Idempotency-Key must ask again: the lot for a lookup by lot, a call's query; by default the VIN. */
  subject?: string;
  /** What kind of counted call it is (0018); a search by VIN by default. */
  kind?: SearchKind;
  /**
   * A call that stores no report (a catalogue search, a market value, a lot's history): whether it
   * found what it asked for, which its record's outcome says. `lots` is empty then. Unset for a
   * search, whose outcome is whether it found lots.
   */
  found?: boolean;
  now: Date;
  /** ISO start of the billing period the search counts in. */
  periodStart: string;
  quota: number;
  /** The lots found, as their JSON text (domain/lot.ts); empty means a counted "not found" search with no report. */
  lots: LotJson[];
  /**
   * The same lots, each with its count of versions when they were read: the report's snapshot
   * names them instead of copying `lots` (0025). Absent or null: it copies them (the sandbox's
   * catalogue, photos the archive rewrote).
   */
  named?: readonly NamedLot[] | null;
  idempotencyKey: string | null;
  /**
   * A sandbox token's search: recorded with its report and key, flagged, and never counted. Its
   * Idempotency-Keys live apart from the live ones (a key may name one test and one live search).
   */
  sandbox?: boolean;
  /**
   * A batch item's search (batches/batch-runner.ts): the item's result is written in this commit,
   * with the count and the report, so that a committed search always has its item's result and
   * the runner writes nothing of its own for it. An item that has its result already (a runner
   * that took the batch over after a kill -9 or a lost lease) is neither searched nor counted
   * again: the commit reads the item's row first and answers `item_done`. What the result says is
   * given here as data (the SQLite commit thread receives it by message): the address of a report
   * without a brand, and the message of a search that found nothing.
   */
  batchItem?: BatchItemOfSearch;
}

export interface BatchItemOfSearch {
  batchId: string;
  index: number;
  publicBaseUrl: string;
  notFoundMessage: string;
}

/** Live keys are 1 to 255 visible ASCII characters: a space never occurs in one, so this prefix cannot collide. */
const SANDBOX_KEY_PREFIX = 'test ';

export type CommitResult =
  /** `reportBaseUrl`: the report address of the token's brand as the commit read it (null: ours). */
  | { kind: 'committed'; search: CommittedSearch; used: number; reportBaseUrl: string | null }
  | { kind: 'replayed'; search: CommittedSearch; used: number; reportBaseUrl: string | null }
  | { kind: 'quota_exceeded'; used: number }
  | { kind: 'idempotency_conflict'; originalVin: string }
  /** The token or subscription the search relied on changed (revoked, cancelled, another plan): nothing was written. */
  | { kind: 'principal_changed' }
  /** The batch item already had its result (another run of it committed first): nothing was written. */
  | { kind: 'item_done' };

/**
 * A batch item's result was written by another transaction between this unit's read of the item's
 * row and its own write (PostgreSQL, READ COMMITTED: two instances ran the item at once). The unit
 * fails, so that its count, report and search record roll back with it; run again, its read of the
 * row answers `item_done`. On SQLite the read is inside the one writer's transaction and this
 * cannot happen.
 */
export class BatchItemTaken extends Error {
  constructor(item: BatchItemOfSearch) {
    super(`batch ${item.batchId} item ${item.index} got its result from another commit while this one ran`);
  }
}

/** Commits searches: each dialect's search-commit.ts cuts the transactions its own way. */
export interface SearchCommit {
  commit(input: SearchToCommit): Promise<CommitResult>;
}

/**
 * One counted search's unit of work, as the statements it runs in order: the principal re-check,
 * the Idempotency-Key, the quota count, the report, the search record and the key, all of them or
 * none (contract, Limits). Written once as a generator that yields each statement and receives its
 * rows, so that the same steps run on PostgreSQL through Kysely (awaiting each) and on SQLite
 * synchronously on the driver (dialects/sqlite/search-commit.ts). How transactions are cut around
 * units is the dialect's.
 */
export class SearchUnit {
  readonly recheck: PrincipalRecheck;
  readonly ledger: LedgerStatements;

  /** `kysely` compiles the statements for its database; the dialect's search commit runs them. */
  constructor(kysely: Kysely<Database>) {
    this.recheck = new PrincipalRecheck(kysely);
    this.ledger = new LedgerStatements(kysely);
  }

  /** Runs the unit in a Kysely transaction (PostgreSQL). */
  run(trx: Transaction<Database>, input: SearchToCommit): Promise<CommitResult> {
    return runSteps(trx, this.steps(input));
  }

  /**
   * The unit's steps with what it draws (its ids) drawn once: every call starts the same unit
   * afresh, so that given the same rows it yields the same statements (PostgreSQL's group commit
   * sends a unit's statements ahead and checks them by running it again: dialects/postgres/commits.ts).
   */
  plan(given: SearchToCommit): () => Generator<Step, CommitResult, unknown[]> {
    const drawn = drawFor(given);
    return () => this.steps(given, drawn);
  }

  *steps(given: SearchToCommit, drawn: Drawn = drawFor(given)): Generator<Step, CommitResult, unknown[]> {
    const input = { ...given, subject: given.subject ?? given.vin, sandbox: given.sandbox ?? false };
    const { ledger } = this;
    const at = input.now.toISOString();
    const { principal } = input;
    const counter = { accountId: input.accountId, periodStart: input.periodStart };

    const checked = yield* this.recheck.steps(principal, at);
    if (!checked.holds) return { kind: 'principal_changed' };
    const { reportBaseUrl } = checked;

    // A batch item is counted once: its own row says whether a search of it committed already.
    // This read replaces the Idempotency-Key an item's search carried (a read and an insert).
    const item = input.batchItem;
    if (item !== undefined) {
      const [row] = yield { query: ledger.batchItemStatus, params: { batchId: item.batchId, index: item.index } };
      if (row === undefined || (row as { status: number | null }).status !== null) return { kind: 'item_done' };
    }

    /** The batch item's result, as the search's answer gives it (search-service.ts, outcomeOf); whether it was written. */
    const recordItem = function* (reportId: string | null): Generator<Step, boolean, unknown[]> {
      if (item === undefined) return false;
      const found = reportId !== null;
      const written = yield {
        query: ledger.recordBatchItem,
        params: {
          batchId: item.batchId,
          index: item.index,
          status: found ? 200 : 404,
          reportId,
          reportUrl: found ? `${reportBaseUrl ?? item.publicBaseUrl}/report/${reportId}` : null,
          message: found ? null : item.notFoundMessage,
          at,
        },
      };
      return written.length > 0;
    };
    const key = input.idempotencyKey === null ? null : input.sandbox ? SANDBOX_KEY_PREFIX + input.idempotencyKey : input.idempotencyKey;
    /** The answer an earlier search with this key gives: a replay of it, or a conflict; null when there is none. */
    const earlier = function* (keyName: string): Generator<Step, CommitResult | null, unknown[]> {
      const [row] = yield { query: ledger.earlierKey, params: { accountId: input.accountId, key: keyName } };
      if (row === undefined) return null;
      const found = earlierSearchOf(row as EarlierKeyRow, input.subject, input.now);
      if (found === 'expired') {
        yield { query: ledger.deleteKey, params: { accountId: input.accountId, key: keyName } };
        return null;
      }
      if (found.kind === 'conflict') return { kind: 'idempotency_conflict', originalVin: found.originalVin };
      const [used] = yield { query: ledger.selectUsed, params: counter };
      yield* recordItem(found.search.reportId);
      return { kind: 'replayed', used: usedOf(used), search: found.search, reportBaseUrl };
    };
    if (key !== null) {
      const answer = yield* earlier(key);
      if (answer) return answer;
    }

    let used: number | null;
    if (input.sandbox) used = usedOf((yield { query: ledger.selectUsed, params: counter })[0]);
    else {
      const [counted] = yield { query: ledger.count, params: { ...counter, quota: input.quota } };
      used = counted === undefined ? null : Number((counted as { used: number }).used);
      if (used !== null && used > input.quota) throw new Error('quota invariant broken: a first search counted past a quota below 1');
    }
    if (used === null) {
      // On PostgreSQL a request with the same new key may have committed the last search of the
      // quota while this one waited for the counter's row lock; its result is the answer to a
      // repeat, not a refusal. This statement sees that commit (READ COMMITTED).
      if (key !== null) {
        const answer = yield* earlier(key);
        if (answer) return answer;
      }
      return { kind: 'quota_exceeded', used: usedOf((yield { query: ledger.selectUsed, params: counter })[0]) };
    }

    const { reportId } = drawn;
    if (reportId !== null) {
      yield {
        query: ledger.insertReport,
        params: { id: reportId, accountId: input.accountId, vin: input.vin, at, lots: drawn.lotsJson, sandbox: input.sandbox ? 1 : 0, tokenId: input.tokenId },
      };
    }
    const search: SearchRow = {
      id: drawn.searchId,
      account_id: input.accountId,
      token_id: input.tokenId,
      vin: input.vin,
      created_at: at,
      outcome: (input.found ?? reportId !== null) ? 'found' : 'not_found',
      report_id: reportId,
      period_start: input.periodStart,
      sandbox: input.sandbox ? 1 : 0,
      kind: input.kind ?? 'search',
    };
    yield { query: ledger.insertSearch, params: search };
    if (key !== null) {
      yield { query: ledger.insertKey, params: { accountId: input.accountId, key, vin: input.subject, searchId: search.id, at } };
    }
    if (item !== undefined && !(yield* recordItem(reportId))) throw new BatchItemTaken(item);
    return {
      kind: 'committed',
      used,
      reportBaseUrl,
      search: { searchId: search.id, reportId, vin: input.vin, createdAt: at, lots: input.lots },
    };
  }
}

/** What a unit draws: the ids of its report (when it found lots) and of its search record; and the report's snapshot as stored. */
interface Drawn {
  reportId: string | null;
  searchId: string;
  lotsJson: string;
}

function drawFor(input: SearchToCommit): Drawn {
  const found = input.lots.length > 0;
  const snapshot = !found ? '[]' : input.named ? namedSnapshotText(input.named) : `[${input.lots.join(',')}]`;
  return { reportId: found ? newReportId() : null, searchId: newSortableId('srch', input.now.getTime()), lotsJson: snapshot };
}

const usedOf = (row: unknown): number => (row === undefined ? 0 : Number((row as { used: number }).used));
