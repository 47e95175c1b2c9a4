import { Migrator, sql, type Kysely, type Migration, type MigrationResultSet } from 'kysely';
import type { DatabaseConfig } from '../config.ts';
import { anyCause, type DialectName, type StorageDialect } from './dialects/dialect.ts';
import { isPostgresBusy } from './dialects/postgres/connection.ts';
import { openPostgresStorage } from './dialects/postgres/index.ts';
import { isSqliteBusy } from './dialects/sqlite/connection.ts';
import { openSqliteStorage } from './dialects/sqlite/index.ts';
import { buildDeferredIndexes } from './deferred-indexes.ts';
import { migrations } from './migrations/index.ts';
import type { Database } from './schema.ts';

export type { DialectName, StorageDialect };
export type { BulkWriter } from './dialects/dialect.ts';
// A bulk writer's thread (ingest/worker/) yields at the gate of the process that opened the file.
export { WriteGate } from './dialects/sqlite/write-gate.ts';

/** The handle every repository receives: one Kysely instance and the dialect of its database. */
export interface Db {
  readonly kysely: Kysely<Database>;
  /** What differs between the databases (dialects/dialect.ts): called, never asked which it is. */
  readonly dialect: StorageDialect;
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
  const { kysely, dialect } =
    config.kind === 'sqlite'
      ? openSqliteStorage({
          file: config.file,
          ...(options.lockTimeoutMs !== undefined ? { busyTimeoutMs: options.lockTimeoutMs } : {}),
          ...(options.backgroundCheckpoint !== undefined ? { backgroundCheckpoint: options.backgroundCheckpoint } : {}),
          ...(options.onBackgroundError ? { onBackgroundError: options.onBackgroundError } : {}),
          ...(options.searchCommitThread !== undefined ? { searchCommitThread: options.searchCommitThread } : {}),
        })
      : await openPostgresStorage({
          url: config.url,
          ...(options.schema ? { schema: options.schema } : {}),
          ...(options.lockTimeoutMs !== undefined ? { lockTimeoutMs: options.lockTimeoutMs } : {}),
          ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}),
        });
  const closers: (() => Promise<void>)[] = [];
  return {
    kysely,
    dialect,
    isUniqueViolation: (error) => dialect.isUniqueViolation(error),
    ping: async () => {
      await sql`select 1`.execute(kysely);
    },
    onClose: (closer) => {
      closers.push(closer);
    },
    close: async () => {
      for (const closer of closers.splice(0).reverse()) await closer();
      await dialect.close();
    },
  };
}

/**
 * The error means the database is busy (a lock held past the wait, a serialization conflict), not
 * broken: the caller can try again in a moment. Looks through `cause`, for errors wrapped on the way up.
 */
export function isDatabaseBusy(error: unknown): boolean {
  return anyCause(error, (current) => isSqliteBusy(current) || isPostgresBusy(current));
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
  const migrationTableSchema = await db.dialect.migrationTableSchema(db.kysely);
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
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- Kysely's migration error, passed on as the migrator caught it.
  if (result.error) throw result.error;
  // A bulk load that died before building its indexes again (deferred-indexes.ts): build them now.
  await buildDeferredIndexes(db);
  return result;
}

/** The migrations this code has that the database has not run: any means the schema is behind. */
export async function pendingMigrations(db: Db): Promise<string[]> {
  const migrator = await createMigrator(db);
  return (await migrator.getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

// The edges (serve, the CLI) reach storage through this file alone: backups of the SQLite file.
export { backupSqlite, markServing, restoreSqlite, servingProcesses } from './dialects/sqlite/backup.ts';
