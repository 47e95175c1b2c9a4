import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { migrateToLatest, openDatabase, type Db, type DialectName } from '../../src/storage/database.ts';
import { createRepositories, type Repositories } from '../../src/storage/repositories/index.ts';
import { lotsWrittenHooks } from '../../src/container.ts';
import { SchemaTemplate } from './schema-template.ts';
import { TEST_POSTGRES_URL } from './env.ts';

/** Every dialect this run tests: SQLite always, PostgreSQL when TEST_POSTGRES_URL is set. */
export const DIALECTS: DialectName[] = TEST_POSTGRES_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestDatabase {
  db: Db;
  repos: Repositories;
  /** Closes it. PostgreSQL schemas are dropped together when the run ends (global-setup.ts). */
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
    return { db, repos: createRepositories(db, { lotsWritten: lotsWrittenHooks({ photoArchive: false }) }), destroy: () => db.close() };
  }
  const schema = await newMigratedTestSchema();
  const db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL! }, { schema, ...options });
  return { db, repos: createRepositories(db, { lotsWritten: lotsWrittenHooks({ photoArchive: false }) }), destroy: () => db.close() };
}

let template: SchemaTemplate | undefined;

/**
 * A new PostgreSQL schema of this test run holding every migration (copied from a template:
 * schema-template.ts), for a test that opens it itself or hands it to a process it starts.
 */
export async function newMigratedTestSchema(): Promise<string> {
  if (!TEST_POSTGRES_URL) throw new Error('TEST_POSTGRES_URL is not set');
  template ??= new SchemaTemplate(TEST_POSTGRES_URL, newTestSchemaName);
  const schema = newTestSchemaName();
  await template.create(schema);
  return schema;
}

/** A PostgreSQL schema name of this test run: dropped with the others when the run ends. */
export function newTestSchemaName(): string {
  return `${inject('pgSchemaPrefix')}${randomBytes(6).toString('hex')}`;
}
