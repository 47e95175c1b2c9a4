import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.ts';
import { createCustomer } from '../../support/fixtures.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../../support/customer-app.ts';

const DAY = 24 * 60 * 60 * 1000;

describe.each(DIALECTS)("the operators' page /admin (%s)", (dialect) => {
  let t: AccountTestApp;
  let operatorToken: string;
  beforeAll(async () => {
    t = await createAccountTestApp(dialect);
    operatorToken = (await t.repos.operatorTokens.create('desk-page')).token;
  });
  afterAll(async () => {
    await t?.close();
  });

  async function loggedIn(): Promise<WebClient> {
    const browser = new WebClient(t.app);
    await browser.get('/admin');
    const res = await browser.post('/admin/login', { token: operatorToken });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe('/admin');
    const cookie = res.cookies.find((c) => c.name === 'vh_operator');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
    expect(cookie!.value).not.toContain(operatorToken);
    return browser;
  }

  /** An open manual invoice of a new account. */
  async function openInvoice() {
    const email = randomEmail();
    const account = await t.repos.accounts.create(email);
    const invoice = await t.repos.invoices.create(
      { accountId: account.id, provider: 'manual', kind: 'subscribe', planCode: 'standard', billing: 'monthly', amountCents: 5000, currency: 'usd', description: 'Standard', subscriptionId: null, buyer: { company: null, address: null, taxId: null } },
      new Date(Date.now() - DAY),
    );
    return { email, account, invoice };
  }

  it('asks for an operator token; refuses a wrong one and a customer token with the same message', async () => {
    const browser = new WebClient(t.app);
    const page = await browser.get('/admin');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<label class="field__label" for="operator-token">Operator token</label>');
    const customer = await createCustomer(t.repos);
    for (const token of [customer.token, `vh_op_${'x'.repeat(32)}`, '']) {
      const res = await browser.post('/admin/login', { token });
      expect(res.statusCode).toBe(401);
      expect(res.body).toContain('That is not a live operator token.');
      expect(res.cookies.find((c) => c.name === 'vh_operator')).toBeUndefined();
    }
    // A form without its CSRF token is refused.
    expect((await browser.post('/admin/login', { token: operatorToken }, { csrf: null })).statusCode).toBe(403);
  });

  it('shows accounts with status, plan and use, and searches them by email', async () => {
    const customer = await createCustomer(t.repos, { email: randomEmail() });
    const account = (await t.repos.accounts.findById(customer.accountId))!;
    const browser = await loggedIn();
    const page = await browser.get(`/admin?email=${encodeURIComponent(account.email)}`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('Logged in with the operator token <strong>desk-page</strong>');
    expect(page.body).toContain(account.email);
    expect(page.body).toContain('standard (monthly)');
    expect(page.body).toContain('0 / 1000');
    expect(page.body).toContain('Mail queue');
    expect(page.body).toContain('Webhook deliveries');
    expect(page.body).toContain('Photo archive');
    const none = await browser.get('/admin?email=nobody-at-all');
    expect(none.body).toContain('No accounts match.');
  });

  it('marks an invoice paid through a CSRF-protected form, audited with the token name', async () => {
    const { invoice, account } = await openInvoice();
    const browser = await loggedIn();
    const page = await browser.get('/admin');
    expect(page.body).toContain(invoice.reference);
    expect((await browser.post(`/admin/invoices/${invoice.id}/pay`, {}, { csrf: null })).statusCode).toBe(403);
    expect((await t.repos.invoices.findById(invoice.id))?.status).toBe('open');

    const paid = await browser.post(`/admin/invoices/${invoice.id}/pay`);
    expect(paid.statusCode, paid.body).toBe(303);
    expect(paid.headers.location).toBe('/admin?notice=paid');
    expect((await t.repos.invoices.findById(invoice.id))?.status).toBe('paid');
    expect((await t.repos.subscriptions.findActive(account.id))?.planCode).toBe('standard');
    const [entry] = await t.repos.operatorAudit.page({ limit: 1, target: invoice.id });
    expect(entry).toMatchObject({ actor: 'token:desk-page', action: 'invoice.pay' });
    const again = await browser.post(`/admin/invoices/${invoice.id}/pay`);
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('already paid');
  });

  it('voids an invoice; a form without a log-in changes nothing; revoking the token logs the page out', async () => {
    const { invoice } = await openInvoice();
    const stranger = new WebClient(t.app);
    await stranger.get('/admin');
    expect((await stranger.post(`/admin/invoices/${invoice.id}/void`)).statusCode).toBe(401);
    expect((await t.repos.invoices.findById(invoice.id))?.status).toBe('open');

    const extra = await t.repos.operatorTokens.create('temp-desk');
    const browser = new WebClient(t.app);
    await browser.get('/admin');
    await browser.post('/admin/login', { token: extra.token });
    await browser.get('/admin');
    const voided = await browser.post(`/admin/invoices/${invoice.id}/void`);
    expect(voided.statusCode).toBe(303);
    expect((await t.repos.invoices.findById(invoice.id))?.status).toBe('void');
    expect((await t.repos.operatorAudit.page({ limit: 1, target: invoice.id }))[0]).toMatchObject({ actor: 'token:temp-desk', action: 'invoice.void' });

    await t.repos.operatorTokens.revokeByToken(extra.token);
    const after = await browser.get('/admin');
    expect(after.body).toContain('Operator token</label>');
    expect(after.body).not.toContain('Open invoices');
  });
  it('lists the feeds with their state and ages: a failing one says how many pulls in a row, a paused one has no next pull', async () => {
    const browser = await loggedIn();
    expect((await browser.get('/admin')).body).toContain('No feeds: lots are loaded with');
    const now = Date.now();
    for (const name of ['copart-members', 'vendor-api']) {
      expect((await t.app.services.feeds.add({ name, url: `https://feeds.example.com/${name}.ndjson`, format: 'ndjson', every: '15m' })).kind).toBe('done');
    }
    // copart-members: one good pull an hour ago, then three failed ones, the last 2 minutes ago.
    const feed = (await t.repos.feeds.findByName('copart-members'))!;
    const counts = { read: 0, inserted: 0, updated: 0, unchanged: 0, skipped: 0 };
    const pull = async (at: number, status: 'ok' | 'failed', failuresInRow: number) => {
      expect(await t.repos.feeds.claimByName('copart-members', 'page-test', new Date(at), 60_000)).not.toBeNull();
      const error = status === 'failed' ? 'the body is an HTML page (a bot challenge?), not ndjson' : null;
      const record = { status, attemptAt: new Date(at).toISOString(), error, counts, failuresInRow, alerted: false, nextRunAt: new Date(now + 13 * 60_000).toISOString(), checkpoint: null };
      expect(await t.repos.feeds.finishPull(feed.id, 'page-test', record)).toBe(true);
    };
    await pull(now - 60 * 60_000, 'ok', 0);
    for (const [i, minutes] of [20, 10, 2].entries()) await pull(now - minutes * 60_000, 'failed', i + 1);
    await t.app.services.feeds.pause('vendor-api', true);

    const page = await browser.get('/admin');
    expect(page.statusCode).toBe(200);
    const rows = [...page.body.matchAll(/<tr>\s*<td data-label="Name" class="mono">([^<]+)<\/td>([\s\S]*?)<\/tr>/g)].map((m) => [m[1], m[2]!.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim()]);
    expect(rows).toEqual([
      ['copart-members', 'ndjson failed, 3 in a row 1 h ago never in 13 min the body is an HTML page (a bot challenge?), not ndjson'],
      ['vendor-api', 'ndjson paused never never — —'],
    ]);
    expect(page.body).toContain('vinhistory feeds');
  });
});
