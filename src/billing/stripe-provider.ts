import type Stripe from 'stripe';
import type { Db } from '../storage/database.ts';
import type { Plan } from '../domain/plan.ts';
import type { BillingCycle } from '../domain/principal.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { PaymentError, PaymentUnavailableError, type ChangeContext, type PaymentProvider, type PurchaseInput, type PurchaseResult, type UpgradeResult } from './payment-provider.ts';
import { termPriceCents } from './pricing.ts';
import { inTransaction } from '../storage/transaction.ts';

/** Metadata keys on the Stripe subscription: how a webhook finds the account and the plan. */
export const STRIPE_METADATA = { account: 'vinhistory_account_id', plan: 'vinhistory_plan', billing: 'vinhistory_billing' } as const;

export interface StripeProviderOptions {
  stripe: Stripe;
  db: Db;
  repos: Repositories;
  publicBaseUrl: string;
  /** Where the customer lands after Stripe's checkout page, under PUBLIC_BASE_URL. */
  returnPath: string;
}

function interval(billing: BillingCycle): 'month' | 'year' {
  return billing === 'annual' ? 'year' : 'month';
}

/**
 * Stripe BillingCycle: a Checkout Session in subscription mode for a first purchase; changes through
 * the Subscriptions API. The plan's product is made on Stripe on first use (id
 * `vinhistory_plan_<code>`) and its price is sent inline, so that nothing has to be set up in
 * Stripe's dashboard and the price list stays the one in our database. The subscription itself
 * becomes ours only through the signed webhook (stripe-webhooks.ts), never through the redirect
 * back, which anyone can forge.
 */
export class StripePaymentProvider implements PaymentProvider {
  readonly name = 'stripe';
  private readonly products = new Map<string, Promise<string>>();

  constructor(private readonly options: StripeProviderOptions) {}

  private get stripe(): Stripe {
    return this.options.stripe;
  }

  /** The Stripe product of a plan, made on first use and remembered for the life of the process. */
  private productFor(plan: Plan): Promise<string> {
    let product = this.products.get(plan.code);
    if (!product) {
      const id = `vinhistory_plan_${plan.code}`;
      product = this.stripe.products
        .retrieve(id)
        .then((found) => found.id)
        .catch(async (error: unknown) => {
          if ((error as { statusCode?: number }).statusCode !== 404) throw error;
          const created = await this.stripe.products.create({ id, name: `vinhistory ${plan.name}`, metadata: { [STRIPE_METADATA.plan]: plan.code } });
          return created.id;
        });
      // A failed lookup is not remembered: the next purchase tries again.
      product.catch(() => this.products.delete(plan.code));
      this.products.set(plan.code, product);
    }
    return product;
  }

  private async priceData(plan: Plan, billing: BillingCycle) {
    return { currency: 'usd', product: await this.productFor(plan), unit_amount: termPriceCents(plan, billing), recurring: { interval: interval(billing) } };
  }

  async purchase(input: PurchaseInput): Promise<PurchaseResult> {
    return reachStripe(() => this.startCheckout(input));
  }

