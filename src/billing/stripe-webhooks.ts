import type Stripe from 'stripe';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../storage/database.ts';
import type { InvoiceKind } from '../domain/invoice.ts';
import { createRepositories, type Repositories } from '../storage/repositories/index.ts';
import { STRIPE_METADATA, STRIPE_RENEWAL_GRACE_MS } from './stripe-provider.ts';
import { inTransaction } from '../storage/transaction.ts';

export type WebhookOutcome = 'applied' | 'duplicate' | 'ignored';

const fromUnix = (seconds: number) => new Date(seconds * 1000);
const idOf = (value: string | { id: string } | null | undefined): string | null => (value == null ? null : typeof value === 'string' ? value : value.id);

const INVOICE_KIND: Partial<Record<string, InvoiceKind>> = {
  subscription_create: 'subscribe',
  subscription_cycle: 'renew',
  subscription_update: 'upgrade',
};

/**
 * Applies Stripe's events to our subscriptions. Each event is handled once: its id is recorded in
 * the transaction that applies it, so a redelivery (Stripe retries until it gets a 2xx) or a
 * second instance handling it at the same moment changes nothing.
 *
 * Events may come in any order, so the state events of a Stripe subscription (updated, deleted)
 * are ordered by their `created` time: one older than the last applied changes nothing, and a
 * deletion is final (Stripe never brings a deleted subscription back). A deletion that arrives
 * before the first `invoice.paid` is kept, and that invoice then starts an ended subscription.
 * Paid invoices are facts rather than states: each is applied whenever it comes (the paid term
 * only ever grows).
 *
 * - invoice.paid starts a subscription (first invoice, from the metadata set at checkout), or
 *   extends the paid term (renewal, applying a scheduled downgrade); the invoice is listed in the
 *   customer's payment history.
 * - customer.subscription.updated mirrors a cancellation at the period's end made on Stripe's side.
 * - customer.subscription.deleted ends the subscription.
 * - checkout.session.completed remembers the account's Stripe customer for its next checkout.
 */
