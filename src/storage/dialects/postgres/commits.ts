import type pg from 'pg';
import { runDirect } from './direct-statements.ts';

/** One statement of a unit: SQL built once (a PreparedQuery), and the values of this run. */
export interface UnitStep {
  query: { readonly sql: string; parameters(params: never): unknown[] };
  params: unknown;
}

/**
 * A unit of work as a generator of statements that receives each one's rows (prepared-query.ts).
 * Each call must start the same unit afresh, with the same values (ids drawn beforehand): given
 * the same rows, every run yields the same statements. That is what lets a unit's statements be
 * sent before their answers are known, and checked afterwards (GroupCommit, "Pipelining").
 */
export type UnitSteps<R> = () => Generator<UnitStep, R, unknown[]>;

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
  /**
   * The rows a statement of the unit is expected to answer in the common case, or undefined when
   * there is no telling: the unit's later statements are sent on that guess, before its answer
   * comes. A wrong guess costs the unit a second run, statement by statement; never a wrong result.
   */
  guess: (step: UnitStep, input: I) => unknown[] | undefined;
}

interface Pending<I, R> {
  input: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

type Outcome<R> = { ok: true; result: R } | { ok: false; error: unknown };

/** A statement sent ahead and what came of it (a statement after a failed one fails too: 25P02). */
type Sent = { ok: true; rows: unknown[] } | { ok: false; error: unknown };

/** A unit sent ahead: its savepoint, its statements as guessed, and their answers once they came. */
interface Speculated<R> {
  index: number;
  steps: UnitSteps<R>;
  savepoint: string;
  /** The SAVEPOINT statement's answer. */
  opened: Promise<Sent>;
  sent: UnitStep[];
  answers: Promise<Sent>[];
}

/**
 * After this many wrong guesses in one transaction, its remaining units run statement by statement:
 * a guess that failed (an account past its quota, a revoked token) is likely to fail again for the
 * units of the same account that follow, and each miss sends the units after it twice.
 */
const MAX_MISSES = 2;

/**
 * Group commit, for PostgreSQL: what one search costs is mostly its COMMIT (a WAL flush) and, for
 * one account, the counter's row lock held until then, so the units that arrive while transactions
 * are in flight wait and commit together in the next one, each inside a savepoint of its own:
 * every unit is still all-or-nothing, and a failing one takes no other with it. Answers are given
 * only after the COMMIT; a failed COMMIT rejects the whole batch. Several batches run side by side
 * on separate pool connections (PostgreSQL is not a single writer); with no concurrency a batch is
 * one unit.
 *
 * Pipelining. The units of a batch run one after the other on one connection, and a statement
 * awaited before the next is sent costs a round trip each, with the backend and this process
 * waking each other every time: five statements a search, serialised for one account. So the
 * batch's statements are sent together (the pool's connections are in pipeline mode): for each
 * unit, its savepoint and the statements its steps yield when each statement is given the rows
 * `guess` expects. When the answers come, each unit is run again on the real rows, in order, and
 * must yield exactly the statements that were sent; then its result is the one a unit run
 * statement by statement would have given, on the same database state. At the first unit whose
 * run yields another statement, or whose statement failed, the transaction rolls back to that
 * unit's savepoint (which takes back it and every unit sent after it), that unit runs again
 * statement by statement, and the units after it are sent again. The COMMIT is only sent once
 * every unit is settled: a unit run on a wrong guess never commits.
 *
 * A unit runs its statements on the batch's connection itself, not through Kysely, so that they
 * are named prepared statements (direct-statements.ts).
 */
export class GroupCommit<I, R> {
  private pending: Pending<I, R>[] = [];
  private inFlight = 0;
  /** The lock keys of the units in the batches in flight. */
  private readonly busy = new Set<string>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly unit: (input: I) => UnitSteps<R>,
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
      // Not awaited: it goes out with the first units' statements.
      const begun = client.query('begin');
      begun.catch(() => {});
      const outcomes = await this.units(client, batch, begun);
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

