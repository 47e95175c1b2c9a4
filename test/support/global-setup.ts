import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { IN_CI, TEST_POSTGRES_URL, TEST_REDIS_URL } from './env.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Every PostgreSQL schema this run creates starts with it; teardown drops them together. */
    pgSchemaPrefix: string;
  }
}

/**
 * Fails the run at once when CI expects PostgreSQL and cannot have it, instead of letting the
 * PostgreSQL suites skip or time out one by one.
 *
 * Test schemas are dropped here, after every file has finished, not by each file: a file's
 * connections may still be closing when it ends. (Kysely's own introspection, which read every
 * schema and failed when another was dropped during the read, is replaced by one of the current
 * schema: dialects/postgres/connection.ts.)
 *
 * The app and system projects run it (vitest.config.ts); the unit project needs neither server.
 * The rebuild of dist/ for the CLIs is build-setup.ts, the system project's alone.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (IN_CI && !TEST_POSTGRES_URL) {
    throw new Error('CI=true but TEST_POSTGRES_URL is not set: the PostgreSQL suites must run in CI (.ci/run sets it).');
  }
  if (IN_CI && !TEST_REDIS_URL) {
    throw new Error('CI=true but TEST_REDIS_URL is not set: the Redis suites must run in CI (.ci/run sets it).');
  }
  if (TEST_REDIS_URL) {
    const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      throw new Error(`TEST_REDIS_URL=${TEST_REDIS_URL} is unreachable: ${(error as Error).message}`);
    } finally {
      redis.disconnect();
    }
  }

  // The run's process id in the prefix tells a later run whether these schemas' run is still alive.
  const prefix = `test_p${process.pid}_${randomBytes(4).toString('hex')}_`;
  project.provide('pgSchemaPrefix', prefix);
  if (!TEST_POSTGRES_URL) return async () => {};

  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new Error(`TEST_POSTGRES_URL=${TEST_POSTGRES_URL} is unreachable: ${(error as Error).message}`);
  }
  try {
    await dropSchemasOfEndedRuns(client);
  } finally {
    await client.end().catch(() => {});
  }

  return async () => {
    const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ nspname: string }>(
        `select nspname from pg_namespace where starts_with(nspname, $1)`,
        [prefix],
      );
      for (const { nspname } of rows) await admin.query(`drop schema if exists "${nspname}" cascade`);
    } finally {
      await admin.end();
    }
  };
}

/**
 * Drops the schemas a run left behind when it was killed before its teardown (Ctrl-C, a timeout,
 * kill -9): they hold no one's data, and they weigh on the server's catalogue (195 of them, 7,268
 * tables, made each CLI command on PostgreSQL take about a second while the migrator's
 * introspection still read every schema). A run whose process is still alive keeps its schemas:
 * dropping them would pull its tables from under its running files.
 */
async function dropSchemasOfEndedRuns(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ nspname: string }>(`select nspname from pg_namespace where nspname ~ '^test_p[0-9]+_'`);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
  for (const { nspname } of rows) {
    const pid = Number(/^test_p([0-9]+)_/.exec(nspname)![1]);
    if (pid !== process.pid && !alive(pid)) await client.query(`drop schema if exists "${nspname}" cascade`);
  }
}
