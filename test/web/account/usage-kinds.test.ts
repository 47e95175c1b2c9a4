import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';
import { validVin } from '../../support/fixtures.ts';

/**
 * The usage page shows the counted calls by kind (searches.kind): this period's count of each, and
 * each past call with its kind and what it asked. SQLite only: the page reads the searches
 * repository, whose dialect-free queries the storage tests run on both databases.
 */
describe('the usage page by kind', () => {
  let t: AccountTestApp;
  beforeAll(async () => {
    t = await createAccountTestApp('sqlite');
  });
  afterAll(async () => t?.close());

  test('counts searches, market values and catalogue searches apart, and lists each with what it asked', async () => {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    await browser.signUp(email);
    const account = (await t.repos.accounts.findByEmail(email))!;
    await t.repos.plans.create({ code: 'kinds', name: 'Kinds', monthlyQuota: 100, ratePerSecond: 1000, monthlyPriceCents: 0 });
    await t.repos.subscriptions.create({ accountId: account.id, planCode: 'kinds', billing: 'monthly', startedAt: new Date(Date.now() - 60_000) });
    const { token } = await t.repos.tokens.create(account.id, 'kinds');

    const vin = validVin('1FTEW1EP5JFA0001');
    expect((await t.app.inject({ url: `/api/v1/search?vin=${vin}`, headers: { authorization: token } })).statusCode).toBe(404);
    // The API's market and catalogue calls, as a customer makes them.
    for (const url of ['/api/v1/market?make=Honda&model=Accord&year=2020', '/api/v1/market?vin=4JGBF7BE5AA585531', '/api/v1/lots']) {
      const res = await t.app.inject({ url, headers: { authorization: token } });
      expect([200, 404], url).toContain(res.statusCode);
    }

    const page = await browser.get('/account/usage');
    expect(page.statusCode).toBe(200);
    const kinds = page.body.slice(page.body.indexOf('id="kinds-title"'), page.body.indexOf('id="searches"'));
    const counts = Object.fromEntries([...kinds.matchAll(/<tr><td>([^<]+)<\/td><td class="num">(\d+)<\/td><\/tr>/g)].map((m) => [m[1], Number(m[2])]));
    expect(counts).toEqual({ 'Search by VIN': 1, 'Lookup by lot': 0, 'Catalogue search': 1, 'Market value': 2, 'Lot history': 0 });

    const rows = [...page.body.matchAll(/<td data-label="(\w+)"><span class="mono">([^<]+)<\/span><\/td>\s*<td data-label="Kind">([^<]+)<\/td>/g)].map((m) => [m[1], m[2], m[3]]);
    // Calls in the same millisecond are listed in id order: compared as a set.
    expect(rows.sort()).toEqual(
      [
        // Each call's canonical query (market-query.ts): keys, and the defaults spelled out.
        ['Query', 'sort=sale_date_desc&amp;limit=25', 'Catalogue search'],
        ['Query', 'vin=4JGBF7BE5AA585531&amp;months=12', 'Market value'],
        ['Query', 'make=HONDA&amp;model=ACCORD&amp;year=2020&amp;months=12', 'Market value'],
        ['VIN', vin, 'Search by VIN'],
      ].sort(),
    );
  });
});
