import type BetterSqlite3 from 'better-sqlite3';
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
 * - a bulk writer (a pull's batches) enters yielding: never while a priority writer waits.
 *
 * A search's commit then waits at most for the batch in hand, never for a sleep of the busy
 * handler. Other processes (a CLI import) are not in the gate: the busy timeout still covers them.
 * The state lives in a SharedArrayBuffer handed to each thread that writes.
 */
const HELD = 0;
const WAITING = 1;

export class WriteGate {
  readonly buffer: SharedArrayBuffer;
  private readonly cells: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(8)) {
    this.buffer = buffer;
    this.cells = new Int32Array(buffer);
  }

  /** A priority writer on an event loop: waits without blocking it. */
  async enter(): Promise<void> {
    if (Atomics.compareExchange(this.cells, HELD, 0, 1) === 0) return;
    Atomics.add(this.cells, WAITING, 1);
    try {
      while (Atomics.compareExchange(this.cells, HELD, 0, 1) !== 0) {
        const waited = waitAsync(this.cells, HELD, 1);
        if (waited.async) await waited.value;
      }
    } finally {
      this.leaveWaiting();
    }
  }

  /** A priority writer on a thread of its own (the search commit thread): may block it. */
  enterSync(): void {
    if (Atomics.compareExchange(this.cells, HELD, 0, 1) === 0) return;
    Atomics.add(this.cells, WAITING, 1);
    try {
      while (Atomics.compareExchange(this.cells, HELD, 0, 1) !== 0) Atomics.wait(this.cells, HELD, 1);
    } finally {
      this.leaveWaiting();
    }
  }

  /** A bulk writer on a thread of its own: enters only when no priority writer waits. */
  enterYielding(): void {
    for (;;) {
      for (let waiting = Atomics.load(this.cells, WAITING); waiting > 0; waiting = Atomics.load(this.cells, WAITING)) {
        Atomics.wait(this.cells, WAITING, waiting);
      }
      const held = Atomics.compareExchange(this.cells, HELD, 0, 1);
      if (held === 0) {
        // A priority writer may have begun to wait between the two looks: it goes first.
        if (Atomics.load(this.cells, WAITING) === 0) return;
        this.leave();
      } else Atomics.wait(this.cells, HELD, held);
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
