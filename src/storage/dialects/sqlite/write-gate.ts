import type BetterSqlite3 from 'better-sqlite3';
import type { SearchCommitWaits } from '../dialect.ts';
import { SqliteDialect, type DatabaseConnection, type Driver, type QueryResult, type CompiledQuery, type TransactionSettings } from 'kysely';

/**
 * SQLite has one write lock per database file, and a connection that finds it held waits in the
 * busy handler, which sleeps (1, 2, 5, 10 ... 100 ms steps) and retries: it does not queue. A
 * writer that takes the lock again right after each commit (a feed's pull, one batch after the
 * other on a thread of its own) can keep such a waiter out for many sleeps, and a sleeping waiter
 * on the event loop holds every request. Inside one process the writers therefore take this gate
 * before the lock, and wait on it (woken at once by the one leaving, not polling):
 *
 * - the process's own writes (searches' commits, the server's other writes) enter with priority;
 * - a bulk writer (a pull's batches) enters yielding: not while a priority writer waits.
 *
 * A search's commit then waits at most for the bulk writer's transaction in hand, never for a
 * sleep of the busy handler. Other processes (a CLI import) are not in the gate: the busy timeout
 * still covers them. The state lives in a SharedArrayBuffer handed to each thread that writes.
 *
 * The bulk writer keeps its transactions short while priority writers come (`priorityEntries`
 * moves: ingest/worker/write-slices.ts), and yields to waiting ones for at most a bound it gives
 * (`enterYielding(maxYieldMs)`): back-to-back priority writers would otherwise keep it out for good.
 *
 * The gate guards the main file's lock. A search's commit writes only the searches file
 * (searches-file.ts) and does not enter it: nothing it waits for is held by a pull. Its waits for
 * the searches file's lock are counted here (`countSearchCommitWait`), in shared memory so that
 * the commit thread's count with the event loop's: a figure of the lock, not of the machine.
 */
const HELD = 0;
const WAITING = 1;
/** Priority entries so far (wrapping): a bulk writer reads whether any came lately. */
const ENTRIES = 2;
const INT_CELLS = 4;

/**
 * A search commit's wait of at most this is none: the lock statement's own time when the lock is
 * free (a few µs), which a wait counted from the gate's entry never had.
 */
const NO_WAIT_MS = 0.05;
/** Upper bounds (ms) of the buckets of the search commits' waits; the last bucket is above the last bound. */
const WAIT_BUCKETS_MS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 25] as const;
const COMMITS = 0;
const WAITED = 1;
const SUM_US = 2;
const MAX_US = 3;
const BUCKET = 4;
const STAT_CELLS = BUCKET + WAIT_BUCKETS_MS.length + 1;

const BYTES = INT_CELLS * 4 + STAT_CELLS * 8;

export class WriteGate {
  readonly buffer: SharedArrayBuffer;
  private readonly cells: Int32Array;
  private readonly stats: BigInt64Array;
  /** The priority entries when this thread last entered as the bulk writer (enterYielding's floor). */
  private entriesAtBulkEntry = -1;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(BYTES)) {
    if (buffer.byteLength < BYTES) throw new Error(`a write gate needs ${BYTES} bytes, given ${buffer.byteLength}`);
    this.buffer = buffer;
    this.cells = new Int32Array(buffer, 0, INT_CELLS);
    this.stats = new BigInt64Array(buffer, INT_CELLS * 4, STAT_CELLS);
  }

  /** A priority writer on an event loop: waits without blocking it. `count`: a search commit, its wait counted. */
  async enter(count = false): Promise<void> {
    if (Atomics.compareExchange(this.cells, HELD, 0, 1) === 0) {
      Atomics.add(this.cells, ENTRIES, 1);
      if (count) this.count(0);
      return;
    }
    const began = performance.now();
    Atomics.add(this.cells, WAITING, 1);
    try {
      while (Atomics.compareExchange(this.cells, HELD, 0, 1) !== 0) {
        const waited = waitAsync(this.cells, HELD, 1);
        if (waited.async) await waited.value;
      }
    } finally {
      this.leaveWaiting();
    }
    Atomics.add(this.cells, ENTRIES, 1);
    if (count) this.count(performance.now() - began);
  }

  /** A priority writer on a thread of its own (the search commit thread): may block it. */
  enterSync(count = false): void {
    if (Atomics.compareExchange(this.cells, HELD, 0, 1) === 0) {
      Atomics.add(this.cells, ENTRIES, 1);
      if (count) this.count(0);
      return;
    }
    const began = performance.now();
    Atomics.add(this.cells, WAITING, 1);
    try {
      while (Atomics.compareExchange(this.cells, HELD, 0, 1) !== 0) Atomics.wait(this.cells, HELD, 1);
    } finally {
      this.leaveWaiting();
    }
    Atomics.add(this.cells, ENTRIES, 1);
    if (count) this.count(performance.now() - began);
  }

  /**
   * A bulk writer on a thread of its own: enters when no priority writer waits, or, when they keep
   * coming, once it has yielded for `maxYieldMs` (then it waits only for the holder): its floor.
   * The floor applies only once a priority writer has entered since the bulk writer's last entry:
   * a waiter woken by its leaving but slow to run (a loaded machine) is not passed again and again.
   */
  enterYielding(maxYieldMs = Infinity): void {
    const deadline = performance.now() + maxYieldMs;
    // Infinity until a priority writer has entered since this bulk writer's last entry.
    const yieldLeft = () => (Atomics.load(this.cells, ENTRIES) !== this.entriesAtBulkEntry ? deadline - performance.now() : Infinity);
    for (;;) {
      let left = yieldLeft();
      for (let waiting = Atomics.load(this.cells, WAITING); waiting > 0 && left > 0; waiting = Atomics.load(this.cells, WAITING)) {
        Atomics.wait(this.cells, WAITING, waiting, left);
        left = yieldLeft();
      }
      const held = Atomics.compareExchange(this.cells, HELD, 0, 1);
      if (held === 0) {
        // A priority writer may have begun to wait between the two looks: it goes first, unless yielded long enough.
        if (left <= 0 || Atomics.load(this.cells, WAITING) === 0) {
          this.entriesAtBulkEntry = Atomics.load(this.cells, ENTRIES);
          return;
        }
        this.leave();
      } else Atomics.wait(this.cells, HELD, held, left > 0 && left !== Infinity ? left : undefined);
    }
  }

  leave(): void {
    Atomics.store(this.cells, HELD, 0);
    Atomics.notify(this.cells, HELD);
  }

  /** Whether a priority writer waits (for tests). */
  get waiting(): number {
    return Atomics.load(this.cells, WAITING);
  }

  /** Priority entries so far (wraps at 2^31): moving means priority writers are coming. */
  get priorityEntries(): number {
    return Atomics.load(this.cells, ENTRIES);
  }

  /** The search commits' waits so far. */
  waits(): SearchCommitWaits {
    const read = (cell: number) => Number(Atomics.load(this.stats, cell));
    return {
      commits: read(COMMITS),
      waited: read(WAITED),
      totalMs: read(SUM_US) / 1000,
      maxMs: read(MAX_US) / 1000,
      boundsMs: WAIT_BUCKETS_MS,
      buckets: Array.from({ length: WAIT_BUCKETS_MS.length + 1 }, (_, i) => read(BUCKET + i)),
    };
  }

  /** A search commit's wait for the searches file's write lock, ms (search-commit.ts, search-commit-worker.ts). */
  countSearchCommitWait(ms: number): void {
    this.count(ms <= NO_WAIT_MS ? 0 : ms);
  }

  private count(ms: number): void {
    const us = BigInt(Math.round(ms * 1000));
    Atomics.add(this.stats, COMMITS, 1n);
    if (ms > 0) Atomics.add(this.stats, WAITED, 1n);
    Atomics.add(this.stats, SUM_US, us);
    for (let max = Atomics.load(this.stats, MAX_US); us > max; max = Atomics.load(this.stats, MAX_US)) {
      if (Atomics.compareExchange(this.stats, MAX_US, max, us) === max) break;
    }
    const bucket = WAIT_BUCKETS_MS.findIndex((bound) => ms <= bound);
    Atomics.add(this.stats, BUCKET + (bucket === -1 ? WAIT_BUCKETS_MS.length : bucket), 1n);
  }

  private leaveWaiting(): void {
    Atomics.sub(this.cells, WAITING, 1);
    Atomics.notify(this.cells, WAITING);
  }
}