  /** The batch's units, each in a savepoint of its own, sent ahead as far as their guesses go (see the class). */
  private async units(client: pg.ClientBase, batch: Pending<I, R>[], begun: Promise<unknown>): Promise<Outcome<R>[]> {
    const outcomes: Outcome<R>[] = new Array<Outcome<R>>(batch.length);
    const contended = new Map<string, unknown>();
    const steps = batch.map((item) => this.unit(item.input));
    let savepoints = 0;
    let misses = 0;
    const savepoint = () => `unit_${++savepoints}`;

    /** Settles the units of a contended lock key without running them; true when unit i was one. */
    const skipContended = (i: number): boolean => {
      const key = this.options.lockKey(batch[i]!.input);
      if (!contended.has(key)) return false;
      outcomes[i] = { ok: false, error: contended.get(key) };
      return true;
    };
    /** A unit's outcome as the batch keeps it: a contended failure marks its lock key. */
    const settle = (i: number, outcome: Outcome<R>): void => {
      if (!outcome.ok && this.options.contended(outcome.error)) contended.set(this.options.lockKey(batch[i]!.input), outcome.error);
      outcomes[i] = outcome;
    };
    /** Unit i, statement by statement, inside `name` (already established); once more when its error says so. */
    const runAlone = async (i: number, name: string): Promise<void> => {
      let outcome = await this.attempt(client, steps[i]!, name);
      if (!outcome.ok && this.options.retry(batch[i]!.input, outcome.error)) outcome = await this.attempt(client, steps[i]!, name);
      settle(i, outcome);
    };

    let i = 0;
    let first = true;
    while (i < batch.length) {
      if (skipContended(i)) {
        i++;
        continue;
      }
      const round = misses < MAX_MISSES ? this.sendAhead(client, batch, steps, i, savepoint, skipContended) : [];
      if (first) {
        first = false;
        await begun;
      }
      if (round.length === 0) {
        // The unit's first statement has no guess (or the guesses failed too often): it runs alone.
        const name = savepoint();
        await client.query(`savepoint ${name}`);
        await runAlone(i, name);
        i++;
        continue;
      }
      const answered = await Promise.all(round.map((unit) => Promise.all([unit.opened, ...unit.answers])));
      let missed: { unit: Speculated<R>; outcome?: Outcome<R> } | null = null;
      for (const [n, unit] of round.entries()) {
        const [opened, ...answers] = answered[n]!;
        // Every unit before this one went through, so its savepoint cannot have failed but on a broken connection.
        if (!opened.ok) throw opened.error;
        const checked = replay(unit.steps, unit.sent, answers);
        if (checked.kind === 'same') {
          outcomes[unit.index] = { ok: true, result: checked.result };
          continue;
        }
        // A failed statement that a run on the real rows would have sent too is that run's failure.
        missed = { unit, ...(checked.kind === 'failed' ? { outcome: { ok: false, error: checked.error } } : {}) };
        break;
      }
      if (missed === null) {
        i = round[round.length - 1]!.index + 1;
        continue;
      }
      const { unit, outcome } = missed;
      await client.query(`rollback to savepoint ${unit.savepoint}`);
      if (outcome === undefined) {
        misses++;
        await runAlone(unit.index, unit.savepoint);
      } else if (!outcome.ok && this.options.retry(batch[unit.index]!.input, outcome.error)) {
        settle(unit.index, await this.attempt(client, steps[unit.index]!, unit.savepoint));
      } else {
        settle(unit.index, outcome);
      }
      i = unit.index + 1;
    }
    return outcomes;
  }

