import { randomBytes, randomInt } from 'node:crypto';
import { openDatabase, type Db, type DialectName } from '../../../src/storage/database.ts';
import { newTestSchemaName } from '../../support/databases.ts';
import { TEST_POSTGRES_URL } from '../../support/env.ts';
import { validVin } from '../../support/fixtures.ts';

const VIN_CHARS = '0123456789ABCDEFGHJKLMNPRSTUVWXYZ';

/**
 * A fresh North American VIN with a correct check digit. The suites share one database per file,
 * so every test works on VINs of its own.
 */
export function randomVin(): string {
  let stem = '1';
  while (stem.length < 16) stem += VIN_CHARS[randomInt(VIN_CHARS.length)];
  return validVin(stem);
}

export function randomEmail(): string {
  return `user-${randomBytes(6).toString('hex')}@example.com`;
}

export interface EmptyDatabase {
  db: Db;
  destroy(): Promise<void>;
}

/** A database nobody has migrated: SQLite in memory, or a PostgreSQL schema of its own. */
export async function openEmptyDatabase(dialect: DialectName): Promise<EmptyDatabase> {
  if (dialect === 'sqlite') {
    const db = await openDatabase({ kind: 'sqlite', file: ':memory:' });
    return { db, destroy: () => db.close() };
  }
  if (!TEST_POSTGRES_URL) throw new Error('TEST_POSTGRES_URL is not set');
  const db = await openDatabase({ kind: 'postgres', url: TEST_POSTGRES_URL }, { schema: newTestSchemaName() });
  return { db, destroy: () => db.close() };
}

/** What a rejected promise was rejected with, so that a test can inspect the error itself. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}
