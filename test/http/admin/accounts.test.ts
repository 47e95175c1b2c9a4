import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../support/app.ts';
import { DIALECTS } from '../../support/databases.ts';
import { createCustomer } from '../../support/fixtures.ts';
import { expectDocumentedStatuses } from '../../support/documented-statuses.ts';

const DAY = 24 * 60 * 60 * 1000;

describe.each(DIALECTS)('the operators\' customer operations over /admin/v1 on %s', (dialect) => {
  let t: TestApp;
  let token: string;
  const suffix = Math.random().toString(36).slice(2, 8);
  const email = (name: string) => `${name}-${suffix}@example.com`;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    token = (await t.repos.operatorTokens.create('ops-desk')).token;
  });
  afterAll(async () => {
    expectDocumentedStatuses();
    await t?.close();
  });

  const call = (method: 'GET' | 'POST', url: string, payload?: unknown, authorization: string | null = token) =>
    t.app.inject({ method, url, headers: authorization ? { authorization } : {}, ...(payload !== undefined ? { payload: payload as object } : {}) });

  /** An account whose subscription is billed by manual invoices, paid through 30 days. */
  async function manualAccount(name: string) {
    const account = await t.repos.accounts.create(email(name));
    const startedAt = new Date(Date.now() - DAY);
    const paidThrough = new Date(startedAt.getTime() + 30 * DAY);
    const subscription = await t.repos.subscriptions.create({ accountId: account.id, planCode: 'standard', billing: 'monthly', startedAt, endsAt: paidThrough });
    await t.repos.billing.create({ subscriptionId: subscription.id, provider: 'manual', externalId: null, paidThrough });
    return { account, subscription, paidThrough };
  }

  it('answers 401 on every route without an operator token, with a wrong one, and with a customer token; nothing is changed or recorded', async () => {
    const customer = await createCustomer(t.repos, { email: email('victim') });
    const routes: ['GET' | 'POST', string, unknown?][] = [
      ['GET', '/admin/v1/accounts'],
      ['GET', `/admin/v1/accounts/${customer.accountId}`],
      ['POST', `/admin/v1/accounts/${customer.accountId}/subscription/change`, { plan: 'vip' }],
      ['POST', `/admin/v1/accounts/${customer.accountId}/subscription/extend`, { days: 3 }],
      ['POST', `/admin/v1/accounts/${customer.accountId}/subscription/end`],
      ['GET', `/admin/v1/accounts/${customer.accountId}/tokens`],
      ['POST', `/admin/v1/tokens/${customer.tokenId}/revoke`],
      ['GET', '/admin/v1/invoices'],
      ['POST', '/admin/v1/invoices/inv_0000000000000000/pay'],
      ['POST', '/admin/v1/invoices/inv_0000000000000000/void'],
      ['GET', '/admin/v1/audit'],
    ];
    for (const [method, url, body] of routes) {
      for (const authorization of [null, `vh_op_${'x'.repeat(32)}`, customer.token, `Bearer ${customer.token}`]) {
        const res = await call(method, url, body, authorization);
        expect(res.statusCode, `${method} ${url} ${authorization}`).toBe(401);
        expect(res.body).toBe('{"message":"Unauthenticated."}');
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="vinhistory-admin"/);
      }
    }
    expect((await t.repos.subscriptions.findActive(customer.accountId))?.planCode).toBe('standard');
    expect((await t.repos.tokens.findById(customer.tokenId))?.revokedAt).toBeNull();
    expect(await t.repos.operatorAudit.page({ limit: 10, target: customer.accountId })).toEqual([]);
  });

  it('lists accounts with status, plan and use, filters them, and pages with a cursor', async () => {
    const active = await createCustomer(t.repos, { email: email('list-active'), plan: 'professional' });
    const lapsed = await t.repos.accounts.create(email('list-lapsed'));
    const old = await t.repos.subscriptions.create({ accountId: lapsed.id, planCode: 'standard', billing: 'monthly', startedAt: new Date(Date.now() - 60 * DAY), endsAt: new Date(Date.now() - 30 * DAY) });
    expect(old.endsAt).not.toBeNull();
    const never = await t.repos.accounts.create(email('list-never'));

    const all = await call('GET', `/admin/v1/accounts?email=${encodeURIComponent(`-${suffix}@`)}&limit=100`);
    expect(all.statusCode).toBe(200);
    const byId = new Map(all.json().accounts.map((a: { id: string }) => [a.id, a]));
    expect(byId.get(active.accountId)).toMatchObject({ status: 'active', plan: 'professional', billing: 'monthly', usage: { quota: 5000 } });
    expect(byId.get(lapsed.id)).toMatchObject({ status: 'lapsed', plan: null, usage: null });
    expect(byId.get(never.id)).toMatchObject({ status: 'none', plan: null });

    const lapsedOnly = await call('GET', `/admin/v1/accounts?status=lapsed&email=list-lapsed-${suffix}`);
    expect(lapsedOnly.json().accounts.map((a: { id: string }) => a.id)).toEqual([lapsed.id]);
    const pro = await call('GET', `/admin/v1/accounts?plan=professional&email=${suffix}`);
    expect(pro.json().accounts.map((a: { id: string }) => a.id)).toContain(active.accountId);
    expect(pro.json().accounts.every((a: { plan: string }) => a.plan === 'professional')).toBe(true);
    // The LIKE wildcards of the operator's text match themselves.
    expect((await call('GET', '/admin/v1/accounts?email=%25')).json().accounts).toEqual([]);

    const first = await call('GET', `/admin/v1/accounts?email=list-&limit=2`);
    expect(first.json().accounts.length).toBe(2);
    expect(first.json().next_cursor).toEqual(expect.any(String));
    const second = await call('GET', `/admin/v1/accounts?email=list-&limit=2&cursor=${first.json().next_cursor}`);
    const seen = [...first.json().accounts, ...second.json().accounts].map((a: { id: string }) => a.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining([active.accountId, lapsed.id, never.id]));

    expect((await call('GET', '/admin/v1/accounts?limit=0')).statusCode).toBe(422);
    expect((await call('GET', '/admin/v1/accounts?limit=101')).statusCode).toBe(422);
    const badCursor = await call('GET', '/admin/v1/accounts?cursor=nonsense');
    expect(badCursor.statusCode).toBe(422);
    expect(badCursor.json().errors).toHaveProperty('cursor');
    expect((await call('GET', '/admin/v1/accounts?status=frozen')).statusCode).toBe(422);
  });

  it('shows one account by id or email with its tokens as hints only, and 404 for an unknown one', async () => {
    const customer = await createCustomer(t.repos, { email: email('show') });
    for (const key of [customer.accountId, email('show')]) {
      const res = await call('GET', `/admin/v1/accounts/${encodeURIComponent(key)}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: customer.accountId, status: 'active', provider: 'operator', plan: 'standard', tokens: [{ id: customer.tokenId, hint: customer.token.slice(0, 12) }] });
      expect(res.body).not.toContain(customer.token);
    }
    const missing = await call('GET', '/admin/v1/accounts/nobody@example.com');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toBe('No account with email nobody@example.com.');
  });

  it('changes an operator-arranged plan in place at once, nothing invoiced, and records who did it', async () => {
    const customer = await createCustomer(t.repos, { email: email('change') });
    const before = await t.repos.subscriptions.findActive(customer.accountId);
    const res = await call('POST', `/admin/v1/accounts/${customer.accountId}/subscription/change`, { plan: 'vip', billing: 'annual' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ result: 'changed', account: { plan: 'vip', billing: 'annual', started_at: before!.startedAt }, invoice: null });
    const after = await t.repos.subscriptions.findActive(customer.accountId);
    expect(after).toMatchObject({ id: before!.id, planCode: 'vip', billing: 'annual', startedAt: before!.startedAt });
    const [entry] = await t.repos.operatorAudit.page({ limit: 1, target: customer.accountId });
    expect(entry).toMatchObject({ actor: 'token:ops-desk', action: 'subscription.change', details: { from: 'standard', plan: 'vip', billing: 'annual', provider: 'operator' } });

    const again = await call('POST', `/admin/v1/accounts/${customer.accountId}/subscription/change`, { plan: 'vip', billing: 'annual' });
    expect(again.statusCode).toBe(409);
    const unknown = await call('POST', `/admin/v1/accounts/${customer.accountId}/subscription/change`, { plan: 'gold' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().errors).toHaveProperty('plan');
    expect((await call('POST', '/admin/v1/accounts/acct_0000000000000000/subscription/change', { plan: 'vip' })).statusCode).toBe(404);
  });

  it('starts a subscription for an account with none in force', async () => {
    const account = await t.repos.accounts.create(email('start'));
    const res = await call('POST', `/admin/v1/accounts/${account.id}/subscription/change`, { plan: 'professional' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ result: 'started', account: { status: 'active', plan: 'professional', billing: 'monthly' }, invoice: null });
  });

  it('upgrades a manually billed plan at once with the prorated upgrade invoice, and refuses to change its billing period', async () => {
    const { account, subscription } = await manualAccount('manual-up');
    const refused = await call('POST', `/admin/v1/accounts/${account.id}/subscription/change`, { plan: 'standard', billing: 'annual' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toMatch(/keeps its billing period/);

    const res = await call('POST', `/admin/v1/accounts/${account.id}/subscription/change`, { plan: 'professional' });
    expect(res.statusCode, res.body).toBe(200);
    const invoice = res.json().invoice;
    expect(invoice).toMatchObject({ kind: 'upgrade', plan: 'professional', status: 'open', provider: 'manual' });
    // (new term price - old) x time left / term: $100 over 29 of 30 days.
    expect(invoice.amount_cents).toBeGreaterThan(9000);
    expect(invoice.amount_cents).toBeLessThan(10000);
    expect((await t.repos.subscriptions.findActive(account.id))).toMatchObject({ id: subscription.id, planCode: 'professional' });

    // Paying it later changes nothing more: the plan is already the invoice's.
    const paid = await call('POST', `/admin/v1/invoices/${invoice.reference}/pay`);
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json().invoice.status).toBe('paid');
    expect((await t.repos.subscriptions.findActive(account.id))?.planCode).toBe('professional');
    const entries = await t.repos.operatorAudit.page({ limit: 5, target: invoice.id });
    expect(entries.map((e) => e.action)).toEqual(['invoice.pay']);
  });

  it('extends a subscription with an end, refuses one without, and ends a subscription now', async () => {
    const { account, paidThrough } = await manualAccount('extend');
    const res = await call('POST', `/admin/v1/accounts/${account.id}/subscription/extend`, { days: 10 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().ends_at).toBe(new Date(paidThrough.getTime() + 10 * DAY).toISOString());
    const sub = await t.repos.subscriptions.findActive(account.id);
    expect((await t.repos.billing.find(sub!.id))?.paidThrough).toBe(res.json().ends_at);
    expect((await call('POST', `/admin/v1/accounts/${account.id}/subscription/extend`, { until: new Date(Date.now() + DAY).toISOString() })).statusCode).toBe(409);
    expect((await call('POST', `/admin/v1/accounts/${account.id}/subscription/extend`, {})).statusCode).toBe(422);
    expect((await call('POST', `/admin/v1/accounts/${account.id}/subscription/extend`, { days: 0 })).statusCode).toBe(422);

    const open = await createCustomer(t.repos, { email: email('open-ended') });
    const noEnd = await call('POST', `/admin/v1/accounts/${open.accountId}/subscription/extend`, { days: 5 });
    expect(noEnd.statusCode).toBe(409);
    expect(noEnd.json().message).toMatch(/no end date/);

    const ended = await call('POST', `/admin/v1/accounts/${open.accountId}/subscription/end`);
    expect(ended.statusCode, ended.body).toBe(200);
    expect(ended.json()).toMatchObject({ ended: 1, ended_subscription_id: expect.stringMatching(/^sub_/) });
    expect(await t.repos.subscriptions.findActive(open.accountId)).toBeUndefined();
    expect((await call('POST', `/admin/v1/accounts/${open.accountId}/subscription/end`)).statusCode).toBe(409);
    // A search with the account's token now needs a plan.
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/search?vin=1FTFW1ET5DFC43210', headers: { authorization: open.token } })).statusCode).toBe(402);
  });

  it('lists tokens and revokes one by id: it stops working at once', async () => {
    const customer = await createCustomer(t.repos, { email: email('tokens') });
    const list = await call('GET', `/admin/v1/accounts/${customer.accountId}/tokens`);
    expect(list.statusCode).toBe(200);
    expect(list.json().tokens).toEqual([expect.objectContaining({ id: customer.tokenId, revoked_at: null, kind: 'live' })]);
    expect(list.body).not.toContain(customer.token);

    const revoked = await call('POST', `/admin/v1/tokens/${customer.tokenId}/revoke`);
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json().revoked_at).toEqual(expect.any(String));
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/usage', headers: { authorization: customer.token } })).statusCode).toBe(401);
    expect((await call('POST', `/admin/v1/tokens/${customer.tokenId}/revoke`)).statusCode).toBe(409);
    expect((await call('POST', '/admin/v1/tokens/tok_0000000000000000/revoke')).statusCode).toBe(404);
    expect((await call('POST', '/admin/v1/tokens/not-a-token/revoke')).statusCode).toBe(422);
    const [entry] = await t.repos.operatorAudit.page({ limit: 1, target: customer.tokenId });
    expect(entry).toMatchObject({ actor: 'token:ops-desk', action: 'token.revoke', details: { account: customer.accountId } });
    expect(JSON.stringify(entry)).not.toContain(customer.token);
  });

  it('lists invoices and voids an open one; a second void is refused; the audit log pages newest first', async () => {
    const { account } = await manualAccount('invoices');
    const upgrade = await call('POST', `/admin/v1/accounts/${account.id}/subscription/change`, { plan: 'vip' });
    const invoiceId = upgrade.json().invoice.id;
    const list = await call('GET', `/admin/v1/invoices?email=${encodeURIComponent(email('invoices'))}&status=open`);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ invoices: [expect.objectContaining({ id: invoiceId, email: email('invoices'), status: 'open' })], next_cursor: null });

    const voided = await call('POST', `/admin/v1/invoices/${invoiceId}/void`);
    expect(voided.statusCode).toBe(200);
    expect(voided.json().status).toBe('void');
    expect((await call('POST', `/admin/v1/invoices/${invoiceId}/void`)).statusCode).toBe(409);
    expect((await call('POST', '/admin/v1/invoices/inv_0000000000000000/pay')).statusCode).toBe(404);

    const page1 = await call('GET', '/admin/v1/audit?limit=1');
    expect(page1.statusCode).toBe(200);
    expect(page1.json().entries).toEqual([expect.objectContaining({ action: 'invoice.void', target: invoiceId, actor: 'token:ops-desk' })]);
    const page2 = await call('GET', `/admin/v1/audit?limit=1&cursor=${page1.json().next_cursor}`);
    expect(page2.json().entries).toEqual([expect.objectContaining({ action: 'subscription.change', target: account.id })]);
    expect((await call('GET', '/admin/v1/audit?cursor=zzz')).statusCode).toBe(422);
  });

  it("documents every route in the operators' OpenAPI document", async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/admin/v1/openapi.json' })).json();
    for (const path of ['/admin/v1/accounts', '/admin/v1/accounts/{account}', '/admin/v1/accounts/{account}/subscription/change', '/admin/v1/accounts/{account}/tokens', '/admin/v1/tokens/{token}/revoke', '/admin/v1/invoices', '/admin/v1/invoices/{invoice}/pay', '/admin/v1/audit']) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
    expect(JSON.stringify(doc)).not.toContain('/api/v1/search');
  });
});