export class StripeWebhookHandler {
  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
  ) {}

  async handle(event: Stripe.Event, now = new Date()): Promise<WebhookOutcome> {
    try {
      return await inTransaction(this.db, async (repos) => {
        await repos.billing.recordEvent(event.id, 'stripe', event.type, now);
        return this.apply(repos, event, now);
      });
    } catch (error) {
      if (this.db.isUniqueViolation(error) && (await this.isRecorded(event.id))) return 'duplicate';
      throw error;
    }
  }

  private async isRecorded(eventId: string): Promise<boolean> {
    return createRepositories(this.db).billing.hasEvent(eventId);
  }

  private async apply(repos: Repositories, event: Stripe.Event, now: Date): Promise<WebhookOutcome> {
    switch (event.type) {
      case 'checkout.session.completed':
        return this.checkoutCompleted(repos, event.data.object, now);
      case 'invoice.paid':
        return this.invoicePaid(repos, event.data.object, now);
      case 'customer.subscription.updated':
        return this.subscriptionUpdated(repos, event.data.object, event, now);
      case 'customer.subscription.deleted':
        return this.subscriptionDeleted(repos, event.data.object, event, now);
      default:
        return 'ignored';
    }
  }

  private async checkoutCompleted(repos: Repositories, session: Stripe.Checkout.Session, now: Date): Promise<WebhookOutcome> {
    const accountId = session.client_reference_id;
    const customerId = idOf(session.customer);
    if (!accountId || !customerId || !(await repos.accounts.findById(accountId))) return 'ignored';
    await repos.billing.saveStripeCustomer(accountId, customerId, now);
    return 'applied';
  }

  private async invoicePaid(repos: Repositories, invoice: Stripe.Invoice, now: Date): Promise<WebhookOutcome> {
    const details = invoice.parent?.subscription_details;
    const stripeSubscriptionId = idOf(details?.subscription);
    if (!details || !stripeSubscriptionId) return 'ignored';
    const periods = invoice.lines.data.map((line) => line.period);
    if (periods.length === 0) return 'ignored';
    const paidThrough = fromUnix(Math.max(...periods.map((period) => period.end)));
    const periodStart = fromUnix(Math.min(...periods.map((period) => period.start)));

    let stripeBilling = await repos.billing.findByExternalId(stripeSubscriptionId);
    let subscriptionId: string;
    if (!stripeBilling) {
      const metadata = details.metadata ?? {};
      const accountId = metadata[STRIPE_METADATA.account];
      const planCode = metadata[STRIPE_METADATA.plan];
      const billing = metadata[STRIPE_METADATA.billing];
      const account = accountId ? await repos.accounts.findById(accountId) : undefined;
      const plan = planCode ? await repos.plans.findByCode(planCode) : undefined;
      if (!account || !plan || (billing !== 'monthly' && billing !== 'annual')) {
        // Not one of ours, or made by hand on Stripe: retrying would not help, so it is not an error.
        this.log.warn({ event: 'invoice.paid', invoice: invoice.id, subscription: stripeSubscriptionId }, 'stripe: paid invoice names no known account and plan; ignored');
        return 'ignored';
      }
      // Stripe's period start is the billing anchor: our monthly quota periods follow its cycle.
      const startedAt = new Date(Math.min(periodStart.getTime(), now.getTime()));
      const subscription = await repos.subscriptions.create(
        { accountId: account.id, planCode: plan.code, billing, startedAt, endsAt: new Date(paidThrough.getTime() + STRIPE_RENEWAL_GRACE_MS) },
        now,
      );
      stripeBilling = await repos.billing.create({ subscriptionId: subscription.id, provider: 'stripe', externalId: stripeSubscriptionId, paidThrough }, now);
      // Deleted on Stripe before this invoice arrived: the payment is listed, but no access is left.
      const deletedAt = await repos.billing.findStripeDeletion(stripeSubscriptionId);
      if (deletedAt) {
        const endedAt = Math.max(startedAt.getTime(), Math.min(deletedAt.getTime(), now.getTime()));
        await repos.subscriptions.end(subscription.id, new Date(endedAt));
      }
      const customerId = idOf(invoice.customer);
      if (customerId) await repos.billing.saveStripeCustomer(account.id, customerId, now);
      subscriptionId = subscription.id;
    } else {
      subscriptionId = stripeBilling.subscriptionId;
      const subscription = await repos.subscriptions.findById(subscriptionId);
      if (!subscription) return 'ignored';
      const known = stripeBilling.paidThrough ? Date.parse(stripeBilling.paidThrough) : 0;
      if (paidThrough.getTime() > known) {
        await repos.billing.setPaidThrough(subscriptionId, paidThrough, now);
        if (subscription.status === 'active') {
          const grace = stripeBilling.cancelAtPeriodEnd ? 0 : STRIPE_RENEWAL_GRACE_MS;
          await repos.subscriptions.setEndsAt(subscriptionId, new Date(paidThrough.getTime() + grace));
        }
      }
      if (invoice.billing_reason === 'subscription_cycle' && stripeBilling.scheduledPlanCode) {
        await repos.subscriptions.changePlan(subscriptionId, stripeBilling.scheduledPlanCode);
        await repos.billing.setScheduledPlan(subscriptionId, null, now);
      }
    }
    await this.recordInvoice(repos, invoice, subscriptionId, now);
    return 'applied';
  }

  /** The payment, in the customer's payment history, with Stripe's own invoice page. */
  private async recordInvoice(repos: Repositories, invoice: Stripe.Invoice, subscriptionId: string, now: Date): Promise<void> {
    const kind = INVOICE_KIND[invoice.billing_reason ?? ''] ?? 'renew';
    if (await repos.invoices.findByExternalId(invoice.id)) return;
    const subscription = await repos.subscriptions.findById(subscriptionId);
    if (!subscription) return;
    const paidAt = invoice.status_transitions?.paid_at ? fromUnix(invoice.status_transitions.paid_at) : now;
    await repos.invoices.create(
      {
        accountId: subscription.accountId,
        provider: 'stripe',
        kind,
        planCode: subscription.planCode,
        billing: subscription.billing,
        amountCents: invoice.amount_paid,
        currency: invoice.currency,
        description: invoice.lines.data[0]?.description ?? `vinhistory ${subscription.planCode}`,
        subscriptionId,
        status: 'paid',
        paidAt: paidAt.toISOString(),
        reference: invoice.number ?? invoice.id,
        externalId: invoice.id,
        hostedUrl: invoice.hosted_invoice_url ?? null,
      },
      now,
    );
  }

  private async subscriptionUpdated(repos: Repositories, remote: Stripe.Subscription, event: Stripe.Event, now: Date): Promise<WebhookOutcome> {
    const stripeBilling = await repos.billing.findByExternalId(remote.id);
    if (!stripeBilling) return 'ignored';
    // Older than the state already applied (or after the deletion): what it says is out of date.
    if (!(await repos.billing.advanceStripeEvent(remote.id, fromUnix(event.created), now))) return 'ignored';
    const cancel = remote.cancel_at_period_end || remote.cancel_at !== null;
    if (stripeBilling.cancelAtPeriodEnd !== cancel) {
      await repos.billing.setCancelAtPeriodEnd(stripeBilling.subscriptionId, cancel, now);
      if (stripeBilling.paidThrough) {
        const paidThrough = Date.parse(stripeBilling.paidThrough);
        await repos.subscriptions.setEndsAt(stripeBilling.subscriptionId, new Date(cancel ? paidThrough : paidThrough + STRIPE_RENEWAL_GRACE_MS));
      }
    }
    // Stripe gave up on collecting (or the first payment expired): access ends now.
    if (remote.status === 'unpaid' || remote.status === 'incomplete_expired') {
      await repos.subscriptions.end(stripeBilling.subscriptionId, now);
    }
    return 'applied';
  }

  private async subscriptionDeleted(repos: Repositories, remote: Stripe.Subscription, event: Stripe.Event, now: Date): Promise<WebhookOutcome> {
    const endedAt = remote.ended_at ? fromUnix(remote.ended_at) : fromUnix(event.created);
    if (!(await repos.billing.recordStripeDeletion(remote.id, fromUnix(event.created), endedAt, now))) return 'ignored';
    const stripeBilling = await repos.billing.findByExternalId(remote.id);
    // Not ours yet: the deletion is kept for its first invoice.paid, which may still come.
    if (!stripeBilling) return 'applied';
    await repos.subscriptions.end(stripeBilling.subscriptionId, new Date(Math.min(endedAt.getTime(), now.getTime())));
    await repos.billing.setCancelAtPeriodEnd(stripeBilling.subscriptionId, false, now);
    return 'applied';
  }
}
