import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { STRIPE_RENEWAL_GRACE_MS } from '../../src/billing/stripe-provider.ts';
import { DIALECTS } from '../support/databases.ts';
import { PasswordHasher } from '../../src/accounts/password-hasher.ts';
import { createAccountTestApp, randomEmail, TEST_SCRYPT, WebClient, type AccountTestApp } from '../support/customer-app.ts';
import { paidInvoice, signedEvent, STRIPE_ENV, StripeStub, stripeSubscription } from './stripe-fixtures.ts';

const DAY = 24 * 60 * 60 * 1000;

describe.each(DIALECTS)('Stripe: checkout, webhooks and changes (%s)', (dialect) => {
  let t: AccountTestApp;
  const stub = new StripeStub();
  beforeAll(async () => {
    await stub.start();
    t = await createAccountTestApp(dialect, {
      env: STRIPE_ENV,
      overrides: { stripeApiBase: { host: '127.0.0.1', port: stub.port, protocol: 'http' }, stripeCheckoutOrigin: stub.origin },
    });
  });
  afterAll(async () => {
    await t?.close();
    await stub.stop();
  });

  const deliver = (event: { payload: string; headers: Record<string, string> }) =>
    t.app.inject({ method: 'POST', url: '/webhooks/stripe', headers: event.headers, payload: event.payload });

  /** A Stripe subscription started for a new account through invoice.paid, as after a checkout. */
  async function subscribedThroughStripe(plan = 'standard') {
    const account = await t.repos.accounts.create(randomEmail());
    const stripeId = `sub_${Math.random().toString(36).slice(2, 12)}`;
    const start = new Date(Date.now() - 60_000);
    const end = new Date(start.getTime() + 30 * DAY);
    const res = await deliver(
      signedEvent('invoice.paid', paidInvoice({ subscription: stripeId, billingReason: 'subscription_create', periodStart: start, periodEnd: end, amount: 5000, metadata: { accountId: account.id, plan, billing: 'monthly' } })),
    );
    expect(res.json()).toEqual({ received: true, outcome: 'applied' });
    const subscription = (await t.repos.subscriptions.findActive(account.id))!;
    return { account, stripeId, start, end, subscription };
  }

  test('the signature is checked against the raw body: missing, wrong secret or altered bodies are refused', async () => {
    const event = signedEvent('invoice.paid', { id: 'in_x', object: 'invoice' });
    expect((await t.app.inject({ method: 'POST', url: '/webhooks/stripe', headers: { 'content-type': 'application/json' }, payload: event.payload })).statusCode).toBe(400);
    const wrongSecret = signedEvent('invoice.paid', { id: 'in_x', object: 'invoice' }, { secret: 'whsec_someone_else' });
    expect((await deliver(wrongSecret)).statusCode).toBe(400);
    const altered = await t.app.inject({ method: 'POST', url: '/webhooks/stripe', headers: event.headers, payload: event.payload.replace('in_x', 'in_y') });
    expect(altered.statusCode).toBe(400);
    // An event signed long ago (a replay) is refused by the timestamp tolerance.
    const old = signedEvent('invoice.paid', { id: 'in_x', object: 'invoice' });
    const stale = old.headers['stripe-signature'].replace(/t=\d+/, `t=${Math.floor(Date.now() / 1000) - 3600}`);
    expect((await t.app.inject({ method: 'POST', url: '/webhooks/stripe', headers: { ...old.headers, 'stripe-signature': stale }, payload: old.payload })).statusCode).toBe(400);
    // Events of no interest are acknowledged, so that Stripe does not retry them.
    expect((await deliver(event)).json()).toEqual({ received: true, outcome: 'ignored' });
  });

  test('invoice.paid (first invoice) starts the subscription on Stripe’s billing anchor, once however often it is delivered', async () => {
    const account = await t.repos.accounts.create(randomEmail());
    const start = new Date(Date.now() - 5_000);
    const end = new Date(start.getTime() + 365 * DAY);
    const event = signedEvent(
      'invoice.paid',
      paidInvoice({ subscription: 'sub_first', customer: 'cus_first', billingReason: 'subscription_create', periodStart: start, periodEnd: end, amount: 144000, metadata: { accountId: account.id, plan: 'professional', billing: 'annual' } }),
    );
    const outcomes = await Promise.all([deliver(event), deliver(event)]);
    expect(outcomes.map((res) => res.statusCode)).toEqual([200, 200]);
    expect(outcomes.map((res) => res.json().outcome).sort()).toEqual(['applied', 'duplicate']);
    expect((await deliver(event)).json().outcome).toBe('duplicate');

    const subscriptions = await t.db.kysely.selectFrom('subscriptions').selectAll().where('account_id', '=', account.id).execute();
    expect(subscriptions).toHaveLength(1);
    const paidThrough = new Date(Math.floor(end.getTime() / 1000) * 1000);
    expect(subscriptions[0]).toMatchObject({
      plan_code: 'professional',
      billing: 'annual',
      status: 'active',
      started_at: new Date(Math.floor(start.getTime() / 1000) * 1000).toISOString(),
      ends_at: new Date(paidThrough.getTime() + STRIPE_RENEWAL_GRACE_MS).toISOString(),
    });
    expect(await t.repos.billing.find(subscriptions[0]!.id)).toMatchObject({ provider: 'stripe', externalId: 'sub_first', paidThrough: paidThrough.toISOString() });
    expect(await t.repos.billing.findStripeCustomer(account.id)).toBe('cus_first');
    const invoices = await t.repos.invoices.listForAccount(account.id);
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({ provider: 'stripe', status: 'paid', kind: 'subscribe', amountCents: 144000, hostedUrl: expect.stringMatching(/^https:\/\/invoice\.stripe\.test\//) });
  });

  test('renewal extends the paid term and applies a scheduled downgrade; cancellation and deletion end it', async () => {
    const { account, stripeId, end, subscription } = await subscribedThroughStripe('professional');
    await t.repos.billing.setScheduledPlan(subscription.id, 'standard');
    const next = new Date(end.getTime() + 30 * DAY);
    expect((await deliver(signedEvent('invoice.paid', paidInvoice({ subscription: stripeId, billingReason: 'subscription_cycle', periodStart: end, periodEnd: next, amount: 5000 })))).json().outcome).toBe('applied');
    const renewed = (await t.repos.subscriptions.findById(subscription.id))!;
    const nextSecond = new Date(Math.floor(next.getTime() / 1000) * 1000);
    expect(renewed).toMatchObject({ planCode: 'standard', startedAt: subscription.startedAt, endsAt: new Date(nextSecond.getTime() + STRIPE_RENEWAL_GRACE_MS).toISOString() });
    expect(await t.repos.billing.find(subscription.id)).toMatchObject({ scheduledPlanCode: null, paidThrough: nextSecond.toISOString() });

    // Cancelled on Stripe's side (customer portal): access runs to the paid end, no grace.
    await deliver(signedEvent('customer.subscription.updated', stripeSubscription({ id: stripeId, cancelAtPeriodEnd: true })));
    expect((await t.repos.subscriptions.findById(subscription.id))!.endsAt).toBe(nextSecond.toISOString());
    expect(await t.repos.billing.find(subscription.id)).toMatchObject({ cancelAtPeriodEnd: true });
    await deliver(signedEvent('customer.subscription.updated', stripeSubscription({ id: stripeId, cancelAtPeriodEnd: false })));
    expect((await t.repos.subscriptions.findById(subscription.id))!.endsAt).toBe(new Date(nextSecond.getTime() + STRIPE_RENEWAL_GRACE_MS).toISOString());

    // Deleted: the tokens answer 402 from the next request.
    const { token } = await t.repos.tokens.create(account.id, 'api');
    expect((await t.repos.tokens.authenticate(token))?.subscription).not.toBeNull();
    await deliver(signedEvent('customer.subscription.deleted', stripeSubscription({ id: stripeId, status: 'canceled', endedAt: new Date(Date.now() - 1000) })));
    expect((await t.repos.subscriptions.findById(subscription.id))!.status).toBe('cancelled');
    const refused = await t.app.inject({ url: '/api/v1/search?vin=4JGBF7BE5AA585531', headers: { authorization: token } });
    expect(refused.statusCode).toBe(402);
  });

  test('subscription events apply in Stripe’s order, whatever their arrival order; an older one changes nothing', async () => {
    const { stripeId, subscription } = await subscribedThroughStripe('professional');
    const paidThrough = (await t.repos.billing.find(subscription.id))!.paidThrough!;
    const withGrace = new Date(Date.parse(paidThrough) + STRIPE_RENEWAL_GRACE_MS).toISOString();
    const cancelled = signedEvent('customer.subscription.updated', stripeSubscription({ id: stripeId, cancelAtPeriodEnd: true }), { created: new Date(Date.now() - 20_000) });
    const resumed = signedEvent('customer.subscription.updated', stripeSubscription({ id: stripeId, cancelAtPeriodEnd: false }), { created: new Date(Date.now() - 10_000) });

    // In order: cancelled, then resumed: it renews.
    expect((await deliver(cancelled)).json().outcome).toBe('applied');
    expect((await deliver(resumed)).json().outcome).toBe('applied');
    expect(await t.repos.billing.find(subscription.id)).toMatchObject({ cancelAtPeriodEnd: false });
    expect((await t.repos.subscriptions.findById(subscription.id))!.endsAt).toBe(withGrace);

    // The older cancellation, sent again later with a new id, is older than what was applied.
    const lateCancel = signedEvent('customer.subscription.updated', stripeSubscription({ id: stripeId, cancelAtPeriodEnd: true }), { created: new Date(Date.now() - 20_000) });
    expect((await deliver(lateCancel)).json().outcome).toBe('ignored');
    // A redelivery of an event already applied changes nothing either.
    expect((await deliver(cancelled)).json().outcome).toBe('duplicate');
    expect(await t.repos.billing.find(subscription.id)).toMatchObject({ cancelAtPeriodEnd: false });
    expect((await t.repos.subscriptions.findById(subscription.id))).toMatchObject({ status: 'active', endsAt: withGrace });
  });

  test('resumed arriving before the older cancellation leaves the subscription renewing', async () => {
    const { stripeId, subscription } = await subscribedThroughStripe('professional');
    const paidThrough = (await t.repos.billing.find(subscription.id))!.paidThrough!;
    const withGrace = new Date(Date.parse(paidThrough) + STRIPE_RENEWAL_GRACE_MS).toISOString();
    const cancelled = signedEvent('customer.subscription.updated', stripeSubscription({ id: stripeId, cancelAtPeriodEnd: true }), { created: new Date(Date.now() - 20_000) });
    const resumed = signedEvent('customer.subscription.updated', stripeSubscription({ id: stripeId, cancelAtPeriodEnd: false }), { created: new Date(Date.now() - 10_000) });

    expect((await deliver(resumed)).json().outcome).toBe('applied');
    expect((await deliver(cancelled)).json().outcome).toBe('ignored');
    expect(await t.repos.billing.find(subscription.id)).toMatchObject({ cancelAtPeriodEnd: false });
    expect((await t.repos.subscriptions.findById(subscription.id))).toMatchObject({ status: 'active', endsAt: withGrace });
    // Replayed later, the resume is a duplicate and the cancellation still older: nothing changes.
    expect((await deliver(resumed)).json().outcome).toBe('duplicate');
    expect((await deliver(cancelled)).json().outcome).toBe('duplicate');
    expect(await t.repos.billing.find(subscription.id)).toMatchObject({ cancelAtPeriodEnd: false });
  });

  /** The first invoice.paid and the deletion of one new Stripe subscription (VIP, monthly). */
  async function paidThenDeleted() {
    const account = await t.repos.accounts.create(randomEmail());
    const stripeId = `sub_${Math.random().toString(36).slice(2, 12)}`;
    const start = new Date(Date.now() - 60_000);
    const paid = signedEvent(
      'invoice.paid',
      paidInvoice({ subscription: stripeId, billingReason: 'subscription_create', periodStart: start, periodEnd: new Date(start.getTime() + 30 * DAY), amount: 40000, metadata: { accountId: account.id, plan: 'vip', billing: 'monthly' } }),
      { created: new Date(Date.now() - 30_000) },
    );
    const deleted = signedEvent('customer.subscription.deleted', stripeSubscription({ id: stripeId, status: 'canceled', endedAt: new Date(Date.now() - 5_000) }), { created: new Date(Date.now() - 5_000) });
    return { account, stripeId, paid, deleted };
  }

  test('deleted after the first invoice.paid ends the subscription; replays change nothing', async () => {
    const { account, stripeId, paid, deleted } = await paidThenDeleted();
    expect((await deliver(paid)).json().outcome).toBe('applied');
    expect((await deliver(deleted)).json().outcome).toBe('applied');
    expect(await t.repos.subscriptions.findActive(account.id)).toBeUndefined();
    // An update sent before the deletion, arriving after it, does not bring it back.
    const lateUpdate = signedEvent('customer.subscription.updated', stripeSubscription({ id: stripeId, cancelAtPeriodEnd: false }), { created: new Date(Date.now() - 20_000) });
    expect((await deliver(lateUpdate)).json().outcome).toBe('ignored');
    expect((await deliver(paid)).json().outcome).toBe('duplicate');
    expect(await t.repos.subscriptions.findActive(account.id)).toBeUndefined();
    expect(await t.db.kysely.selectFrom('subscriptions').select('status').where('account_id', '=', account.id).execute()).toEqual([{ status: 'cancelled' }]);
  });

  test('deleted arriving before the first invoice.paid: the payment is listed, no active plan is left', async () => {
    const { account, paid, deleted } = await paidThenDeleted();
    expect((await deliver(deleted)).json().outcome).toBe('applied');
    expect((await deliver(paid)).json().outcome).toBe('applied');
    expect(await t.repos.subscriptions.findActive(account.id)).toBeUndefined();
    const rows = await t.db.kysely.selectFrom('subscriptions').select(['status', 'plan_code']).where('account_id', '=', account.id).execute();
    expect(rows).toEqual([{ status: 'cancelled', plan_code: 'vip' }]);
    expect(await t.repos.invoices.listForAccount(account.id)).toHaveLength(1);
    // Replayed later, neither event changes anything.
    expect((await deliver(deleted)).json().outcome).toBe('duplicate');
    expect((await deliver(paid)).json().outcome).toBe('duplicate');
    expect(await t.repos.subscriptions.findActive(account.id)).toBeUndefined();
    expect(await t.repos.invoices.listForAccount(account.id)).toHaveLength(1);
  });

  test('a paid invoice naming no account of ours is acknowledged and ignored', async () => {
    const res = await deliver(
      signedEvent('invoice.paid', paidInvoice({ subscription: 'sub_foreign', billingReason: 'subscription_create', periodStart: new Date(), periodEnd: new Date(Date.now() + DAY), amount: 100, metadata: { accountId: 'acct_unknown', plan: 'standard', billing: 'monthly' } })),
    );
    expect(res.json()).toEqual({ received: true, outcome: 'ignored' });
    expect(await t.repos.billing.findByExternalId('sub_foreign')).toBeUndefined();
  });

  test('checkout: the plan page sends the customer to a Stripe Checkout Session of the chosen plan and period', async () => {
    const browser = new WebClient(t.app);
    const email = randomEmail();
    await browser.signUp(email);
    const page = await browser.get('/account/billing?plan=vip&billing=annual');
    expect(page.body).toContain('Continue to payment');
    expect(String(page.headers['content-security-policy'])).toContain(`form-action 'self' ${stub.origin}`);
    const res = await browser.post('/account/billing/choose', { plan: 'vip', billing: 'annual' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toMatch(new RegExp(`^${stub.origin}/pay/cs_test_`));

    const account = (await t.repos.accounts.findByEmail(email))!;
    const session = stub.calls('POST', '/v1/checkout/sessions').find((form) => form.get('client_reference_id') === account.id)!;
    expect(Object.fromEntries(session)).toMatchObject({
      mode: 'subscription',
      customer_email: email,
      'line_items[0][quantity]': '1',
      'line_items[0][price_data][currency]': 'usd',
      'line_items[0][price_data][unit_amount]': '384000',
      'line_items[0][price_data][recurring][interval]': 'year',
      'line_items[0][price_data][product]': 'vinhistory_plan_vip',
      'metadata[vinhistory_account_id]': account.id,
      'subscription_data[metadata][vinhistory_plan]': 'vip',
      'subscription_data[metadata][vinhistory_billing]': 'annual',
      success_url: 'https://vinhistory.test/account/billing?checkout=success',
      cancel_url: 'https://vinhistory.test/account/billing?checkout=cancelled',
    });
    // The product was made once on Stripe and is reused for the next checkout.
    await browser.get('/account/billing?plan=vip&billing=annual');
    await browser.post('/account/billing/choose', { plan: 'vip', billing: 'annual' });
    expect(stub.calls('POST', '/v1/products').filter((form) => form.get('id') === 'vinhistory_plan_vip')).toHaveLength(1);
    // Nothing is ours until the webhook says it is paid: the return URL alone starts nothing.
    await browser.get('/account/billing?checkout=success');
    expect(await t.repos.subscriptions.findActive(account.id)).toBeUndefined();
  });

  test('upgrade, downgrade and cancel are made on Stripe, then here', async () => {
    const { account, stripeId, subscription } = await subscribedThroughStripe('standard');
    const browser = new WebClient(t.app);
    const email = account.email;
    // An account whose Stripe subscription exists; it logs in with a password of its own.
    await t.repos.passwords.set(account.id, await new PasswordHasher(TEST_SCRYPT).hash('correct horse battery'));
    await browser.logIn(email);
    await browser.get('/account/billing');

    const up = await browser.post('/account/billing/choose', { plan: 'professional', billing: 'monthly' });
    expect(up.headers.location).toBe('/account/billing?done=upgraded');
    const update = stub.calls('POST', `/v1/subscriptions/${stripeId}`).at(-1)!;
    expect(Object.fromEntries(update)).toMatchObject({
      proration_behavior: 'always_invoice',
      payment_behavior: 'error_if_incomplete',
      'items[0][id]': 'si_test_item',
      'items[0][price_data][unit_amount]': '15000',
      'items[0][price_data][product]': 'vinhistory_plan_professional',
    });
    expect((await t.repos.subscriptions.findById(subscription.id))).toMatchObject({ planCode: 'professional', startedAt: subscription.startedAt });

    await browser.get('/account/billing');
    const down = await browser.post('/account/billing/choose', { plan: 'standard', billing: 'monthly' });
    expect(down.headers.location).toBe('/account/billing?done=scheduled');
    expect(Object.fromEntries(stub.calls('POST', `/v1/subscriptions/${stripeId}`).at(-1)!)).toMatchObject({ proration_behavior: 'none', 'items[0][price_data][unit_amount]': '5000' });
    expect(await t.repos.billing.find(subscription.id)).toMatchObject({ scheduledPlanCode: 'standard' });
    expect((await t.repos.subscriptions.findById(subscription.id))!.planCode).toBe('professional');
    expect((await browser.get('/account/billing?done=scheduled')).body).toContain('Your plan changes to <strong>Standard</strong>');

    const cancel = await browser.post('/account/billing/cancel');
    expect(cancel.headers.location).toBe('/account/billing?done=cancelled');
    expect(Object.fromEntries(stub.calls('POST', `/v1/subscriptions/${stripeId}`).at(-1)!)).toEqual({ cancel_at_period_end: 'true' });
    const billingRow = (await t.repos.billing.find(subscription.id))!;
    expect((await t.repos.subscriptions.findById(subscription.id))!.endsAt).toBe(billingRow.paidThrough);
  });
});

describe('without Stripe configured', () => {
  test('there is no webhook endpoint', async () => {
    const t = await createAccountTestApp('sqlite');
    try {
      const res = await t.app.inject({ method: 'POST', url: '/webhooks/stripe', headers: { 'content-type': 'application/json' }, payload: '{}' });
      expect(res.statusCode).toBe(404);
    } finally {
      await t.close();
    }
  });
});