/** Atomics.waitAsync (V8, Node 16+), which TypeScript's ES2023 library does not declare. */
function waitAsync(cells: Int32Array, index: number, value: number): { async: false; value: string } | { async: true; value: Promise<string> } {
  return (Atomics as unknown as { waitAsync: typeof waitAsync }).waitAsync(cells, index, value);
}

const WRITE = /^\s*(?:insert|update|delete|replace)\b/i;

/**
 * Kysely's SQLite dialect with the connection's writes through the gate: a transaction holds it
 * from BEGIN to COMMIT or ROLLBACK, a write outside one for its statement. Reads pass as they are
 * (WAL: a reader never waits for the writer).
 */
export class GatedSqliteDialect extends SqliteDialect {
  constructor(
    config: ConstructorParameters<typeof SqliteDialect>[0],
    private readonly gate: WriteGate,
    private readonly raw: BetterSqlite3.Database,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new GatedDriver(super.createDriver(), this.gate, this.raw);
  }
}

class GatedDriver implements Driver {
  private readonly connections = new WeakMap<DatabaseConnection, DatabaseConnection>();

  constructor(
    private readonly driver: Driver,
    private readonly gate: WriteGate,
    private readonly raw: BetterSqlite3.Database,
  ) {}

  init(): Promise<void> {
    return this.driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.driver.acquireConnection();
    let gated = this.connections.get(connection);
    if (gated === undefined) {
      gated = new GatedConnection(connection, this.gate, this.raw);
      this.connections.set(connection, gated);
    }
    return gated;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await this.gate.enter();
    try {
      await this.driver.beginTransaction(inner(connection), settings);
    } catch (error) {
      this.gate.leave();
      throw error;
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.driver.commitTransaction(inner(connection));
    } finally {
      // A failed COMMIT leaves the transaction open only for a ROLLBACK, which Kysely sends next.
      if (!this.raw.inTransaction) this.gate.leave();
    }
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.driver.rollbackTransaction(inner(connection));
    } finally {
      this.gate.leave();
    }
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection(inner(connection));
  }

  destroy(): Promise<void> {
    return this.driver.destroy();
  }

  savepoint: Driver['savepoint'] = (connection, name, compile) => this.driver.savepoint!(inner(connection), name, compile);
  rollbackToSavepoint: Driver['rollbackToSavepoint'] = (connection, name, compile) => this.driver.rollbackToSavepoint!(inner(connection), name, compile);
  releaseSavepoint: Driver['releaseSavepoint'] = (connection, name, compile) => this.driver.releaseSavepoint!(inner(connection), name, compile);
}

function inner(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof GatedConnection ? connection.inner : connection;
}

class GatedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly gate: WriteGate,
    private readonly raw: BetterSqlite3.Database,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.raw.inTransaction || !WRITE.test(query.sql)) return this.inner.executeQuery<R>(query);
    await this.gate.enter();
    try {
      return await this.inner.executeQuery<R>(query);
    } finally {
      this.gate.leave();
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}
