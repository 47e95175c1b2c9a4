import { lotJson } from '../../src/domain/lot.ts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { CommitResult, SearchToCommit } from '../../src/storage/search-commit.ts';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.ts';
import { createCustomer, makeLot, principalAt, type Customer } from '../support/fixtures.ts';
import { randomVin } from './repositories/helpers.ts';

const PERIOD = '2026-03-01T00:00:00.000Z';

/**
 * The quota and idempotency guarantees under concurrency. On PostgreSQL the database gets a pool of
 * ten connections, so that the commits really run side by side in separate transactions.
 */
describe.each(DIALECTS)('searchCommit.commit under concurrency (%s)', (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(dialect, dialect === 'postgres' ? { maxConnections: 10 } : {});
  });
  afterAll(async () => {
    await t?.destroy();
  });

  async function commit(customer: Customer, overrides: Partial<SearchToCommit>): Promise<CommitResult> {
    const vin = overrides.vin ?? randomVin();
    const now = overrides.now ?? new Date();
    return t.repos.searchCommit.commit({
      principal: await principalAt(t.repos, customer.tokenId, now),
      now,
      accountId: customer.accountId,
      tokenId: customer.tokenId,
      vin,
      periodStart: PERIOD,
      quota: 1000,
      lots: [lotJson(makeLot({ vin }))],
      idempotencyKey: null,
      ...overrides,
    });
  }

  function kinds(results: CommitResult[]): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const result of results) counts[result.kind] = (counts[result.kind] ?? 0) + 1;
    return counts;
  }

  async function ledger(customer: Customer) {
    return {
      searches: await t.repos.searches.countForAccount(customer.accountId),
      reports: await t.repos.reports.countForAccount(customer.accountId),
      used: await t.repos.usageCounters.usedInPeriod(customer.accountId, PERIOD),
    };
  }

  test('50 concurrent searches against a quota of 7: exactly 7 counted, each with its record and report', async () => {
    const customer = await createCustomer(t.repos, { quota: 7 });
    const results = await Promise.all(Array.from({ length: 50 }, () => commit(customer, { quota: 7 })));
    expect(kinds(results)).toEqual({ committed: 7, quota_exceeded: 43 });
    const counted = results.flatMap((r) => (r.kind === 'committed' ? [r.used] : [])).sort((a, b) => a - b);
    expect(counted).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const r of results) if (r.kind === 'quota_exceeded') expect(r.used).toBe(7);
    expect(await ledger(customer)).toEqual({ searches: 7, reports: 7, used: 7 });
  });

  test('the same new Idempotency-Key sent 10 times at once is counted once; the others replay it', async () => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    const results = await Promise.all(Array.from({ length: 10 }, () => commit(customer, { vin, idempotencyKey: 'retry-storm' })));
    expect(kinds(results)).toEqual({ committed: 1, replayed: 9 });
    const reportIds = new Set(results.map((r) => (r.kind === 'committed' || r.kind === 'replayed' ? r.search.reportId : 'none')));
    expect(reportIds.size).toBe(1);
    expect([...reportIds][0]).toEqual(expect.any(String));
    expect(await ledger(customer)).toEqual({ searches: 1, reports: 1, used: 1 });
  });

  test('the same new key sent 10 times at once with one search left: one counted, the rest replay rather than hit the quota', async () => {
    const customer = await createCustomer(t.repos);
    const vin = randomVin();
    const results = await Promise.all(Array.from({ length: 10 }, () => commit(customer, { vin, quota: 1, idempotencyKey: 'last-one' })));
    expect(kinds(results)).toEqual({ committed: 1, replayed: 9 });
    const searchIds = new Set(results.map((r) => (r.kind === 'committed' || r.kind === 'replayed' ? r.search.searchId : r.kind)));
    expect(searchIds.size).toBe(1);
    expect(await ledger(customer)).toEqual({ searches: 1, reports: 1, used: 1 });
  });

  test('concurrent accounts do not share a quota', async () => {
    const customers = await Promise.all(Array.from({ length: 3 }, () => createCustomer(t.repos, { quota: 4 })));
    const results = await Promise.all(customers.flatMap((customer) => Array.from({ length: 8 }, () => commit(customer, { quota: 4 }))));
    expect(kinds(results)).toEqual({ committed: 12, quota_exceeded: 12 });
    for (const customer of customers) expect(await ledger(customer)).toEqual({ searches: 4, reports: 4, used: 4 });
  });
});
