import type BetterSqlite3 from 'better-sqlite3';
import { runDirect } from './direct-statements.ts';
import { isSqliteBusy } from './connection.ts';
import { SEARCHES_WRITE_LOCK } from './searches-file.ts';
import type { CommitResult, SearchToCommit, SearchUnit } from '../../search-commit.ts';
import type { Step } from '../../prepared-query.ts';

export type Outcome = { ok: true; result: CommitResult } | { ok: false; error: unknown };

/** The most searches one transaction takes: bounds how long one commit holds the writer. */
export const MAX_GROUP_COMMIT = 256;

/** A search waiting for its batch's COMMIT, and how to answer it. */
export interface PendingSearch {
  input: SearchToCommit;
  resolve: (result: CommitResult) => void;
  reject: (error: unknown) => void;
}

/** The searches file's write lock was held by another connection when the batch began: nothing ran, try again later. */
export class WriteLockBusy extends Error {
  constructor(cause: unknown) {
    super('the searches file\'s write lock is held by another connection', { cause });
  }
}

/** A unit threw in a batch run without savepoints: the batch is rolled back and run again with them. */
class UnitFailed {
  constructor(readonly error: unknown) {}
}

/**
 * Searches' units of work in one SQLite transaction, synchronously on better-sqlite3, one COMMIT
 * for all. A unit that throws rolls back alone and takes no other with it: the units first run one
 * after another with nothing around each, and only when one throws is the transaction rolled back
 * and run again with each unit in a savepoint of its own. Units do not throw but for a fault (a
 * constraint a bug broke, a full disk), and a SAVEPOINT and RELEASE around every unit cost a
 * search 5 µs (docs/decisions.md, "No savepoint per search"). The statements are prepared once from the
 * Kysely-built SQL the repositories hold (direct-statements.ts): an async driver hop per statement
 * cost more than the statement.
 *
 * The transaction writes the searches file alone (searches-file.ts) and takes that file's write
 * lock only: a DEFERRED BEGIN whose first statement takes the lock (SEARCHES_WRITE_LOCK), then the
 * units, which only read the main file. BEGIN IMMEDIATE would take the main file's lock too, which
 * a feed's pull holds in slices; a deferred transaction that read the searches file first could
 * not take its lock while another connection (a CLI) held it, and would fail at once.
 *
 * `waitForLock: false` (on the event loop): the lock is tried with no busy timeout and a held lock
 * throws WriteLockBusy before anything ran, for the caller to try again on a timer; SQLite's busy
 * handler would otherwise sleep in the thread that serves every request. A thread of its own
 * (search-commit-thread.ts) waits with the connection's busy timeout.
 */
export class SqliteSearchBatch {
  private readonly runBatch: (inputs: readonly SearchToCommit[]) => Outcome[];
  /** How long the connection waits for a lock (its busy timeout): the caller's bound for trying again. */
  readonly lockTimeoutMs: number;
  /** How long the last run took to get the searches file's write lock, ms (the lock statement's time). */
  lastLockMs = 0;

  constructor(
    private readonly raw: BetterSqlite3.Database,
    private readonly unit: SearchUnit,
    options: { waitForLock: boolean },
  ) {
    const runUnit = raw.transaction((input: SearchToCommit) => this.runSteps(input));
    // Prepared at the first batch: the searches file has its tables once the migrations have run.
    let lock: BetterSqlite3.Statement | null = null;
    let began = false;
    /**
     * Every unit in one transaction: `alone`, each in its own savepoint, a failing one answered
     * with its error; otherwise with nothing around each, a failing one rolling the whole back.
     */
    const runAll = raw.transaction((inputs: readonly SearchToCommit[], alone: boolean) => {
      const asked = performance.now();
      (lock ??= raw.prepare(SEARCHES_WRITE_LOCK)).run();
      this.lastLockMs = performance.now() - asked;
      began = true;
      return inputs.map((input): Outcome => {
        try {
          return { ok: true, result: alone ? runUnit(input) : this.runSteps(input) };
        } catch (error) {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- a marker, not an error: the batch's catch tells a unit's failure from its own by it.
          if (!alone) throw new UnitFailed(error);
          return { ok: false, error };
        }
      });
    });
    const deferred = (inputs: readonly SearchToCommit[]): Outcome[] => {
      try {
        return runAll.deferred(inputs, false);
      } catch (failure) {
        if (!(failure instanceof UnitFailed)) throw failure;
        // Rolled back whole: nothing of it was written. One unit alone fails alone as it is.
        if (inputs.length === 1) return [{ ok: false, error: failure.error }];
        began = false;
        return runAll.deferred(inputs, true);
      }
    };
    this.lockTimeoutMs = Math.trunc(raw.pragma('busy_timeout', { simple: true }) as number);
    if (options.waitForLock) {
      // The lock statement first: the busy timeout applies while another connection holds the lock.
      this.runBatch = deferred;
      return;
    }
    const restore = `pragma busy_timeout = ${this.lockTimeoutMs}`;
    // Not prepared statements: SQLite applies busy_timeout when the pragma is compiled, so a
    // prepared one run again does not reliably set it again.
    this.runBatch = (inputs) => {
      began = false;
      raw.exec('pragma busy_timeout = 0');
      try {
        return deferred(inputs);
      } catch (error) {
        if (!began && isSqliteBusy(error)) throw new WriteLockBusy(error);
        throw error;
      } finally {
        raw.exec(restore);
      }
    };
  }

  /** The outcome of each search, in order; throws (WriteLockBusy, or what failed the transaction) when none committed. */
  run(inputs: readonly SearchToCommit[]): Outcome[] {
    if (this.raw.inTransaction) throw new Error('the search commit found a transaction open on its connection');
    return this.runBatch(inputs);
  }

  private runSteps(input: SearchToCommit): CommitResult {
    const steps = this.unit.steps(input);
    let next = steps.next();
    while (!next.done) next = steps.next(this.execute(next.value));
    return next.value;
  }

  private execute(step: Step): unknown[] {
    return runDirect(this.raw, step.query.sql, step.query.parameters(step.params));
  }
}
