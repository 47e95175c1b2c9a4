import pg from 'pg';
import { PostgresDialect } from 'kysely';

export interface PostgresOptions {
  url: string;
  /** Schema to work in; tests use one per suite so that they can run side by side. */
  schema?: string;
  maxConnections?: number;
}

export function openPostgres(options: PostgresOptions): { dialect: PostgresDialect; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    // A dead database must fail requests quickly rather than hang them.
    connectionTimeoutMillis: 5000,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
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
