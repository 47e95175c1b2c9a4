import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Account } from '../../../src/domain/account.ts';
import { DIALECTS } from '../../support/databases.ts';
import { makeLot } from '../../support/fixtures.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';

const VIN_A = '4JGBF7BE5AA585531';
const VIN_B = '1HGCM82633A004352';

interface Customer {
  browser: WebClient;
  account: Account;
  token: string;
  tokenId: string;
  tokenName: string;
}

/**
 * One customer must never reach another's tokens, invoices, usage or search history, whatever ids
 * it puts in a URL or a form. (Report pages are public by link, by contract.)
 */
describe.each(DIALECTS)('one customer cannot reach another’s account (%s)', (dialect) => {
  let t: AccountTestApp;
  let a: Customer;
  let b: Customer;
  let bInvoice: { id: string; reference: string };
  let bReportId: string;

  async function customer(tokenName: string): Promise<Customer> {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    await browser.signUp(email);
    const account = (await t.repos.accounts.findByEmail(email))!;
    await t.repos.subscriptions.create({ accountId: account.id, planCode: 'professional', billing: 'monthly', startedAt: new Date(Date.now() - 60_000) });
    const { row, token } = await t.repos.tokens.create(account.id, tokenName);
    return { browser, account, token, tokenId: row.id, tokenName };
  }

  beforeAll(async () => {
    t = await createAccountTestApp(dialect);
    await t.repos.lots.upsertBatch([makeLot({ vin: VIN_A }), makeLot({ vin: VIN_B })]);
    a = await customer('alpha-token-name');
    b = await customer('bravo-token-name');
    const search = await t.app.inject({ url: `/api/v1/search?vin=${VIN_B}`, headers: { authorization: b.token } });
    expect(search.statusCode).toBe(200);
    bReportId = new URL(search.json().report_url).pathname.split('/').at(-1)!;
    expect((await t.app.inject({ url: `/api/v1/search?vin=${VIN_A}`, headers: { authorization: a.token } })).statusCode).toBe(200);
    const invoice = await t.repos.invoices.create({ accountId: b.account.id, provider: 'manual', kind: 'subscribe', planCode: 'vip', billing: 'monthly', amountCents: 40000, currency: 'usd', description: 'VIP' });
    bInvoice = { id: invoice.id, reference: invoice.reference };
  });
  afterAll(async () => {
    await t?.close();
  });

  test('tokens: another customer’s token cannot be revoked or rotated, and is not listed', async () => {
    await a.browser.get('/account/tokens');
    const revoke = await a.browser.post(`/account/tokens/${b.tokenId}/revoke`);
    expect(revoke.statusCode).toBe(404);
    const rotate = await a.browser.post(`/account/tokens/${b.tokenId}/rotate`);
    expect(rotate.statusCode).toBe(409);
    expect(rotate.body).not.toMatch(/vh_live_[0-9A-Za-z]{32}/);
    const row = (await t.repos.tokens.listForAccount(b.account.id)).find((token) => token.id === b.tokenId);
    expect(row).toMatchObject({ revokedAt: null, expiresAt: null });
    expect((await t.app.inject({ url: `/api/v1/search?vin=${VIN_B}`, headers: { authorization: b.token } })).statusCode).toBe(200);
    const tokens = await a.browser.get('/account/tokens');
    expect(tokens.body).toContain(a.tokenName);
    expect(tokens.body).not.toContain(b.tokenName);
    expect(tokens.body).not.toContain(b.tokenId);
    expect(tokens.body).not.toContain(b.token.slice(0, 12));
  });

  test('invoices: another customer’s invoice is not found, cannot be cancelled, and is not listed', async () => {
    expect((await a.browser.get(`/account/billing/invoices/${bInvoice.id}`)).statusCode).toBe(404);
    await a.browser.get('/account/billing');
    const cancel = await a.browser.post(`/account/billing/invoices/${bInvoice.id}/cancel`);
    expect(cancel.statusCode).toBe(409);
    expect((await t.repos.invoices.findById(bInvoice.id))!.status).toBe('open');
    expect((await a.browser.get('/account/billing')).body).not.toContain(bInvoice.reference);
    expect((await b.browser.get(`/account/billing/invoices/${bInvoice.id}`)).statusCode).toBe(200);
  });

  test('usage and searches: each customer sees only their own, also when paging with the other’s cursor', async () => {
    const mine = await a.browser.get('/account/usage');
    expect(mine.body).toContain(VIN_A);
    expect(mine.body).not.toContain(VIN_B);
    expect(mine.body).not.toContain(bReportId);
    const [bSearch] = await t.repos.searches.listForAccount(b.account.id);
    const cursor = encodeURIComponent(`${new Date(Date.parse(bSearch!.created_at) + 1).toISOString()}~${bSearch!.id}`);
    const paged = await a.browser.get(`/account/usage?before=${cursor}`);
    expect(paged.body).not.toContain(VIN_B);
    const overview = await a.browser.get('/account');
    expect(overview.body).toContain('1</span> <span class="meter__of">of 5,000');
    const theirs = await b.browser.get('/account/usage');
    expect(theirs.body).toContain(VIN_B);
    expect(theirs.body).toContain(`/report/${bReportId}`);
    expect(theirs.body).not.toContain(VIN_A);
  });

  test('without a session every account page and form sends to the log-in page; reports stay public by link', async () => {
    const stranger = new WebClient(t.app);
    for (const url of ['/account', '/account/billing', `/account/billing/invoices/${bInvoice.id}`, '/account/tokens', '/account/usage', '/account/settings']) {
      const res = await stranger.get(url);
      expect(res.statusCode, url).toBe(303);
      expect(res.headers.location).toBe(`/login?next=${encodeURIComponent(url)}`);
    }
    // A form needs a page of the site first; with its token but no session it still only reaches the log-in page.
    await stranger.get('/login');
    const post = await stranger.post(`/account/tokens/${b.tokenId}/revoke`);
    expect(post.statusCode).toBe(303);
    expect(post.headers.location).toBe('/login?next=%2Faccount');
    expect(((await t.repos.tokens.listForAccount(b.account.id)).find((token) => token.id === b.tokenId))!.revokedAt).toBeNull();
    expect((await stranger.get(`/report/${bReportId}`)).statusCode).toBe(200);
  });
});
