import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteDialect, type SqliteDatabase, type SqliteStatement } from 'kysely';

export interface SqliteOptions {
  /** A file path, or ':memory:' for tests. */
  file: string;
  /**
   * Checkpoint the write-ahead log from a worker thread instead of inside commits (the server:
   * see sqlite-checkpointer.ts). Short-lived CLI processes keep SQLite's automatic checkpoints.
   */
  backgroundCheckpoint?: boolean;
}

/**
 * Kysely's SQLite driver prepares every query anew; the repository code issues the same few
 * statements over and over, so a bounded cache of prepared statements removes SQLite's parse and
 * plan step from the hot path (see docs/benchmarks.md).
 */
function withStatementCache(db: BetterSqlite3.Database, limit = 500): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare(sql: string): SqliteStatement {
      // Every transaction here writes. A deferred BEGIN that reads first cannot upgrade to a write
      // lock while another process (a CLI import) writes, and fails at once with SQLITE_BUSY;
      // BEGIN IMMEDIATE takes the write lock up front and so honours busy_timeout instead.
      if (sql === 'begin') sql = 'begin immediate';
      let statement = cache.get(sql);
      if (statement === undefined) {
        statement = db.prepare(sql) as unknown as SqliteStatement;
        if (cache.size >= limit) cache.delete(cache.keys().next().value!);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}

export function openSqlite(options: SqliteOptions): { dialect: SqliteDialect; raw: BetterSqlite3.Database } {
  if (options.file !== ':memory:') fs.mkdirSync(path.dirname(options.file), { recursive: true });
  const raw = new BetterSqlite3(options.file);
  // WAL lets the CLI and readers work while the server writes; NORMAL is durable across process
  // crashes (only an OS crash can lose the last commits); the busy timeout covers a CLI import
  // holding the write lock for one batch.
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  // Reads through a memory map and a 64 MiB page cache instead of read() calls into a 2 MiB
  // cache: a lookup by VIN on 100k lots went from 68 to 21 µs (docs/benchmarks.md).
  raw.pragma('mmap_size = 268435456');
  raw.pragma('cache_size = -65536');
  if (options.backgroundCheckpoint && options.file !== ':memory:') raw.pragma('wal_autocheckpoint = 0');
  return { dialect: new SqliteDialect({ database: withStatementCache(raw) }), raw };
}

export function isSqliteUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
