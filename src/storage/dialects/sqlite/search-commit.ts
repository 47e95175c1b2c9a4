import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Db } from '../../database.ts';
import type { Database } from '../../schema.ts';
import { runDirect } from './direct-statements.ts';
import { SearchUnit, type CommitResult, type SearchCommit, type SearchCommitStores, type SearchToCommit } from '../../search-commit.ts';
import type { Step } from '../../prepared-query.ts';

/** The most searches one transaction takes: bounds how long one commit holds the writer and the event loop. */
const MAX_GROUP_COMMIT = 256;

interface Pending {
  input: SearchToCommit;
  resolve: (result: CommitResult) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; result: CommitResult } | { ok: false; error: unknown };

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
 */
export class SqliteSearchCommit implements SearchCommit {
  private readonly unit: SearchUnit;
  private readonly raw: BetterSqlite3.Database;
  private readonly kysely: Kysely<Database>;
  private readonly runBatch: (batch: Pending[]) => Outcome[];
  private readonly runUnit: (input: SearchToCommit) => CommitResult;
  private pending: Pending[] = [];
  private scheduled = false;

  constructor(db: Db, stores: SearchCommitStores) {
    if (db.sqlite === null) throw new Error('SqliteSearchCommit needs a SQLite database');
    this.raw = db.sqlite;
    this.kysely = db.kysely;
    this.unit = new SearchUnit(db, stores);
    // Nested better-sqlite3 transactions are savepoints: a unit that throws rolls back to its own.
    this.runUnit = this.raw.transaction((input: SearchToCommit) => this.runSteps(input));
    const batch = this.raw.transaction((items: Pending[]) =>
      items.map((item): Outcome => {
        try {
          return { ok: true, result: this.runUnit(item.input) };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
    // BEGIN IMMEDIATE: take the write lock up front, so that busy_timeout applies while a CLI
    // import holds it (a deferred BEGIN would fail at once with SQLITE_BUSY on its first write).
    this.runBatch = (items) => batch.immediate(items);
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
    const batch = this.pending;
    this.pending = [];
    try {
      await this.kysely.connection().execute(async () => {
        // Searches that arrived while the connection was busy join this commit.
        batch.push(...this.pending.splice(0));
        for (let start = 0; start < batch.length; start += MAX_GROUP_COMMIT) this.commitGroup(batch.slice(start, start + MAX_GROUP_COMMIT));
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
    } finally {
      this.scheduled = false;
      if (this.pending.length > 0) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    }
  }

  private commitGroup(group: Pending[]): void {
    if (this.raw.inTransaction) throw new Error('the search commit found a transaction open on its connection');
    let outcomes: Outcome[];
    try {
      outcomes = this.runBatch(group);
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    group.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.result);
      else item.reject(outcome.error);
    });
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
