import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../support/app.ts';
import { DIALECTS } from '../../../support/databases.ts';
import { createCustomer, makeLot, validVin } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';

/**
 * The quota is exact under concurrency: many searches at once for an account with a small quota
 * succeed exactly `quota` times and leave exactly that many reports and search records.
 */
describe.each(DIALECTS)('quota under concurrency on %s', (dialect) => {
  let t: TestApp;
  const vin = validVin('3VWDX7AJ5BM00123');
  const unknownVin = validVin('1G1ZD5ST0LF01234');

  beforeAll(async () => {
    // Several PostgreSQL connections, so that the transactions really overlap.
    t = await createTestApp(dialect, { maxConnections: 12 });
    await t.repos.lots.upsertBatch([makeLot({ vin, lot_id: 50000001 }), makeLot({ vin, auction: 'iaai', lot_id: 50000002 })]);
  });
  afterAll(async () => t?.close());

  it('grants exactly the quota to 120 parallel searches from two tokens of one account', async () => {
    const quota = 9;
    const customer = await createCustomer(t.repos, { quota, rate: 10_000 });
    const second = await t.repos.tokens.create(customer.accountId, 'second');
    const tokens = [customer.token, second.token];
    const responses = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        t.app.inject({
          method: i % 3 === 0 ? 'GET' : 'POST',
          url: i % 3 === 0 ? `/api/v1/search?vin=${i % 5 === 0 ? unknownVin : vin}` : '/api/v1/search',
          headers: { authorization: tokens[i % 2]! },
          ...(i % 3 === 0 ? {} : { payload: { vin: i % 5 === 0 ? unknownVin : vin } }),
        }),
      ),
    );
    const counted = responses.filter((r) => r.statusCode === 200 || r.statusCode === 404);
    const refused = responses.filter((r) => r.statusCode === 429);
    expect(counted).toHaveLength(quota);
    expect(refused).toHaveLength(120 - quota);
    for (const r of refused) expect(r.json().message).toMatch(/quota/i);

    const found = counted.filter((r) => r.statusCode === 200);
    const records = await t.repos.searches.listForAccount(customer.accountId, 1000);
    expect(records).toHaveLength(quota);
    expect(await t.repos.reports.countForAccount(customer.accountId)).toBe(found.length);
    expect(records.filter((r) => r.outcome === 'found')).toHaveLength(found.length);
    expect(new Set(found.map((r) => r.json().report_url)).size).toBe(found.length);
    expect(await t.repos.usageCounters.usedInPeriod(customer.accountId, records[0]!.period_start)).toBe(quota);
  });

  it('keeps accounts apart: each of several accounts gets exactly its own quota', async () => {
    const customers = await Promise.all([3, 5, 7].map((quota) => createCustomer(t.repos, { quota, rate: 10_000 })));
    const quotas = [3, 5, 7];
    const responses = await Promise.all(
      Array.from({ length: 90 }, (_, i) =>
        t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customers[i % 3]!.token }, payload: { vin } }),
      ),
    );
    for (const [index, customer] of customers.entries()) {
      const mine = responses.filter((_, i) => i % 3 === index);
      expect(mine.filter((r) => r.statusCode === 200)).toHaveLength(quotas[index]!);
      expect(await t.repos.searches.countForAccount(customer.accountId)).toBe(quotas[index]);
      expect(await t.repos.reports.countForAccount(customer.accountId)).toBe(quotas[index]);
    }
  });
});

// Every status this file's requests got is one the OpenAPI document lists for that operation.
afterAll(expectDocumentedStatuses);
