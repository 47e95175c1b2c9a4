import type { Db } from '../storage/database.ts';
import type { Invoice } from '../domain/invoice.ts';
import type { Subscription } from '../domain/subscription.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { PaymentError } from './payment-provider.ts';
import { firstTermEnd, nextTermEnd } from './pricing.ts';
import { inTransaction } from '../storage/transaction.ts';

export interface Settlement {
  invoice: Invoice;
  subscription: Subscription;
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
    if (invoice.status === 'paid') throw new PaymentError(`Invoice ${invoice.id} was already paid on ${invoice.paidAt}.`);
    if (invoice.status === 'void') throw new PaymentError(`Invoice ${invoice.id} is void; issue a new one.`);

    const applied = await apply(repos, invoice, now);
    // The conditional update settles two operators paying the same invoice at once: one wins.
    if (!(await repos.invoices.markPaid(invoice.id, now))) throw new PaymentError(`Invoice ${invoice.id} is no longer open.`);
    return { invoice: { ...invoice, status: 'paid', paidAt: now.toISOString() }, ...applied };
  });
}

export async function voidManualInvoice(db: Db, idOrReference: string, now = new Date()): Promise<Invoice> {
  return inTransaction(db, async (repos) => {
    const invoice = await repos.invoices.findByIdOrReference(idOrReference);
    if (!invoice) throw new PaymentError(`No invoice with id or reference ${idOrReference}.`);
    if (invoice.status !== 'open' || !(await repos.invoices.markVoid(invoice.id, now))) {
      throw new PaymentError(`Invoice ${invoice.id} is ${invoice.status}; only an open invoice can be voided.`);
    }
    return { ...invoice, status: 'void', voidedAt: now.toISOString() };
  });
}

async function startSubscription(repos: Repositories, invoice: Invoice, now: Date): Promise<Subscription> {
  const paidThrough = firstTermEnd(now, invoice.billing);
  const subscription = await repos.subscriptions.create(
    { accountId: invoice.accountId, planCode: invoice.planCode, billing: invoice.billing, startedAt: now, endsAt: paidThrough },
    now,
  );
  await repos.billing.create({ subscriptionId: subscription.id, provider: 'manual', paidThrough }, now);
  return subscription;
}

async function apply(repos: Repositories, invoice: Invoice, now: Date): Promise<Omit<Settlement, 'invoice'>> {
  const active = await repos.subscriptions.findActive(invoice.accountId, now);
  if (invoice.kind === 'subscribe') {
    if (active) {
      throw new PaymentError(
        `The account already has a subscription in force (${active.id}, ${active.planCode}); this invoice would start a second one. Void it and refund.`,
      );
    }
    const subscription = await startSubscription(repos, invoice, now);
    return { subscription, summary: `subscription ${subscription.id} started: ${invoice.planCode}, ${invoice.billing}, paid through ${subscription.endsAt}` };
  }

  const subscription = invoice.subscriptionId ? await repos.subscriptions.findById(invoice.subscriptionId) : undefined;
  if (!subscription) throw new PaymentError(`Invoice ${invoice.id} names no subscription.`);
  const inForce = active?.id === subscription.id;
  const billing = await repos.billing.find(subscription.id);

  if (invoice.kind === 'renew') {
    if (!inForce || !billing?.paidThrough) {
      const started = await startSubscription(repos, invoice, now);
      return { subscription: started, summary: `subscription ${subscription.id} had lapsed; ${started.id} started: ${invoice.planCode}, paid through ${started.endsAt}` };
    }
    const paidThrough = nextTermEnd(new Date(subscription.startedAt), new Date(billing.paidThrough), subscription.billing);
    await repos.subscriptions.changePlan(subscription.id, invoice.planCode);
    await repos.subscriptions.setEndsAt(subscription.id, paidThrough);
    await repos.billing.setPaidThrough(subscription.id, paidThrough, now);
    await repos.billing.setScheduledPlan(subscription.id, null, now);
    await repos.billing.setCancelAtPeriodEnd(subscription.id, false, now);
    return {
      subscription: { ...subscription, planCode: invoice.planCode, endsAt: paidThrough.toISOString() },
      summary: `subscription ${subscription.id} renewed: ${invoice.planCode}, paid through ${paidThrough.toISOString()}`,
    };
  }

  // upgrade
  if (!inForce) {
    throw new PaymentError(`Subscription ${subscription.id}, which invoice ${invoice.id} upgrades, is no longer in force. Void the invoice and refund.`);
  }
  await repos.subscriptions.changePlan(subscription.id, invoice.planCode);
  if (billing) await repos.billing.setScheduledPlan(subscription.id, null, now);
  return {
    subscription: { ...subscription, planCode: invoice.planCode },
    summary: `subscription ${subscription.id} upgraded to ${invoice.planCode} from now; the current period's count carries over`,
  };
}