  private async startCheckout(input: PurchaseInput): Promise<PurchaseResult> {
    const { account, plan, billing } = input;
    const customer = await this.options.repos.billing.findStripeCustomer(account.id);
    const metadata = { [STRIPE_METADATA.account]: account.id, [STRIPE_METADATA.plan]: plan.code, [STRIPE_METADATA.billing]: billing };
    const back = `${this.options.publicBaseUrl}${this.options.returnPath}`;
    const session = await this.stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price_data: await this.priceData(plan, billing), quantity: 1 }],
      client_reference_id: account.id,
      ...(customer ? { customer } : { customer_email: account.email }),
      metadata,
      subscription_data: { metadata },
      success_url: `${back}?checkout=success`,
      cancel_url: `${back}?checkout=cancelled`,
    });
    if (!session.url) throw new PaymentError('Stripe did not return a checkout page. Try again in a moment.');
    return { kind: 'redirect', url: session.url };
  }

  private async itemOf(context: ChangeContext): Promise<{ subscriptionId: string; itemId: string }> {
    const subscriptionId = context.billing.externalId;
    if (!subscriptionId) throw new PaymentError('This subscription is not linked to Stripe; contact us to change it.');
    const remote = await this.stripe.subscriptions.retrieve(subscriptionId);
    const item = remote.items.data[0];
    if (!item) throw new PaymentError('The Stripe subscription has no item to change; contact us.');
    return { subscriptionId, itemId: item.id };
  }

  /**
   * Charged at once for the rest of the period (Stripe's proration), and refused by Stripe if the
   * charge fails, in which case nothing changes here either.
   */
  async upgrade(context: ChangeContext, to: Plan): Promise<UpgradeResult> {
    const { subscriptionId, itemId } = await this.itemOf(context);
    await this.stripe.subscriptions.update(subscriptionId, {
      items: [{ id: itemId, price_data: await this.priceData(to, context.subscription.billing) }],
      proration_behavior: 'always_invoice',
      payment_behavior: 'error_if_incomplete',
      metadata: { [STRIPE_METADATA.plan]: to.code },
    });
    await inTransaction(this.options.db, async (repos) => {
      await repos.subscriptions.changePlan(context.subscription.id, to.code);
      await repos.billing.setScheduledPlan(context.subscription.id, null, context.now);
    });
    return { kind: 'applied' };
  }

  /**
   * The next renewal is billed at the new price (no proration now); the plan changes here when
   * that renewal is paid (invoice.paid, subscription_cycle).
   */
  async scheduleChange(context: ChangeContext, to: Plan | null): Promise<void> {
    const { subscriptionId, itemId } = await this.itemOf(context);
    const target = to ?? context.current;
    await this.stripe.subscriptions.update(subscriptionId, {
      items: [{ id: itemId, price_data: await this.priceData(target, context.subscription.billing) }],
      proration_behavior: 'none',
    });
    await inTransaction(this.options.db, (repos) => repos.billing.setScheduledPlan(context.subscription.id, to?.code ?? null, context.now));
  }

  async setCancelAtPeriodEnd(context: ChangeContext, cancel: boolean): Promise<void> {
    const subscriptionId = context.billing.externalId;
    if (!subscriptionId) throw new PaymentError('This subscription is not linked to Stripe; contact us to cancel it.');
    await this.stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: cancel });
    await inTransaction(this.options.db, async (repos) => {
      await repos.billing.setCancelAtPeriodEnd(context.subscription.id, cancel, context.now);
      // Without the renewal grace: access ends with the paid term even if the final webhook is late.
      const paidThrough = context.billing.paidThrough;
      if (paidThrough) await repos.subscriptions.setEndsAt(context.subscription.id, new Date(cancel ? paidThrough : Date.parse(paidThrough) + STRIPE_RENEWAL_GRACE_MS));
    });
  }

  /** Cancelled on Stripe at once, without a refund: Stripe charges nothing more. */
  async stopNow(context: ChangeContext): Promise<void> {
    const subscriptionId = context.billing.externalId;
    if (!subscriptionId) throw new PaymentError('This subscription is not linked to Stripe; cancel it on Stripe first.');
    await this.stripe.subscriptions.cancel(subscriptionId);
  }
}

/**
 * Runs a call to Stripe; a failure to reach it or to authenticate (its connection, authentication,
 * permission, rate-limit and server errors) becomes a PaymentUnavailableError, which the billing
 * page shows with "try again" and "pay by invoice". Refusals about the request itself pass as they are.
 */
async function reachStripe<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const type = (error as { type?: unknown }).type;
    if (typeof type === 'string' && ['StripeConnectionError', 'StripeAuthenticationError', 'StripePermissionError', 'StripeRateLimitError', 'StripeAPIError'].includes(type)) {
      throw new PaymentUnavailableError('stripe', error);
    }
    throw error;
  }
}

/**
 * Stripe charges a renewal about an hour after the period ends and retries a failed charge. Access
 * runs this long past the paid term so that a renewal in progress does not lock a customer out.
 */
export const STRIPE_RENEWAL_GRACE_MS = 2 * 24 * 60 * 60 * 1000;
