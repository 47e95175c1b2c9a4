import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';
import { GatedSqliteDialect, type WriteGate } from './write-gate.ts';
import { attachSearchesFile, checkSearchesFile, searchesFileOf, TransactionLocks } from './searches-file.ts';

export interface SqliteOptions {
  /** A file path, or ':memory:' for tests. */
  file: string;
  /** The searches file ATTACHed as `searches` (searches-file.ts); beside `file` unless given. */
  searchesFile?: string;
  /**
   * Checkpoint the write-ahead log from a worker thread instead of inside commits (the server:
   * see sqlite-checkpointer.ts). Short-lived CLI processes keep SQLite's automatic checkpoints.
   */
  backgroundCheckpoint?: boolean;
  /** How long a statement waits for another connection's lock before SQLITE_BUSY; 5 s unless given. */
  busyTimeoutMs?: number;
  /** The process's write gate (write-gate.ts): this connection's writes take it with priority. */
  gate?: WriteGate;
}

/**
 * Kysely's SQLite driver prepares every query anew; the repository code issues the same few
 * statements over and over, so a bounded cache of prepared statements removes SQLite's parse and
 * plan step from the hot path (docs/benchmarks.md, "Measured choices on the search path").
 */
function withStatementCache(db: BetterSqlite3.Database, limit = 500): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  const locks = new TransactionLocks(db);
  // Every transaction here writes. A deferred BEGIN that reads first cannot upgrade to a write
  // lock while another process (a CLI import) writes, and fails at once with SQLITE_BUSY; so a
  // transaction takes the main file's write lock up front and honours busy_timeout instead, and
  // the searches file's before its first statement there (searches-file.ts: BEGIN IMMEDIATE
  // would take both files' locks, and a pull's batch would then hold the searches' commits).
  const begin: SqliteStatement = {
    reader: false,
    all: () => [],
    run: () => {
      locks.begin();
      return { changes: 0, lastInsertRowid: 0 };
    },
    iterate: () => [][Symbol.iterator](),
  };
  return {
    close: () => db.close(),
    prepare(sql: string): SqliteStatement {
      if (sql === 'begin') return begin;
      // Kysely prepares each statement right before running it.
      locks.before(sql);
      let statement = cache.get(sql);
      if (statement === undefined) {
        statement = db.prepare(sql);
        if (cache.size >= limit) cache.delete(cache.keys().next().value!);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}

/** Only the service's user may enter DATA_DIR or read the database. */
const PRIVATE_DIRECTORY = 0o700;
const PRIVATE_FILE = 0o600;

/**
 * The database holds password hashes and the cookie secret. SQLite creates it 0644 less the umask,
 * and its -wal and -shm with the database file's mode, so the file is made 0600 before SQLite opens
 * it (created empty if new). A DATA_DIR made here is 0700; one that already exists is left as the
 * operator made it (it may be a shared folder), its database files being private either way.
 */
function createPrivately(file: string): void {
  const dir = path.dirname(file);
  if (fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIRECTORY }) !== undefined) fs.chmodSync(dir, PRIVATE_DIRECTORY);
  // chmod after open: the mode given to open is reduced by the umask; an older version's file is
  // closed too.
  const fd = fs.openSync(file, 'a', PRIVATE_FILE);
  try {
    if ((fs.fstatSync(fd).mode & 0o077) !== 0) fs.fchmodSync(fd, PRIVATE_FILE);
  } finally {
    fs.closeSync(fd);
  }
}

/** A -wal or -shm left by an older version keeps its mode across opens: close it too. */
function tightenCompanions(file: string): void {
  for (const companion of [`${file}-wal`, `${file}-shm`]) {
    try {
      if ((fs.statSync(companion).mode & 0o077) !== 0) fs.chmodSync(companion, PRIVATE_FILE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

export function openSqlite(options: SqliteOptions): { dialect: SqliteDialect; raw: BetterSqlite3.Database } {
  if (options.file !== ':memory:') createPrivately(options.file);
  const raw = new BetterSqlite3(options.file);
  if (options.file !== ':memory:') tightenCompanions(options.file);
  // WAL lets the CLI and readers work while the server writes; NORMAL is durable across process
  // crashes (only an OS crash can lose the last commits); the busy timeout covers a CLI import
  // holding the write lock for one batch.
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
  // Reads through a memory map and a 64 MiB page cache instead of read() calls into a 2 MiB
  // cache: a lookup by VIN on 100k lots went from 68 to 21 µs (docs/benchmarks.md,
  // "Measured choices on the search path").
  raw.pragma('mmap_size = 268435456');
  raw.pragma('cache_size = -65536');
  const searchesFile = options.searchesFile ?? searchesFileOf(options.file);
  try {
    if (searchesFile !== ':memory:') createPrivately(searchesFile);
    attachSearchesFile(raw, searchesFile);
    if (searchesFile !== ':memory:') tightenCompanions(searchesFile);
    checkSearchesFile(raw, searchesFile);
  } catch (error) {
    raw.close();
    throw error;
  }
  if (options.backgroundCheckpoint && options.file !== ':memory:') {
    raw.pragma('wal_autocheckpoint = 0');
  }
  const database = withStatementCache(raw);
  return { dialect: options.gate ? new GatedSqliteDialect({ database }, options.gate, raw) : new SqliteDialect({ database }), raw };
}

export function isSqliteUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * Another connection (a CLI import's batch) held the lock past the busy timeout: SQLITE_BUSY, or
 * SQLITE_LOCKED (and their extended codes, e.g. SQLITE_BUSY_SNAPSHOT).
 */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)(_|$)/.test(code);
}
