import type { Db } from '../storage/database.ts';
import type { InvoiceRow, SubscriptionRow } from '../storage/schema.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { PaymentError } from './payment-provider.ts';
import { firstTermEnd, nextTermEnd } from './pricing.ts';
import { inTransaction } from './transaction.ts';

export interface Settlement {
  invoice: InvoiceRow;
  subscription: SubscriptionRow;
  /** One line for the operator: what paying the invoice did. */
  summary: string;
}

/**
 * Marks a manual invoice paid and applies it, in one transaction (the operator's
 * `vinhistory invoices pay`):
 * - subscribe: a subscription starts now, paid through one term;
 * - renew: the subscription's paid term is extended by one term (on the plan the invoice names,
 *   which carries a scheduled downgrade); if it has already lapsed, a new one starts now;
 * - upgrade: the subscription moves to the new plan at once, anchor and period count unchanged.
 * An invoice that cannot apply any more (an upgrade for a term that has ended, a second first
 * subscription) is refused and stays open, for the operator to void and refund.
 */
export async function payManualInvoice(db: Db, idOrReference: string, now = new Date()): Promise<Settlement> {
  return inTransaction(db, async (repos) => {
    const invoice = await repos.invoices.findByIdOrReference(idOrReference);
    if (!invoice) throw new PaymentError(`No invoice with id or reference ${idOrReference}.`);
    if (invoice.provider !== 'manual') throw new PaymentError(`Invoice ${invoice.id} is paid through Stripe; it cannot be marked paid by hand.`);
    if (invoice.status === 'paid') throw new PaymentError(`Invoice ${invoice.id} was already paid on ${invoice.paid_at}.`);
    if (invoice.status === 'void') throw new PaymentError(`Invoice ${invoice.id} is void; issue a new one.`);

    const applied = await apply(repos, invoice, now);
    // The conditional update settles two operators paying the same invoice at once: one wins.
    if (!(await repos.invoices.markPaid(invoice.id, now))) throw new PaymentError(`Invoice ${invoice.id} is no longer open.`);
    return { invoice: { ...invoice, status: 'paid', paid_at: now.toISOString() }, ...applied };
  });
}

export async function voidManualInvoice(db: Db, idOrReference: string, now = new Date()): Promise<InvoiceRow> {
  return inTransaction(db, async (repos) => {
    const invoice = await repos.invoices.findByIdOrReference(idOrReference);
    if (!invoice) throw new PaymentError(`No invoice with id or reference ${idOrReference}.`);
    if (invoice.status !== 'open' || !(await repos.invoices.markVoid(invoice.id, now))) {
      throw new PaymentError(`Invoice ${invoice.id} is ${invoice.status}; only an open invoice can be voided.`);
    }
    return { ...invoice, status: 'void', voided_at: now.toISOString() };
  });
}

async function startSubscription(repos: Repositories, invoice: InvoiceRow, now: Date): Promise<SubscriptionRow> {
  const paidThrough = firstTermEnd(now, invoice.billing);
  const subscription = await repos.subscriptions.create(
    { accountId: invoice.account_id, planCode: invoice.plan_code, billing: invoice.billing, startedAt: now, endsAt: paidThrough },
    now,
  );
  await repos.billing.create({ subscriptionId: subscription.id, provider: 'manual', paidThrough }, now);
  return subscription;
}

async function apply(repos: Repositories, invoice: InvoiceRow, now: Date): Promise<Omit<Settlement, 'invoice'>> {
  const active = await repos.subscriptions.findActive(invoice.account_id, now);
  if (invoice.kind === 'subscribe') {
    if (active) {
      throw new PaymentError(
        `The account already has a subscription in force (${active.id}, ${active.plan_code}); this invoice would start a second one. Void it and refund.`,
      );
    }
    const subscription = await startSubscription(repos, invoice, now);
    return { subscription, summary: `subscription ${subscription.id} started: ${invoice.plan_code}, ${invoice.billing}, paid through ${subscription.ends_at}` };
  }

  const subscription = invoice.subscription_id ? await repos.subscriptions.findById(invoice.subscription_id) : undefined;
  if (!subscription) throw new PaymentError(`Invoice ${invoice.id} names no subscription.`);
  const inForce = active?.id === subscription.id;
  const billing = await repos.billing.find(subscription.id);

  if (invoice.kind === 'renew') {
    if (!inForce || !billing?.paid_through) {
      const started = await startSubscription(repos, invoice, now);
      return { subscription: started, summary: `subscription ${subscription.id} had lapsed; ${started.id} started: ${invoice.plan_code}, paid through ${started.ends_at}` };
    }
    const paidThrough = nextTermEnd(new Date(subscription.started_at), new Date(billing.paid_through), subscription.billing);
    await repos.subscriptions.changePlan(subscription.id, invoice.plan_code);
    await repos.subscriptions.setEndsAt(subscription.id, paidThrough);
    await repos.billing.setPaidThrough(subscription.id, paidThrough, now);
    await repos.billing.setScheduledPlan(subscription.id, null, now);
    await repos.billing.setCancelAtPeriodEnd(subscription.id, false, now);
    return {
      subscription: { ...subscription, plan_code: invoice.plan_code, ends_at: paidThrough.toISOString() },
      summary: `subscription ${subscription.id} renewed: ${invoice.plan_code}, paid through ${paidThrough.toISOString()}`,
    };
  }

  // upgrade
  if (!inForce) {
    throw new PaymentError(`Subscription ${subscription.id}, which invoice ${invoice.id} upgrades, is no longer in force. Void the invoice and refund.`);
  }
  await repos.subscriptions.changePlan(subscription.id, invoice.plan_code);
  if (billing) await repos.billing.setScheduledPlan(subscription.id, null, now);
  return {
    subscription: { ...subscription, plan_code: invoice.plan_code },
    summary: `subscription ${subscription.id} upgraded to ${invoice.plan_code} from now; the current period's count carries over`,
  };
}
