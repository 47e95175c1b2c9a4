import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STRIPE_ENV, StripeStub } from '../billing/stripe-fixtures.ts';
import { makeDataDir, openCliDatabase, runCliInProcess } from './run-cli.ts';

const DAY = 24 * 60 * 60 * 1000;

/**
 * `subscriptions cancel` on subscriptions that a payment provider bills: the operator's cancel
 * goes through the billing rules, so Stripe stops charging and the customer is not billed for a
 * plan that no longer answers. The CLI's main runs in-process (run-cli.ts), beside the Stripe stub.
 */
describe('vinhistory subscriptions cancel, billed subscriptions', () => {
  const data = makeDataDir();
  const stub = new StripeStub();
  let env: Record<string, string>;

  beforeAll(async () => {
    await stub.start();
    env = { ...STRIPE_ENV, STRIPE_API_URL: stub.origin };
    // Any command brings the schema up to date.
    expect((await runCliInProcess(['plans', 'list'], { dataDir: data.dir })).code).toBe(0);
  });
  afterAll(async () => {
    await stub.stop();
    data.remove();
  });

  /** An account with a subscription in force, paid through 30 days, billed by `provider`. */
  async function billedAccount(email: string, provider: 'stripe' | 'manual', externalId: string | null) {
    const { db, repos } = await openCliDatabase(data.dir);
    try {
      const account = await repos.accounts.create(email);
      const startedAt = new Date(Date.now() - DAY);
      const paidThrough = new Date(startedAt.getTime() + 30 * DAY);
      const subscription = await repos.subscriptions.create({ accountId: account.id, planCode: 'standard', billing: 'monthly', startedAt, endsAt: paidThrough });
      await repos.billing.create({ subscriptionId: subscription.id, provider, externalId, paidThrough });
      return { account, subscription };
    } finally {
      await db.close();
    }
  }

  it('cancels a Stripe-billed subscription on Stripe, then ends it here now', async () => {
    const { account } = await billedAccount('stripe-buyer@example.com', 'stripe', 'sub_stripe_cli_cancel');

    const cancelled = await runCliInProcess(['subscriptions', 'cancel', '--email', 'stripe-buyer@example.com'], { dataDir: data.dir, env });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(/^cancelled the standard subscription \(sub_[0-9a-z]{16}\) of stripe-buyer@example\.com as of \d{4}-\d{2}-\d{2}T/);
    // Stripe is told to stop charging: the subscription is cancelled there at once.
    expect(stub.calls('DELETE', '/v1/subscriptions/sub_stripe_cli_cancel')).toHaveLength(1);

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      expect(await repos.subscriptions.findActive(account.id)).toBeUndefined();
    } finally {
      await db.close();
    }
  });

  it('accounts create refuses an account billed by Stripe: its plan stays as it is, here and on Stripe', async () => {
    const { account, subscription } = await billedAccount('stripe-again@example.com', 'stripe', 'sub_stripe_cli_create');

    const refused = await runCliInProcess(['accounts', 'create', '--email', 'stripe-again@example.com', '--plan', 'vip'], { dataDir: data.dir, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('error: An account with email stripe-again@example.com already exists.\n');
    expect(stub.requests.filter((request) => request.path.includes('sub_stripe_cli_create'))).toHaveLength(0);

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      expect(await repos.subscriptions.findActive(account.id)).toEqual(subscription);
    } finally {
      await db.close();
    }
  });

  it('refuses to end a Stripe-billed subscription without Stripe configured, and leaves it in force', async () => {
    const { account } = await billedAccount('stripe-unreachable@example.com', 'stripe', 'sub_stripe_cli_refused');

    const refused = await runCliInProcess(['subscriptions', 'cancel', '--email', 'stripe-unreachable@example.com'], { dataDir: data.dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('error: The subscription is billed by stripe, which is not configured here; nothing was changed.\n');
    expect(stub.calls('DELETE', '/v1/subscriptions/sub_stripe_cli_refused')).toHaveLength(0);

    const { db, repos } = await openCliDatabase(data.dir);
    try {
      expect(await repos.subscriptions.findActive(account.id)).toBeDefined();
    } finally {
      await db.close();
    }
  });

  it('cancels a manually billed subscription now and voids its unpaid renewal', async () => {
    const { account, subscription } = await billedAccount('manual-buyer@example.com', 'manual', null);
    const { db, repos } = await openCliDatabase(data.dir);
    let renewalId: string;
    try {
      const renewal = await repos.invoices.create({
        accountId: account.id,
        provider: 'manual',
        kind: 'renew',
        planCode: 'standard',
        billing: 'monthly',
        amountCents: 5000,
        currency: 'usd',
        description: 'Renewal',
        subscriptionId: subscription.id,
      });
      renewalId = renewal.id;
    } finally {
      await db.close();
    }

    const cancelled = await runCliInProcess(['subscriptions', 'cancel', '--email', 'manual-buyer@example.com'], { dataDir: data.dir });
    expect(cancelled.code, cancelled.stderr).toBe(0);

    const after = await openCliDatabase(data.dir);
    try {
      expect(await after.repos.subscriptions.findActive(account.id)).toBeUndefined();
      expect((await after.repos.invoices.findById(renewalId))?.status).toBe('void');
    } finally {
      await after.db.close();
    }
  });
});
