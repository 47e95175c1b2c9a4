import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../support/databases.ts';
import { rejectionOf } from './helpers.ts';

describe.each(DIALECTS)('PlansRepository (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect);
  });
  afterAll(async () => {
    await t?.destroy();
  });

  test('the migrations seed the three contract plans, Standard as the favourite', async () => {
    const expected = [
      { code: 'standard', name: 'Standard', monthlyQuota: 1000, ratePerSecond: 2, monthlyPriceCents: 5000, annualPriceCents: 60000, isFavourite: true },
      { code: 'professional', name: 'Professional', monthlyQuota: 5000, ratePerSecond: 5, monthlyPriceCents: 15000, annualPriceCents: 144000, isFavourite: false },
      { code: 'vip', name: 'VIP', monthlyQuota: 15000, ratePerSecond: 10, monthlyPriceCents: 40000, annualPriceCents: 384000, isFavourite: false },
    ];
    for (const plan of expected) {
      const row = await t.repos.plans.findByCode(plan.code);
      expect(row).toMatchObject({ ...plan, isPublic: true });
      expect(Date.parse(row!.createdAt)).not.toBeNaN();
    }
  });

  test('findByCode of an unknown plan is undefined', async () => {
    expect(await t.repos.plans.findByCode('nope')).toBeUndefined();
  });

  test('create stores a custom plan, not public, annual price 12 x monthly by default', async () => {
    const created = await t.repos.plans.create(
      { code: 'acme-enterprise', name: 'ACME', monthlyQuota: 250_000, ratePerSecond: 50, monthlyPriceCents: 99_000 },
      new Date('2026-01-02T03:04:05.678Z'),
    );
    expect(created).toEqual({
      code: 'acme-enterprise',
      name: 'ACME',
      monthlyQuota: 250_000,
      ratePerSecond: 50,
      monthlyPriceCents: 99_000,
      annualPriceCents: 1_188_000,
      isPublic: false,
      isFavourite: false,
      // Not given: a custom plan holds as many watches as Standard.
      watchLimit: 100,
      createdAt: '2026-01-02T03:04:05.678Z',
    });
    expect(await t.repos.plans.findByCode('acme-enterprise')).toEqual(created);

    const discounted = await t.repos.plans.create({
      code: 'acme-annual',
      name: 'ACME annual',
      monthlyQuota: 10,
      ratePerSecond: 1,
      monthlyPriceCents: 1000,
      annualPriceCents: 9000,
    });
    expect((await t.repos.plans.findByCode('acme-annual'))?.annualPriceCents).toBe(9000);
    expect(discounted.annualPriceCents).toBe(9000);
  });

  test('a duplicate plan code is rejected as a unique violation', async () => {
    await t.repos.plans.create({ code: 'dup-plan', name: 'One', monthlyQuota: 1, ratePerSecond: 1, monthlyPriceCents: 0 });
    const error = await rejectionOf(
      t.repos.plans.create({ code: 'dup-plan', name: 'Two', monthlyQuota: 2, ratePerSecond: 2, monthlyPriceCents: 0 }),
    );
    expect(t.db.isUniqueViolation(error)).toBe(true);
    expect((await t.repos.plans.findByCode('dup-plan'))?.name).toBe('One');
    // The seeded codes are taken too.
    expect(t.db.isUniqueViolation(
      await rejectionOf(t.repos.plans.create({ code: 'standard', name: 'X', monthlyQuota: 1, ratePerSecond: 1, monthlyPriceCents: 0 })),
    )).toBe(true);
  });

  test('the schema refuses a quota or rate below 1 and a negative price', async () => {
    const base = { name: 'Bad', monthlyQuota: 1, ratePerSecond: 1, monthlyPriceCents: 0 };
    await expect(t.repos.plans.create({ ...base, code: 'bad-quota', monthlyQuota: 0 })).rejects.toThrow();
    await expect(t.repos.plans.create({ ...base, code: 'bad-rate', ratePerSecond: 0 })).rejects.toThrow();
    await expect(t.repos.plans.create({ ...base, code: 'bad-price', monthlyPriceCents: -1 })).rejects.toThrow();
    for (const code of ['bad-quota', 'bad-rate', 'bad-price']) expect(await t.repos.plans.findByCode(code)).toBeUndefined();
  });

  test('list puts the public plans first by price, then custom plans by price', async () => {
    await t.repos.plans.create({ code: 'list-cheap', name: 'Cheap', monthlyQuota: 5, ratePerSecond: 1, monthlyPriceCents: 1 });
    await t.repos.plans.create({ code: 'list-dear', name: 'Dear', monthlyQuota: 5, ratePerSecond: 1, monthlyPriceCents: 10_000_000 });
    const plans = await t.repos.plans.list();
    expect(plans.slice(0, 3).map((p) => p.code)).toEqual(['standard', 'professional', 'vip']);
    const custom = plans.slice(3);
    expect(custom.every((p) => p.isPublic === false)).toBe(true);
    expect(custom.map((p) => p.code)).toEqual(expect.arrayContaining(['list-cheap', 'list-dear', 'acme-enterprise']));
    const prices = custom.map((p) => p.monthlyPriceCents);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
    expect(custom.at(-1)?.code).toBe('list-dear');
  });
});
