import { NO_MIGRATIONS, sql } from 'kysely';
import { afterEach, describe, expect, test } from 'vitest';
import { createMigrator, migrateToLatest, type Db } from '../../src/storage/database.ts';
import { migrations } from '../../src/storage/migrations/index.ts';
import { DIALECTS } from '../support/databases.ts';
import { openEmptyDatabase, type EmptyDatabase } from './repositories/helpers.ts';

const NAMES = Object.keys(migrations);
/** The tables of 0001-initial, and of every migration together. */
const INITIAL_TABLES = ['accounts', 'api_tokens', 'idempotency_keys', 'lots', 'plans', 'reports', 'searches', 'subscriptions', 'usage_counters'];
const TABLES = [
  ...INITIAL_TABLES,
  'account_passwords', 'auth_attempts', 'brands', 'invoices', 'operator_tokens', 'password_resets', 'settings',
  'mail_queue',
  'media_images', 'media_objects',
  'stripe_customers', 'stripe_subscription_events', 'subscription_billing', 'web_sessions', 'webhook_events',
  'watches', 'webhook_attempts', 'webhook_endpoints', 'webhook_outbox',
  'billing_notices', 'legal_documents',
  // 0015
  'operator_audit',
  // 0019
  'lot_versions',
  // 0020
  'signing_keys', 'report_signatures',
  // 0021
  'feeds', 'feed_listing',
  // 0022
  'batches', 'batch_items',
  // 0024
  'lot_sightings',
  // 0026
  'market_groups',
].sort();

/**
 * The application's tables in this database (the current schema on PostgreSQL; on SQLite the main
 * file's and the searches file's, which Kysely's introspection does not read), without Kysely's own.
 */
async function tables(db: Db): Promise<string[]> {
  const found = await db.kysely.introspection.getTables();
  const current = db.dialect.name === 'postgres' ? await currentSchema(db) : undefined;
  const names = found.filter((table) => current === undefined || table.schema === current).map((table) => table.name);
  if (db.dialect.name === 'sqlite') names.push(...(await searchesFileTables(db)));
  return names.sort();
}

async function searchesFileTables(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from searches.sqlite_master where type = 'table'`.execute(db.kysely);
  return rows.map((row) => row.name);
}

async function currentSchema(db: Db): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely);
  return rows[0]!.schema;
}

async function planCodes(db: Db): Promise<string[]> {
  const rows = await db.kysely.selectFrom('plans').select('code').orderBy('code').execute();
  return rows.map((row) => row.code);
}

describe.each(DIALECTS)('migrations (%s)', (dialect) => {
  const opened: EmptyDatabase[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((database) => database.destroy()));
  });
  async function empty(): Promise<Db> {
    const database = await openEmptyDatabase(dialect);
    opened.push(database);
    return database.db;
  }

  test('an empty database migrates to the full schema; a second run is a no-op', async () => {
    const db = await empty();
    expect(await tables(db)).toEqual([]);
    const first = await migrateToLatest(db);
    expect(first.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual(NAMES.map((name) => [name, 'Up', 'Success']));
    expect(await tables(db)).toEqual(TABLES);
    expect(await planCodes(db)).toEqual(['professional', 'standard', 'vip']);

    const second = await migrateToLatest(db);
    expect(second.results).toEqual([]);
    expect(await planCodes(db)).toEqual(['professional', 'standard', 'vip']);
    const recorded = await (await createMigrator(db)).getMigrations();
    expect(recorded.map((m) => [m.name, m.executedAt instanceof Date])).toEqual(NAMES.map((name) => [name, true]));
  });

  test('every migration goes down, one step at a time or all at once, and back up', async () => {
    const db = await empty();
    await migrateToLatest(db);
    const migrator = await createMigrator(db);

    const oneDown = await migrator.migrateDown();
    expect(oneDown.error).toBeUndefined();
    expect(oneDown.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([[NAMES.at(-1), 'Down', 'Success']]);

    const toInitial = await migrator.migrateTo('0001-initial');
    expect(toInitial.error).toBeUndefined();
    expect(toInitial.results?.map((r) => [r.migrationName, r.direction])).toEqual(
      NAMES.slice(1, -1).reverse().map((name) => [name, 'Down']),
    );
    expect(await tables(db)).toEqual(INITIAL_TABLES);
    expect(await planCodes(db)).toEqual([]);

    const allDown = await migrator.migrateTo(NO_MIGRATIONS);
    expect(allDown.error).toBeUndefined();
    expect(allDown.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([['0001-initial', 'Down', 'Success']]);
    expect(await tables(db)).toEqual([]);

    const up = await migrateToLatest(db);
    expect(up.results?.map((r) => r.status)).toEqual(NAMES.map(() => 'Success'));
    expect(await tables(db)).toEqual(TABLES);
    expect(await planCodes(db)).toEqual(['professional', 'standard', 'vip']);
  });

  // 0012 is one only 0014 builds on (0016 and 0017 remake the mail queue of 0006, so 0006 no longer is).
  test('a migration merged after higher ones have run (0012 after 0017) runs at the next start', async () => {
    const db = await empty();
    // 0014 adds an index to 0012's table, so it comes late with it.
    const late12 = ['0012-brands', '0014-brand-limits'];
    const without = Object.fromEntries(Object.entries(migrations).filter(([name]) => !late12.includes(name)));
    const earlier = await (await createMigrator(db, without)).migrateToLatest();
    expect(earlier.error).toBeUndefined();
    expect(await tables(db)).not.toContain('brands');
    const late = await migrateToLatest(db);
    expect(late.results?.map((r) => [r.migrationName, r.direction, r.status])).toEqual([
      ['0012-brands', 'Up', 'Success'],
      ['0014-brand-limits', 'Up', 'Success'],
    ]);
    expect(await tables(db)).toEqual(TABLES);
  });

  test('down works on a database holding data', async () => {
    const db = await empty();
    await migrateToLatest(db);
    const now = new Date().toISOString();
    await db.kysely.insertInto('accounts').values({ id: 'acct_x', email: 'x@example.com', created_at: now }).execute();
    await db.kysely.insertInto('lots').values({ auction: 'copart', lot_id: 1, vin: '1HGCM82633A004352', images: '[]', created_at: now, updated_at: now }).execute();
    const result = await (await createMigrator(db)).migrateTo(NO_MIGRATIONS);
    expect(result.error).toBeUndefined();
    expect(await tables(db)).toEqual([]);
  });
});

describe.runIf(DIALECTS.includes('postgres'))('migrations on PostgreSQL schemas side by side', () => {
  test('two schemas of one database migrate independently, in parallel', async () => {
    const databases = await Promise.all([openEmptyDatabase('postgres'), openEmptyDatabase('postgres'), openEmptyDatabase('postgres')]);
    try {
      const results = await Promise.all(databases.map(({ db }) => migrateToLatest(db)));
      for (const result of results) expect(result.results?.map((r) => r.status)).toEqual(NAMES.map(() => 'Success'));
      for (const { db } of databases) {
        expect(await tables(db)).toEqual(TABLES);
        expect(await planCodes(db)).toEqual(['professional', 'standard', 'vip']);
      }
      // Going down in one leaves the others whole.
      const migrator = await createMigrator(databases[0].db);
      expect((await migrator.migrateTo(NO_MIGRATIONS)).error).toBeUndefined();
      expect(await tables(databases[0].db)).toEqual([]);
      expect(await tables(databases[1].db)).toEqual(TABLES);
    } finally {
      await Promise.all(databases.map((database) => database.destroy()));
    }
  });
});
