import pg from 'pg';
import { IN_CI, TEST_POSTGRES_URL } from './env.ts';

/**
 * Fails the run at once when CI expects PostgreSQL and cannot have it, instead of letting the
 * PostgreSQL suites skip or time out one by one.
 */
export default async function setup(): Promise<void> {
  if (IN_CI && !TEST_POSTGRES_URL) {
    throw new Error('CI=true but TEST_POSTGRES_URL is not set: the PostgreSQL suites must run in CI (.ci/run sets it).');
  }
  if (TEST_POSTGRES_URL) {
    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 5000 });
    try {
      await client.connect();
      await client.query('select 1');
    } catch (error) {
      throw new Error(`TEST_POSTGRES_URL=${TEST_POSTGRES_URL} is unreachable: ${(error as Error).message}`);
    } finally {
      await client.end().catch(() => {});
    }
  }
}
