import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DIALECTS } from '../../support/databases.ts';
import { validVin } from '../../support/fixtures.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';

const SANDBOX_VIN = '4T1BF1FK7FU900011';

/** The usage page's past searches: a test token's search is listed, marked as a test. */
describe.each(DIALECTS)('the usage page marks test searches (%s)', (dialect) => {
  let t: AccountTestApp;
  beforeAll(async () => {
    t = await createAccountTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  test('a sandbox search carries a Test badge; a live one does not', async () => {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    await browser.signUp(email);
    const account = (await t.repos.accounts.findByEmail(email))!;
    await t.repos.subscriptions.create({ accountId: account.id, planCode: 'standard', billing: 'monthly', startedAt: new Date(Date.now() - 60_000) });
    const live = /vh_live_[0-9A-Za-z]{32}/.exec((await browser.createToken({ name: 'live', kind: 'live' })).body)![0];
    const test = /vh_test_[0-9A-Za-z]{32}/.exec((await browser.createToken({ name: 'sandbox', kind: 'test' })).body)![0];
    const liveVin = validVin();
    expect((await t.app.inject({ url: `/api/v1/search?vin=${liveVin}`, headers: { authorization: live } })).statusCode).toBe(404);
    expect((await t.app.inject({ url: `/api/v1/search?vin=${SANDBOX_VIN}`, headers: { authorization: test } })).statusCode).toBe(200);

    const page = await browser.get('/account/usage');
    expect(page.statusCode).toBe(200);
    const rows = [...page.body.matchAll(/<tr>\s*<td data-label="VIN"><span class="mono">([^<]+)<\/span>[\s\S]*?<\/tr>/g)].map((m) => ({ vin: m[1], html: m[0] }));
    expect(rows.map((row) => row.vin).sort()).toEqual([liveVin, SANDBOX_VIN].sort());
    expect(rows.find((row) => row.vin === SANDBOX_VIN)!.html).toMatch(/<span class="badge badge--test"[^>]*>Test<\/span>/);
    expect(rows.find((row) => row.vin === liveVin)!.html).not.toContain('badge--test');
    // Listed, yet not counted: only the live search is.
    expect(await t.repos.searches.countForAccount(account.id)).toBe(1);
  });
});
