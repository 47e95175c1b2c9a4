import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database } from '../../schema.ts';
import { MAX_GROUP_COMMIT, SqliteSearchBatch, WriteLockBusy, type Outcome, type PendingSearch as Pending } from './search-batch.ts';
import { SearchUnit, type CommitResult, type SearchCommit, type SearchToCommit } from '../../search-commit.ts';
import type { WriteGate } from './write-gate.ts';

/** Waits between tries for the write lock another connection holds: short at first, at most 20 ms. */
const LOCK_RETRY_MS = [1, 2, 4, 8, 16, 20];

/**
 * SQLite: one writer, where a COMMIT costs more than a search's statements. Every search that asks
 * to commit during one turn of the event loop waits for the next check phase (setImmediate), and
 * they commit together in one transaction, each inside a savepoint of its own, so each is still
 * all-or-nothing and a failing one takes no other with it (group commit). Answers are given only
 * after the COMMIT.
 *
 * The statements run synchronously on better-sqlite3, prepared once from the Kysely-built SQL the
 * repositories hold: an async driver hop per statement cost more than the statement. The batch
 * holds Kysely's connection while it runs, so it never lands inside a transaction Kysely has open
 * on the same connection (an import's batch, an account change).
 *
 * The batch writes the searches file alone (searches-file.ts, search-batch.ts) and takes its lock
 * only: it does not enter the process's write gate, which orders the main file's writers (a feed's
 * pull among them), so a pull never makes a search's commit wait.
 *
 * The searches file's lock is never waited for on the event loop: another connection may hold it
 * (a CLI writing the searches file, the checkpointer restarting its WAL), and SQLite's busy handler
 * would sleep in this thread, stalling every request. The lock is tried with no busy timeout; when
 * it is held, the batch waits on a timer and tries again (searches arriving meanwhile join it),
 * for as long as the connection's busy timeout allows.
 */
export class SqliteSearchCommit implements SearchCommit {
  private readonly kysely: Kysely<Database>;
  private readonly batch: SqliteSearchBatch;
  private pending: Pending[] = [];
  private scheduled = false;
  /** When the batch now waiting for the write lock first found it held, and how many times. */
  private lockWait: { since: number; tries: number } | null = null;

  /** `raw` is the driver under `kysely`: the same connection. */
  constructor(
    kysely: Kysely<Database>,
    raw: BetterSqlite3.Database,
    /** The process's write gate (write-gate.ts): where the commits' waits for their lock are counted. */
    private readonly gate: WriteGate | null = null,
  ) {
    this.kysely = kysely;
    this.batch = new SqliteSearchBatch(raw, new SearchUnit(kysely), { waitForLock: false });
  }

  commit(input: SearchToCommit): Promise<CommitResult> {
    return new Promise<CommitResult>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    let batch = this.pending;
    this.pending = [];
    let retryInMs: number | null = null;
    try {
      await this.kysely.connection().execute(async () => {
        // Searches that arrived while the connection was busy join this commit.
        batch.push(...this.pending.splice(0));
        while (batch.length > 0) {
          const group = batch.slice(0, MAX_GROUP_COMMIT);
          if (!this.commitGroup(group)) {
            retryInMs = this.nextLockRetry(group);
            if (retryInMs !== null) return;
            // Waited too long: the group has failed; the rest tries on.
          }
          batch = batch.slice(group.length);
        }
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
      batch = [];
    } finally {
      // What is left waits for the write lock, ahead of what arrived since.
      this.pending = [...batch, ...this.pending];
      if (retryInMs !== null && this.pending.length > 0) setTimeout(() => void this.flush(), retryInMs);
      else if (this.pending.length > 0) setImmediate(() => void this.flush());
      else this.scheduled = false;
    }
  }

  /**
   * Commits one group and settles its searches; false when the write lock was held elsewhere and
   * nothing ran (the group is to be tried again).
   */
  private commitGroup(group: Pending[]): boolean {
    let outcomes: Outcome[];
    try {
      outcomes = this.batch.run(group.map((item) => item.input));
    } catch (error) {
      if (error instanceof WriteLockBusy) return false;
      for (const item of group) item.reject(error);
      return true;
    }
    // The wait: from the first try that found the lock held, or the lock statement's own time.
    this.gate?.countSearchCommitWait(this.lockWait === null ? this.batch.lastLockMs : performance.now() - this.lockWait.since);
    this.lockWait = null;
    group.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.result);
      else item.reject(outcome.error);
    });
    return true;
  }

  /**
   * The wait before the next try for the write lock; past the connection's busy timeout the
   * waiting searches fail with SQLITE_BUSY, as a statement waiting that long would (and null is
   * returned: nothing to retry).
   */
  private nextLockRetry(group: Pending[]): number | null {
    const now = performance.now();
    const wait = (this.lockWait ??= { since: now, tries: 0 });
    if (now - wait.since >= this.batch.lockTimeoutMs) {
      this.lockWait = null;
      const error = Object.assign(new Error(`database is locked: the write lock was held for more than ${this.batch.lockTimeoutMs} ms`), { code: 'SQLITE_BUSY' });
      for (const item of group) item.reject(error);
      return null;
    }
    return LOCK_RETRY_MS[Math.min(wait.tries++, LOCK_RETRY_MS.length - 1)]!;
  }
}