  /**
   * Sends units from `from` on, each after a savepoint of its own, with the statements its steps
   * yield on the guessed rows, in one write; stops before a unit whose steps cannot be guessed
   * through (a statement with no guess, or a run that throws on the guesses).
   */
  private sendAhead(
    client: pg.ClientBase,
    batch: Pending<I, R>[],
    steps: UnitSteps<R>[],
    from: number,
    savepoint: () => string,
    skipContended: (i: number) => boolean,
  ): Speculated<R>[] {
    const round: { index: number; sent: UnitStep[] }[] = [];
    for (let i = from; i < batch.length; i++) {
      if (i > from && skipContended(i)) continue;
      const sent = guessedRun(steps[i]!, (step) => this.options.guess(step, batch[i]!.input));
      if (sent === null) break;
      round.push({ index: i, sent });
    }
    if (round.length === 0) return [];
    return corked(client, () =>
      round.map(({ index, sent }) => {
        const name = savepoint();
        const opened = settled(client.query(`savepoint ${name}`).then(() => []));
        const answers = sent.map((step) => settled(runDirect(client, step.query.sql, step.query.parameters(step.params as never))));
        return { index, steps: steps[index]!, savepoint: name, opened, sent, answers };
      }),
    );
  }

  /** One run of a unit inside savepoint `name`, statement by statement; a failure rolls back to the savepoint, which keeps it. */
  private async attempt(client: pg.ClientBase, steps: UnitSteps<R>, name: string): Promise<Outcome<R>> {
    try {
      const run = steps();
      let next = run.next();
      while (!next.done) next = run.next(await runDirect(client, next.value.query.sql, next.value.query.parameters(next.value.params as never)));
      return { ok: true, result: next.value };
    } catch (error) {
      await client.query(`rollback to savepoint ${name}`);
      return { ok: false, error };
    }
  }
}

function settled(answer: Promise<unknown[]>): Promise<Sent> {
  return answer.then(
    (rows): Sent => ({ ok: true, rows }),
    (error: unknown): Sent => ({ ok: false, error }),
  );
}

/** The statements a unit yields when each is answered with its guessed rows; null when one has no guess or the run throws. */
function guessedRun<R>(steps: UnitSteps<R>, guess: (step: UnitStep) => unknown[] | undefined): UnitStep[] | null {
  const sent: UnitStep[] = [];
  try {
    const run = steps();
    let next = run.next();
    while (!next.done) {
      const rows = guess(next.value);
      if (rows === undefined) return null;
      sent.push(next.value);
      next = run.next(rows);
    }
    return sent;
  } catch {
    return null;
  }
}

type Replayed<R> = { kind: 'same'; result: R } | { kind: 'failed'; error: unknown } | { kind: 'other' };

/**
 * Runs a unit's steps on the real answers of the statements sent for it: `same` when it yields
 * exactly those statements (same SQL, same values) and ends with them; `failed` when, having
 * yielded them so far, it reaches one that failed or throws itself, as a run statement by
 * statement would have at that point; `other` when it goes another way.
 */
function replay<R>(steps: UnitSteps<R>, sent: UnitStep[], answers: Sent[]): Replayed<R> {
  try {
    const run = steps();
    let next = run.next();
    for (const [n, step] of sent.entries()) {
      if (next.done || !sameStatement(next.value, step)) return { kind: 'other' };
      const answer = answers[n]!;
      if (!answer.ok) return { kind: 'failed', error: answer.error };
      next = run.next(answer.rows);
    }
    return next.done ? { kind: 'same', result: next.value } : { kind: 'other' };
  } catch (error) {
    return { kind: 'failed', error };
  }
}

function sameStatement(a: UnitStep, b: UnitStep): boolean {
  if (a.query !== b.query) return false;
  const x = a.query.parameters(a.params as never);
  const y = b.query.parameters(b.params as never);
  return x.length === y.length && x.every((value, i) => value === y[i]);
}

/**
 * Runs `send` with the connection's socket corked, so that the statements it sends leave in one
 * write instead of one each (each one a system call, and a wake-up of the backend). node-postgres
 * corks around each statement itself; corking is counted, so the outer cork holds them all.
 */
function corked<T>(client: pg.ClientBase, send: () => T): T {
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
  stream?.cork?.();
  try {
    return send();
  } finally {
    stream?.uncork?.();
  }
}
