import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, sql, type Migration, type MigrationResultSet } from 'kysely';
import type pg from 'pg';
import type { DatabaseConfig } from '../config.ts';
import { isPostgresBusy, isPostgresUniqueViolation, openPostgres } from './dialects/postgres/connection.ts';
import { isSqliteBusy, isSqliteUniqueViolation, openSqlite } from './dialects/sqlite/connection.ts';
import { SQLITE_PAGE_BYTES, startCheckpointer, WAL_RESTART_BYTES } from './dialects/sqlite/checkpointer.ts';
import { migrations } from './migrations/index.ts';
import type { Database } from './schema.ts';

export type DialectName = 'sqlite' | 'postgres';

/** The handle every repository receives: one Kysely instance and the few facts that differ by dialect. */
export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: DialectName;
  /**
   * SQLite only: the driver itself, for the search commit's statements run synchronously (one
   * batch per transaction, no async hop per statement). Anything else goes through Kysely.
   */
  readonly sqlite: BetterSqlite3.Database | null;
  /**
   * PostgreSQL only: Kysely's own pool, for the search commit's statements run on a connection of
   * it directly (named prepared statements, several searches a transaction). Anything else goes through Kysely.
   */
  readonly postgres: pg.Pool | null;
  /**
   * SQLite in the server only: the search commit is to run on a thread of its own, with a
   * connection of its own (dialects/sqlite/search-commit-thread.ts, which the repositories build).
   */
  readonly sqliteCommitThread: { file: string; lockTimeoutMs: number; walRestartBytes: number } | null;
  /** Runs `close` (first) when the database is closed: what was built on this handle and must stop with it. */
  onClose(close: () => Promise<void>): void;
  isUniqueViolation(error: unknown): boolean;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /**
   * SQLite only, for a file: commit searches on a thread of its own with a connection of its own
   * (the server), instead of on the event loop.
   */
  searchCommitThread?: boolean;
  /** SQLite only: checkpoint the WAL from a worker thread (long-running server processes). */
  backgroundCheckpoint?: boolean;
  /** SQLite only: where the checkpointer reports a failure. */
  onBackgroundError?: (message: string) => void;
  /**
   * How long a statement waits for a lock another connection holds before the database counts as
   * busy (isDatabaseBusy: 503 with Retry-After): SQLite's busy_timeout, PostgreSQL's lock_timeout.
   * 5 s unless given (DATABASE_LOCK_TIMEOUT_MS for the server and the CLI).
   */
  lockTimeoutMs?: number;
  /** PostgreSQL only: the schema to use (created if missing). */
  schema?: string;
  maxConnections?: number;
}

export async function openDatabase(config: DatabaseConfig, options: OpenDatabaseOptions = {}): Promise<Db> {
  if (config.kind === 'sqlite') {
    const background = options.backgroundCheckpoint === true && config.file !== ':memory:';
    const { dialect, raw } = openSqlite({
      file: config.file,
      backgroundCheckpoint: background,
      ...(options.lockTimeoutMs !== undefined ? { busyTimeoutMs: options.lockTimeoutMs } : {}),
    });
    const kysely = new Kysely<Database>({ dialect });
    const commitThread =
      options.searchCommitThread === true && config.file !== ':memory:'
        ? { file: config.file, lockTimeoutMs: raw.pragma('busy_timeout', { simple: true }) as number, walRestartBytes: WAL_RESTART_BYTES }
        : null;
    // The WAL is restarted by its one writer under load: the commit thread when there is one.
    const checkpointer = background
      ? startCheckpointer(config.file, options.onBackgroundError ?? (() => {}), { restartFrames: commitThread ? null : WAL_RESTART_BYTES / SQLITE_PAGE_BYTES })
      : null;
    return handle(kysely, 'sqlite', raw, null, isSqliteUniqueViolation, commitThread, async () => {
      await kysely.destroy();
      await checkpointer?.stop();
    });
  }
  if (options.schema) {
    // search_path only takes effect for an existing schema; create it through a plain connection.
    const bootstrap = openPostgres({ url: config.url, maxConnections: 1 });
    try {
      await bootstrap.pool.query(`create schema if not exists "${options.schema.replace(/"/g, '')}"`);
    } finally {
      await bootstrap.pool.end();
    }
  }
  const { dialect, pool } = openPostgres({
    url: config.url,
    ...(options.schema ? { schema: options.schema } : {}),
    ...(options.lockTimeoutMs !== undefined ? { lockTimeoutMs: options.lockTimeoutMs } : {}),
    ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}),
  });
  const kysely = new Kysely<Database>({ dialect });
  return handle(kysely, 'postgres', null, pool, isPostgresUniqueViolation, null, () => kysely.destroy());
}

function handle(
  kysely: Kysely<Database>,
  dialect: DialectName,
  sqlite: BetterSqlite3.Database | null,
  postgres: pg.Pool | null,
  isUniqueViolation: (error: unknown) => boolean,
  sqliteCommitThread: Db['sqliteCommitThread'],
  close: () => Promise<void>,
): Db {
  const closers: (() => Promise<void>)[] = [];
  return {
    kysely,
    dialect,
    sqlite,
    postgres,
    sqliteCommitThread,
    isUniqueViolation,
    ping: async () => {
      await sql`select 1`.execute(kysely);
    },
    onClose: (closer) => {
      closers.push(closer);
    },
    close: async () => {
      for (const closer of closers.splice(0).reverse()) await closer();
      await close();
    },
  };
}

/**
 * The error means the database is busy (a lock held past the wait, a serialization conflict), not
 * broken: the caller can try again in a moment. Looks through `cause`, for errors wrapped on the way up.
 */
export function isDatabaseBusy(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if (isSqliteBusy(current) || isPostgresBusy(current)) return true;
  }
  return false;
}

/**
 * The migrator for this database and the one migration set (another set only for tests). On
 * PostgreSQL it is pinned to the current schema: Kysely otherwise looks for its bookkeeping tables
 * in every schema of the database, so a second schema holding them (another deployment, a
 * parallel test) makes it skip creating its own and then fail on "relation kysely_migration_lock
 * does not exist".
 *
 * Migrations may arrive out of order: numbers are handed out to work in progress, so one may be
 * merged after a higher one has already run somewhere (0006 after 0009). Kysely refuses that by
 * default ("corrupted migrations"); each migration here touches tables of its own, so the late one
 * simply runs.
 */
export async function createMigrator(db: Db, set: Record<string, Migration> = migrations): Promise<Migrator> {
  let migrationTableSchema: string | undefined;
  if (db.dialect === 'postgres') {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db.kysely);
    migrationTableSchema = rows[0]?.schema ?? undefined;
  }
  return new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => set },
    allowUnorderedMigrations: true,
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
}

export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const migrator = await createMigrator(db);
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}

/** The migrations this code has that the database has not run: any means the schema is behind. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const migrator = await createMigrator(db);
  return (await migrator.getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

// The edges (serve, the CLI) reach storage through this file alone: backups of the SQLite file.
export { backupSqlite, markServing, restoreSqlite, servingProcesses } from './sqlite-backup.ts';
