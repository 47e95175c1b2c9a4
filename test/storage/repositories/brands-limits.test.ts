import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createMigrator, migrateToLatest } from '../../../src/storage/database.ts';
import { openEmptyDatabase } from './helpers.ts';
import { BrandService } from '../../../src/accounts/brand-service.ts';
import { BRAND_LIMITS } from '../../../src/domain/brand.ts';
import { LogoProcess } from '../../../src/media/logo-process.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';

/**
 * Issue 28, F8: 30 concurrent saves of a new named brand made 28-30 (the limit is 20), and 8
 * concurrent first saves of the default brand made 5-8 defaults (at most one), because the count
 * and the insert were separate statements. On the production setting of the service.
 */
describe.each(DIALECTS)('brand limits under concurrent saves (%s)', (dialect) => {
  let database: TestDatabase;
  const logos = new LogoProcess();
  beforeAll(async () => {
    // Connections enough for the saves to run side by side on PostgreSQL.
    database = await createTestDatabase(dialect, { maxConnections: 12 });
  });
  afterAll(async () => {
    await logos.close();
    await database?.destroy();
  });

  const form = (name: string) => ({ name, accent: '', contact: '', reportBaseUrl: '' });

  test(`30 concurrent new named brands make ${BRAND_LIMITS.namedBrands}; the rest are refused as too many`, async () => {
    const account = await database.repos.accounts.create(`limits-${Math.random().toString(36).slice(2)}@example.com`);
    const service = new BrandService({ repos: database.repos, isProduction: true, logos });
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => service.save(account.id, 'new', form(`Site ${i}`))));
    expect(outcomes.filter((outcome) => outcome.kind === 'saved')).toHaveLength(BRAND_LIMITS.namedBrands);
    expect(outcomes.filter((outcome) => outcome.kind === 'too-many')).toHaveLength(30 - BRAND_LIMITS.namedBrands);
    const brands = await database.repos.brands.listForAccount(account.id);
    expect(brands.filter((brand) => !brand.isDefault)).toHaveLength(BRAND_LIMITS.namedBrands);
  });

  test('8 concurrent first saves of the default brand leave one default, holding one of the saved names', async () => {
    const account = await database.repos.accounts.create(`limits-${Math.random().toString(36).slice(2)}@example.com`);
    const service = new BrandService({ repos: database.repos, isProduction: true, logos });
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => service.save(account.id, null, form(`Main ${i}`))));
    expect(outcomes.every((outcome) => outcome.kind === 'saved')).toBe(true);
    const defaults = (await database.repos.brands.listForAccount(account.id)).filter((brand) => brand.isDefault);
    expect(defaults).toHaveLength(1);
    expect(defaults[0]!.name).toMatch(/^Main [0-7]$/);
  });

  test('the database itself refuses a second default brand for an account (unique partial index)', async () => {
    const account = await database.repos.accounts.create(`limits-${Math.random().toString(36).slice(2)}@example.com`);
    const now = new Date();
    await database.db.kysely
      .insertInto('brands')
      .values({ id: 'brd_first', account_id: account.id, is_default: 1, name: 'A', logo_hash: null, logo_png: null, accent: null, contact: null, report_base_url: null, created_at: now.toISOString(), updated_at: now.toISOString() })
      .execute();
    await expect(
      database.db.kysely
        .insertInto('brands')
        .values({ id: 'brd_second', account_id: account.id, is_default: 1, name: 'B', logo_hash: null, logo_png: null, accent: null, contact: null, report_base_url: null, created_at: now.toISOString(), updated_at: now.toISOString() })
        .execute(),
    ).rejects.toThrow(/unique|UNIQUE/);
  });

  test('0014 keeps the oldest of the defaults made before it and turns the others into named brands', async () => {
    const empty = await openEmptyDatabase(dialect);
    try {
      const { db } = empty;
      expect((await (await createMigrator(db)).migrateTo('0013-subscription-in-force-index')).error).toBeUndefined();
      await db.kysely.insertInto('accounts').values({ id: 'acct_twice', email: 'twice@example.com', created_at: '2026-01-01T00:00:00.000Z' }).execute();
      const brand = (id: string, createdAt: string) => ({ id, account_id: 'acct_twice', is_default: 1, name: id, logo_hash: null, logo_png: null, accent: null, contact: null, report_base_url: null, created_at: createdAt, updated_at: createdAt });
      await db.kysely.insertInto('brands').values([brand('brd_b', '2026-01-02T00:00:00.000Z'), brand('brd_a', '2026-01-01T00:00:00.000Z'), brand('brd_c', '2026-01-01T00:00:00.000Z')]).execute();
      expect((await migrateToLatest(db)).error).toBeUndefined();
      const rows = await db.kysely.selectFrom('brands').select(['id', 'is_default']).orderBy('id').execute();
      expect(rows.map((row) => [row.id, Number(row.is_default)])).toEqual([['brd_a', 1], ['brd_b', 0], ['brd_c', 0]]);
    } finally {
      await empty.destroy();
    }
  });
});
