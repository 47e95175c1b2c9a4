import pg from 'pg';
import { PostgresDialect } from 'kysely';

export interface PostgresOptions {
  url: string;
  /** Schema to work in; tests use one per suite so that they can run side by side. */
  schema?: string;
  maxConnections?: number;
  /**
   * lock_timeout of every connection: how long a statement waits for a row or table lock held by
   * another transaction before it fails with lock_not_available (55P03). 5 s unless given, as
   * SQLite's busy timeout; 0 waits forever.
   */
  lockTimeoutMs?: number;
}

/** The SQLite busy timeout's default, so that both databases give up on a held lock alike. */
export const DEFAULT_LOCK_TIMEOUT_MS = 5000;

export function openPostgres(options: PostgresOptions): { dialect: PostgresDialect; pool: pg.Pool } {
  // Set at connection start (startup options), so that no statement ever runs without it. Without
  // it a request waiting on a row another transaction holds (an import's batch, a stuck session)
  // would hang for as long as that transaction lives; with it, it fails as "busy" (503, retry).
  // No statement_timeout: a bulk import's batch may rightly run long, and a query that merely
  // works is not the fault this guards against.
  const settings = [`-c lock_timeout=${Math.max(0, Math.trunc(options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS))}`];
  if (options.schema) settings.push(`-c search_path=${options.schema}`);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    // A dead database must fail requests quickly rather than hang them.
    connectionTimeoutMillis: 5000,
    options: settings.join(' '),
    // Statements sent on a connection without waiting for the one before go out at once and are
    // answered in order (the search commit sends a batch's statements so: commits.ts). A caller
    // that awaits each statement, as Kysely does, sees no difference.
    pipeline: true,
  });
  return { dialect: new PostgresDialect({ pool }), pool };
}

export function isPostgresUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}

/**
 * The database is contended, not broken: lock_not_available (lock_timeout), serialization_failure
 * and deadlock_detected. A retry a moment later is expected to succeed.
 */
export function isPostgresBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '55P03' || code === '40001' || code === '40P01';
}
