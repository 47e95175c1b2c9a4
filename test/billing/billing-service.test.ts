import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Account } from '../../src/domain/account.ts';
import { addMonthsClamped } from '../../src/limits/billing-period.ts';
import { payManualInvoice, voidManualInvoice } from '../../src/billing/manual-invoices.ts';
import { PaymentError } from '../../src/billing/payment-provider.ts';
import { BillingService } from '../../src/billing/billing-service.ts';
import { ManualPaymentProvider } from '../../src/billing/manual-provider.ts';
import { UsageService } from '../../src/limits/usage-service.ts';
import { DIALECTS } from '../support/databases.ts';
import { principalAt, validVin } from '../support/fixtures.ts';
import { createAccountTestApp, randomEmail, WebClient, type AccountTestApp } from '../support/customer-app.ts';

const DAY = 24 * 60 * 60 * 1000;
const T0 = new Date('2026-03-10T12:00:00.000Z');
const at = (days: number) => new Date(T0.getTime() + days * DAY);

async function rejection(promise: Promise<unknown>): Promise<PaymentError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PaymentError) return error;
    throw error;
  }
  throw new Error('expected a PaymentError');
}

describe.each(DIALECTS)('billing with manual invoices (%s)', (dialect) => {
  let t: AccountTestApp;
  let billing: BillingService;
  let usage: UsageService;
  beforeAll(async () => {
    t = await createAccountTestApp(dialect);
    const manual = new ManualPaymentProvider(t.db);
    billing = new BillingService({ db: t.db, repos: t.repos, checkout: manual, providers: { manual } });
    usage = new UsageService(t.repos);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** An account subscribed to `plan` at T0 through a paid manual invoice. */
  async function subscribed(plan: string, period: 'monthly' | 'annual' = 'monthly'): Promise<Account> {
    const account = await t.repos.accounts.create(randomEmail());
    const result = await billing.choose(account, plan, period, T0);
    if (result.kind !== 'invoice') throw new Error('expected an invoice');
    await payManualInvoice(t.db, result.invoice.id, T0);
    return account;
  }

  async function count(account: Account, searches: number, now: Date): Promise<void> {
    const subscription = await t.repos.subscriptions.findActive(account.id, now);
    const token = (await t.repos.tokens.listForAccount(account.id))[0] ?? (await t.repos.tokens.create(account.id, 'x')).row;
    const plan = await t.repos.plans.findByCode(subscription!.planCode);
    const start = (await usage.forAccount(account.id, now))!.periodStart;
    for (let i = 0; i < searches; i++) {
      await t.repos.searchCommit.commit({ principal: await principalAt(t.repos, token.id, now), accountId: account.id, tokenId: token.id, vin: validVin(), now, periodStart: start.toISOString(), quota: plan!.monthlyQuota, lots: [], idempotencyKey: null });
    }
  }

  test('buying from the page: an invoice to pay by bank transfer; the operator marks it paid and the plan starts', async () => {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    await browser.signUp(email);
    const choice = await browser.get('/account/billing?plan=professional&billing=annual');
    expect(choice.body).toContain('Subscribe to Professional');
    expect(choice.body).toContain('$1,440');
    const bought = await browser.post('/account/billing/choose', { plan: 'professional', billing: 'annual' });
    expect(bought.statusCode).toBe(303);
    const invoicePath = bought.headers.location as string;
    expect(invoicePath).toMatch(/^\/account\/billing\/invoices\/inv_[0-9a-z]{16}$/);
    const page = await browser.get(invoicePath);
    expect(page.body).toContain('Awaiting payment');
    expect(page.body).toContain('$1,440.00');
    const account = (await t.repos.accounts.findByEmail(email))!;
    const [invoice] = await t.repos.invoices.listForAccount(account.id);
    expect(invoice).toMatchObject({ kind: 'subscribe', planCode: 'professional', billing: 'annual', amountCents: 144000, status: 'open', provider: 'manual' });
    expect(await t.repos.subscriptions.findActive(account.id)).toBeUndefined();

    const paidAt = new Date();
    const settlement = await payManualInvoice(t.db, invoice!.reference.toLowerCase(), paidAt);
    expect(settlement.summary).toMatch(/^subscription sub_\w+ started: professional, annual, paid through /);
    const subscription = await t.repos.subscriptions.findActive(account.id);
    expect(subscription).toMatchObject({ planCode: 'professional', billing: 'annual', startedAt: paidAt.toISOString(), endsAt: addMonthsClamped(paidAt, 12).toISOString() });
    expect(await t.repos.billing.find(subscription!.id)).toMatchObject({ provider: 'manual', paidThrough: addMonthsClamped(paidAt, 12).toISOString(), cancelAtPeriodEnd: false });
    expect((await browser.get(invoicePath)).body).toContain('Paid');
    expect((await browser.get('/account/billing')).body).toContain('Paid through');

    expect((await rejection(payManualInvoice(t.db, invoice!.id))).message).toMatch(/already paid/);
    expect((await rejection(payManualInvoice(t.db, 'inv_doesnotexist0000'))).message).toMatch(/No invoice/);
  });

  test('choosing again replaces the unpaid choice; an unpaid invoice can be cancelled by its customer', async () => {
    const account = await t.repos.accounts.create(randomEmail());
    const first = await billing.choose(account, 'standard', 'monthly', T0);
    const again = await billing.choose(account, 'standard', 'monthly', T0);
    expect(again.kind === 'invoice' && first.kind === 'invoice' && again.invoice.id === first.invoice.id).toBe(true);
    const other = await billing.choose(account, 'vip', 'monthly', T0);
    const invoices = await t.repos.invoices.listForAccount(account.id);
    expect(invoices.map((i) => [i.planCode, i.status]).sort()).toEqual([['standard', 'void'], ['vip', 'open']]);
    // A void invoice cannot start anything.
    expect((await rejection(payManualInvoice(t.db, first.kind === 'invoice' ? first.invoice.id : ''))).message).toMatch(/void/);
    await billing.voidInvoice(account, other.kind === 'invoice' ? other.invoice.id : '', T0);
    expect((await t.repos.invoices.listForAccount(account.id)).every((i) => i.status === 'void')).toBe(true);
    expect((await rejection(billing.voidInvoice(account, other.kind === 'invoice' ? other.invoice.id : '', T0))).message).toMatch(/Only an unpaid invoice/);
  });

  test('upgrade: charged pro rata for the rest of the term, applied at once; the anchor and the period count carry over', async () => {
    const account = await subscribed('standard');
    await count(account, 3, at(15));
    const before = (await t.repos.subscriptions.findActive(account.id, at(15)))!;
    const result = await billing.choose(account, 'professional', 'monthly', at(15));
    expect(result.kind).toBe('invoice');
    const invoice = result.kind === 'invoice' ? result.invoice : null;
    // Term Mar 10 - Apr 10 (31 days), 16 days left: (150 - 50) x 16/31.
    expect(invoice).toMatchObject({ kind: 'upgrade', planCode: 'professional', subscriptionId: before.id, amountCents: Math.round((10000 * 16) / 31) });
    // Not paid yet: still Standard.
    expect((await usage.forAccount(account.id, at(15)))!.quota).toBe(1000);
    await payManualInvoice(t.db, invoice!.id, at(15));
    const after = (await t.repos.subscriptions.findActive(account.id, at(15)))!;
    expect(after).toMatchObject({ id: before.id, planCode: 'professional', startedAt: before.startedAt, endsAt: before.endsAt });
    expect(await usage.forAccount(account.id, at(15))).toMatchObject({ quota: 5000, used: 3, remaining: 4997, ratePerSecond: 5, periodStart: T0 });
  });

  test('downgrade: nothing changes until the renewal, which is invoiced and applied on the new plan', async () => {
    const account = await subscribed('professional');
    const scheduled = await billing.choose(account, 'standard', 'monthly', at(10));
    expect(scheduled).toMatchObject({ kind: 'scheduled', at: addMonthsClamped(T0, 1) });
    expect(await usage.forAccount(account.id, at(10))).toMatchObject({ quota: 5000 });
    expect((await billing.overview(account.id, at(10))).scheduledPlan?.code).toBe('standard');

    const renewal = await billing.renew(account, at(25));
    expect(renewal).toMatchObject({ kind: 'renew', planCode: 'standard', amountCents: 5000, status: 'open' });
    expect((await billing.renew(account, at(26))).id).toBe(renewal.id);
    await payManualInvoice(t.db, renewal.id, at(27));
    const subscription = (await t.repos.subscriptions.findActive(account.id, at(27)))!;
    expect(subscription).toMatchObject({ planCode: 'standard', startedAt: T0.toISOString(), endsAt: addMonthsClamped(T0, 2).toISOString() });
    expect(await t.repos.billing.find(subscription.id)).toMatchObject({ scheduledPlanCode: null, paidThrough: addMonthsClamped(T0, 2).toISOString() });

    // A scheduled downgrade is withdrawn by choosing the current plan again.
    const other = await subscribed('vip');
    await billing.choose(other, 'professional', 'monthly', at(3));
    expect(await billing.choose(other, 'vip', 'monthly', at(4))).toMatchObject({ kind: 'unscheduled' });
    expect((await billing.overview(other.id, at(4))).scheduledPlan).toBeNull();
  });

  test('cancel: the plan runs to the end of the paid term, can be resumed until then, then tokens answer 402', async () => {
    const account = await subscribed('standard');
    const { token } = await t.repos.tokens.create(account.id, 'api');
    const end = await billing.cancel(account, at(5));
    expect(end).toEqual(addMonthsClamped(T0, 1));
    const overview = await billing.overview(account.id, at(5));
    expect(overview).toMatchObject({ cancelAtPeriodEnd: true, endsAt: end, can: { change: false, renew: false, resume: true } });
    expect((await rejection(billing.renew(account, at(6)))).message).toMatch(/Resume it first/);
    expect((await rejection(billing.choose(account, 'vip', 'monthly', at(6)))).message).toMatch(/Resume it first/);
    await billing.resume(account, at(7));
    expect((await billing.overview(account.id, at(7))).cancelAtPeriodEnd).toBe(false);
    await billing.cancel(account, at(8));
    expect((await t.repos.tokens.authenticate(token, at(30)))?.subscription).not.toBeNull();
    expect((await t.repos.tokens.authenticate(token, at(32)))?.subscription).toBeNull();
  });

  test('a subscription arranged by the operator: cancel runs to the end of the monthly period; no self-service change', async () => {
    const account = await t.repos.accounts.create(randomEmail());
    await t.repos.subscriptions.create({ accountId: account.id, planCode: 'standard', billing: 'monthly', startedAt: T0 });
    expect((await rejection(billing.choose(account, 'vip', 'monthly', at(3)))).message).toMatch(/arranged with our team/);
    expect((await billing.overview(account.id, at(3))).can).toMatchObject({ change: false, cancel: true, renew: false });
    expect(await billing.cancel(account, at(40))).toEqual(addMonthsClamped(T0, 2));
    expect((await t.repos.subscriptions.findActive(account.id, at(40)))!.endsAt).toBe(addMonthsClamped(T0, 2).toISOString());
    await billing.resume(account, at(41));
    expect((await t.repos.subscriptions.findActive(account.id, at(400)))!.endsAt).toBeNull();
  });

  test('refusals: another billing period, a custom plan, a second first subscription, a stale upgrade', async () => {
    const account = await subscribed('standard');
    expect((await rejection(billing.choose(account, 'vip', 'annual', at(2)))).message).toMatch(/keeps its billing period/);
    await t.repos.plans.create({ code: `acme-${Math.random().toString(36).slice(2, 8)}`, name: 'Acme', monthlyQuota: 10, ratePerSecond: 1, monthlyPriceCents: 1 });
    const custom = (await t.repos.plans.list()).find((plan) => plan.isPublic === false)!;
    expect((await rejection(billing.choose(account, custom.code, 'monthly', at(2)))).message).toMatch(/not on the price list/);
    expect((await rejection(billing.choose(account, 'standard', 'monthly', at(2)))).message).toMatch(/already on the Standard plan/);

    // A subscribe invoice paid while another subscription is in force would start a second one.
    const stray = await t.repos.invoices.create({ accountId: account.id, provider: 'manual', kind: 'subscribe', planCode: 'vip', billing: 'monthly', amountCents: 40000, currency: 'usd', description: 'x' });
    expect((await rejection(payManualInvoice(t.db, stray.id, at(3)))).message).toMatch(/already has a subscription in force/);
    expect((await t.repos.invoices.findById(stray.id))!.status).toBe('open');
    await voidManualInvoice(t.db, stray.reference, at(3));

    // An upgrade invoice paid after its term has lapsed applies to nothing.
    const upgrade = await billing.choose(account, 'vip', 'monthly', at(20));
    expect((await rejection(payManualInvoice(t.db, upgrade.kind === 'invoice' ? upgrade.invoice.id : '', at(45)))).message).toMatch(/no longer in force/);
    // A renewal paid after the lapse starts a new subscription from the payment.
    const renewal = await t.repos.invoices.create({
      accountId: account.id, provider: 'manual', kind: 'renew', planCode: 'standard', billing: 'monthly', amountCents: 5000, currency: 'usd', description: 'x',
      subscriptionId: (await t.repos.subscriptions.findLatest(account.id))!.id,
    });
    const late = await payManualInvoice(t.db, renewal.id, at(50));
    expect(late.summary).toMatch(/had lapsed/);
    expect((await t.repos.subscriptions.findActive(account.id, at(50)))).toMatchObject({ startedAt: at(50).toISOString(), endsAt: addMonthsClamped(at(50), 1).toISOString() });
  });

  test('the billing page shows the rule refusals as a message, not an error page', async () => {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    await browser.signUp(email);
    const account = (await t.repos.accounts.findByEmail(email))!;
    await t.repos.subscriptions.create({ accountId: account.id, planCode: 'standard', billing: 'monthly', startedAt: new Date(Date.now() - DAY) });
    await browser.get('/account/billing');
    const refused = await browser.post('/account/billing/choose', { plan: 'vip', billing: 'monthly' });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('arranged with our team');
    const bad = await browser.post('/account/billing/choose', { plan: 'vip', billing: 'weekly' });
    expect(bad.statusCode).toBe(422);
    const cancelled = await browser.post('/account/billing/cancel');
    expect(cancelled.statusCode).toBe(303);
    expect((await browser.get(cancelled.headers.location as string)).body).toContain('Your plan is cancelled');
  });
});
