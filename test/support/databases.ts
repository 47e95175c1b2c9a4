import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateToLatest, openDatabase, type Db, type DialectName } from '../../src/db/database.ts';
import { createRepositories, type Repositories } from '../../src/repositories/index.ts';
import { TEST_POSTGRES_URL } from './env.ts';

/** Every dialect this run tests: SQLite always, PostgreSQL when TEST_POSTGRES_URL is set. */
export const DIALECTS: DialectName[] = TEST_POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase {
  db: Db;
  repos: Repositories;
  /** Drops what the database holds (the PostgreSQL schema) and closes it. */
  destroy(): Promise<void>;
}

/**
 * A fresh, migrated database: SQLite in memory, or a PostgreSQL schema of its own so that test
 * files can run side by side on one server.
 */
export async function createTestDatabase(dialect: DialectName, options: { maxConnections?: number } = {}): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const db = await openDatabase({ kind: 'sqlite', file: ':memory:' });
    await migrateToLatest(db);
    return { db, repos: createRepositories(db), destroy: () => db.close() };
  }
  if (!TEST_POSTGRES_URL) throw new Error('TEST_POSTGRES_URL is not set');
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL }, { schema, ...options });
  await migrateToLatest(db);
  return {
    db,
    repos: createRepositories(db),
    destroy: async () => {
      await db.close();
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await client.end();
      }
    },
  };
}
