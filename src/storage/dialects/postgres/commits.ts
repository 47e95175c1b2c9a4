import type pg from 'pg';

// Statements without parameters go by the simple query protocol, which takes several in one
// round trip: the transaction and the first unit's savepoint start together, and the savepoint of
// the next unit is opened in the same trip that releases the last.
const BEGIN = 'begin; savepoint unit';
const RELEASE_AND_SAVEPOINT = 'release savepoint unit; savepoint unit';
const ROLLBACK_TO_SAVEPOINT = 'rollback to savepoint unit';

export interface GroupCommitOptions<I> {
  /**
   * The most units in one transaction. Each unit that writes takes a subtransaction id, and past 64
   * in one transaction PostgreSQL's per-backend cache of them overflows, which slows every other
   * session's snapshots; a bound well below leaves room for the units run twice.
   */
  maxBatch: number;
  /** The most transactions in flight at once, each on a pool connection of its own. */
  maxInFlight: number;
  /**
   * The row a unit locks until its transaction ends (PostgreSQL: the account's usage counter). Units
   * with the same lock key never run in two transactions of this process at once: the second would
   * only wait for the first's COMMIT on a pool connection of its own. They go together in the next
   * batch instead, while units of other keys run side by side.
   */
  lockKey: (input: I) => string;
  /**
   * The order of the units in a batch, which is the order in which they take their row locks.
   * Every batch of every process taking them in one order is what keeps two batches from waiting
   * on each other (a deadlock) when they lock rows of several accounts.
   */
  compare: (a: I, b: I) => number;
  /** A unit that failed with this error runs once more: a second run answers it (a concurrent unit committed the same row first). */
  retry: (input: I, error: unknown) => boolean;
  /**
   * A unit failed on this error because the database is contended (a lock not granted within
   * lock_timeout, a deadlock): the units of its batch with the same lock key would wait as long,
   * one after the other, so they fail with it at once, as they would have together each in a
   * transaction of its own.
   */
  contended: (error: unknown) => boolean;
}

interface Pending<I, R> {
  input: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

type Outcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

/**
 * Group commit, for PostgreSQL: what one search costs is mostly its COMMIT (a WAL flush) and, for
 * one account, the counter's row lock held until then, so the units that arrive while transactions
 * are in flight wait and commit together in the next one, each inside a savepoint of its own:
 * every unit is still all-or-nothing, and a failing one takes no other with it. Answers are given
 * only after the COMMIT; a failed COMMIT rejects the whole batch. Several batches run side by side
 * on separate pool connections (PostgreSQL is not a single writer); with no concurrency a batch is
 * one unit, with no added wait and no more round trips than a transaction of its own.
 *
 * A unit runs its statements on the batch's connection itself (`work` receives it), not through
 * Kysely, so that they can be named prepared statements (direct-statements.ts).
 */
export class GroupCommit<I, R> {
  private pending: Pending<I, R>[] = [];
  private inFlight = 0;
  /** The lock keys of the units in the batches in flight. */
  private readonly busy = new Set<string>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly work: (client: pg.ClientBase, input: I) => Promise<R>,
    private readonly options: GroupCommitOptions<I>,
  ) {}

  commit(input: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.pending.length > 0) {
      const batch = this.take();
      if (batch.length === 0) return;
      const keys = new Set(batch.map((item) => this.options.lockKey(item.input)));
      for (const key of keys) this.busy.add(key);
      this.inFlight++;
      void this.run(batch).finally(() => {
        for (const key of keys) this.busy.delete(key);
        this.inFlight--;
        this.pump();
      });
    }
  }

  /** The next batch: the oldest waiting units whose lock keys no batch in flight holds, in lock order. */
  private take(): Pending<I, R>[] {
    const batch: Pending<I, R>[] = [];
    const rest: Pending<I, R>[] = [];
    for (const item of this.pending) {
      if (batch.length < this.options.maxBatch && !this.busy.has(this.options.lockKey(item.input))) batch.push(item);
      else rest.push(item);
    }
    this.pending = rest;
    return batch.sort((a, b) => this.options.compare(a.input, b.input));
  }

  private async run(batch: Pending<I, R>[]): Promise<void> {
    let outcomes: Outcome<R>[];
    try {
      outcomes = await this.transaction(batch);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.result);
      else item.reject(outcome.error);
    });
  }

  /** One transaction for the batch, on a pool connection of its own. */
  private async transaction(batch: Pending<I, R>[]): Promise<Outcome<R>[]> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query(BEGIN);
      const outcomes = await this.units(client, batch);
      const committed = await client.query('commit');
      // COMMIT of a transaction that an error left aborted answers ROLLBACK, not an error.
      if (committed.command !== 'COMMIT') throw new Error(`the batch's transaction ended in ${committed.command} instead of COMMIT`);
      return outcomes;
    } catch (error) {
      try {
        await client.query('rollback');
      } catch (cause) {
        // A connection that cannot even roll back is closed rather than handed to the next user.
        broken = cause instanceof Error ? cause : new Error(String(cause));
      }
      throw error;
    } finally {
      client.release(broken);
    }
  }

  /**
   * The units, each in the savepoint opened before it. After a failure the savepoint is rolled back
   * to, which keeps it: the next unit (or the second run) starts inside it with no statement of its own.
   */
  private async units(client: pg.ClientBase, batch: Pending<I, R>[]): Promise<Outcome<R>[]> {
    let used = false;
    const attempt = async (input: I): Promise<Outcome<R>> => {
      if (used) await client.query(RELEASE_AND_SAVEPOINT);
      try {
        const result = await this.work(client, input);
        used = true;
        return { ok: true, result };
      } catch (error) {
        await client.query(ROLLBACK_TO_SAVEPOINT);
        used = false;
        return { ok: false, error };
      }
    };
    const outcomes: Outcome<R>[] = [];
    const contended = new Map<string, unknown>();
    for (const { input } of batch) {
      const key = this.options.lockKey(input);
      if (contended.has(key)) {
        outcomes.push({ ok: false, error: contended.get(key) });
        continue;
      }
      let outcome = await attempt(input);
      if (!outcome.ok && this.options.retry(input, outcome.error)) outcome = await attempt(input);
      if (!outcome.ok && this.options.contended(outcome.error)) contended.set(key, outcome.error);
      outcomes.push(outcome);
    }
    return outcomes;
  }
}
