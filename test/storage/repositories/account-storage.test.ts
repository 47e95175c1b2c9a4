import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'kysely';
import { createMigrator, migrateToLatest } from '../../../src/storage/database.ts';
import { createRepositories } from '../../../src/storage/repositories/index.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { openEmptyDatabase } from './helpers.ts';
import { randomEmail } from '../../support/customer-app.ts';

const MINUTE = 60_000;
const T0 = new Date('2026-04-01T08:00:00.000Z');
const after = (ms: number) => new Date(T0.getTime() + ms);

describe.each(DIALECTS)('account storage (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  test('a reset link is used once, even when sent twice at the same moment', async () => {
    const account = await t.repos.accounts.create(randomEmail());
    await t.repos.passwordResets.create({ tokenHash: 'h1', accountId: account.id, now: T0, expiresAt: after(60 * MINUTE) });
    const results = await Promise.all([t.repos.passwordResets.consume('h1', after(MINUTE)), t.repos.passwordResets.consume('h1', after(MINUTE))]);
    expect(results.sort()).toEqual([false, true]);
    await t.repos.passwordResets.create({ tokenHash: 'h2', accountId: account.id, now: T0, expiresAt: after(60 * MINUTE) });
    expect(await t.repos.passwordResets.findLive('h2', after(60 * MINUTE))).toBeUndefined();
    expect(await t.repos.passwordResets.consume('h2', after(61 * MINUTE))).toBe(false);
  });

  test('migration 0003 goes down on a database holding account data, and up again', async () => {
    const empty = await openEmptyDatabase(dialect);
    try {
      await migrateToLatest(empty.db);
      const repos = createRepositories(empty.db);
      const account = await repos.accounts.create(randomEmail());
      await repos.passwords.set(account.id, 'scrypt$1$1$1$x$y');
      await repos.tokens.rotateForAccount(account.id, (await repos.tokens.create(account.id, 'x')).row.id, after(MINUTE), T0);
      await repos.settings.getOrCreate('cookie_secret', () => 'secret');
      await repos.invoices.create({ accountId: account.id, provider: 'manual', kind: 'subscribe', planCode: 'standard', billing: 'monthly', amountCents: 5000, currency: 'usd', description: 'x' });
      const migrator = await createMigrator(empty.db);
      // Down to just before 0003, through whatever later migrations there are.
      const down = await migrator.migrateTo('0002-seed-plans');
      expect(down.error).toBeUndefined();
      expect(down.results?.at(-1)).toMatchObject({ migrationName: '0003-customer-accounts', direction: 'Down', status: 'Success' });
      // On PostgreSQL the introspection sees every schema; only this database's own count.
      const schema = dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(empty.db.kysely)).rows[0]!.s : undefined;
      const tables = (await empty.db.kysely.introspection.getTables()).filter((table) => schema === undefined || table.schema === schema);
      expect(tables.map((table) => table.name)).not.toContain('web_sessions');
      expect(tables.map((table) => table.name)).not.toContain('invoices');
      expect(tables.find((table) => table.name === 'api_tokens')!.columns.map((c) => c.name)).not.toContain('expires_at');
      expect((await migrateToLatest(empty.db)).results?.[0]).toMatchObject({ migrationName: '0003-customer-accounts', status: 'Success' });
    } finally {
      await empty.destroy();
    }
  });
});
