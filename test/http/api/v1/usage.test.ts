import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../support/app.ts';
import { DIALECTS } from '../../../support/databases.ts';
import { createCustomer, makeLot, validVin } from '../../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../../support/documented-statuses.ts';

describe.each(DIALECTS)('GET /api/v1/usage on %s', (dialect) => {
  let t: TestApp;
  const vin = validVin('5YJ3E1EA7KF31234');
  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.repos.lots.upsertBatch([makeLot({ vin })]);
  });
  afterAll(async () => t?.close());

  const usage = (token: string) => t.app.inject({ url: '/api/v1/usage', headers: { authorization: token } });

  it('reports plan, rate, quota, used, remaining, period start and reset, matching the search headers', async () => {
    const startedAt = new Date(Date.UTC(2026, 0, 31, 9, 30));
    const customer = await createCustomer(t.repos, { quota: 10, rate: 4, startedAt });
    const search = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    expect(search.statusCode).toBe(200);
    const res = await usage(customer.token);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ plan: { code: customer.planCode }, billing: 'monthly', rate_per_second: 4, quota: 10, used: 1, remaining: 9 });
    const start = new Date(body.period_start);
    const reset = new Date(body.resets_at);
    expect(start.getTime()).toBeLessThanOrEqual(Date.now());
    expect(reset.getTime()).toBeGreaterThan(Date.now());
    // Anchored at the 31st, 09:30 UTC: every boundary is the 31st or the month's last day, at 09:30.
    for (const boundary of [start, reset]) {
      expect(boundary.getUTCHours()).toBe(9);
      expect(boundary.getUTCMinutes()).toBe(30);
      const lastDay = new Date(Date.UTC(boundary.getUTCFullYear(), boundary.getUTCMonth() + 1, 0)).getUTCDate();
      expect(boundary.getUTCDate()).toBe(lastDay);
    }
    const monthRemaining = /"month";r=(\d+);t=(\d+)/.exec(search.headers.ratelimit as string)!;
    expect(Number(monthRemaining[1])).toBe(body.remaining);
  });

  it('is free: not counted and not limited by the search rate', async () => {
    const customer = await createCustomer(t.repos, { quota: 1, rate: 1 });
    await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    for (let i = 0; i < 3; i++) expect((await usage(customer.token)).statusCode).toBe(200);
    expect((await usage(customer.token)).json().used).toBe(1);
    expect(await t.repos.searches.countForAccount(customer.accountId)).toBe(1);
  });

  it('is limited against abuse with its own small rate (429 with Retry-After)', async () => {
    const customer = await createCustomer(t.repos);
    const responses = await Promise.all(Array.from({ length: 8 }, () => usage(customer.token)));
    expect(responses.filter((r) => r.statusCode === 200)).toHaveLength(5);
    const limited = responses.find((r) => r.statusCode === 429)!;
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The search allowance is untouched by usage calls.
    const search = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    expect(search.statusCode).toBe(200);
  });

  it('applies a plan change in the middle of a period to that period: count kept, new quota', async () => {
    const customer = await createCustomer(t.repos, { quota: 3, rate: 100 });
    for (let i = 0; i < 3; i++) {
      await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    }
    const refused = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    expect(refused.statusCode).toBe(429);
    const subscription = (await t.repos.subscriptions.findActive(customer.accountId))!;
    const before = (await usage(customer.token)).json();
    await t.repos.subscriptions.changePlan(subscription.id, 'professional');
    const after = (await usage(customer.token)).json();
    expect(after).toMatchObject({ plan: { code: 'professional' }, quota: 5000, used: 3, remaining: 4997, period_start: before.period_start, resets_at: before.resets_at });
    const allowed = await t.app.inject({ method: 'POST', url: '/api/v1/search', headers: { authorization: customer.token }, payload: { vin } });
    expect(allowed.statusCode).toBe(200);
  });

  it('answers 401 without a valid token and 402 without a subscription', async () => {
    expect((await t.app.inject({ url: '/api/v1/usage' })).body).toBe('{"message":"Unauthenticated."}');
    const customer = await createCustomer(t.repos);
    await t.repos.subscriptions.cancelActive(customer.accountId);
    expect((await usage(customer.token)).statusCode).toBe(402);
  });
});

// Every status this file's requests got is one the OpenAPI document lists for that operation.
afterAll(expectDocumentedStatuses);
