import type { Account, BuyerDetails } from '../domain/account.ts';
import type { Invoice } from '../domain/invoice.ts';
import type { Plan } from '../domain/plan.ts';
import type { BillingCycle } from '../domain/principal.ts';
import type { BillingProvider, Subscription, SubscriptionBilling } from '../domain/subscription.ts';
import { billingPeriodAt } from '../limits/billing-period.ts';
import type { Db } from '../storage/database.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { inTransaction } from '../storage/transaction.ts';
import { PaymentError, type ChangeContext, type PaymentProvider } from './payment-provider.ts';
import { comparePlans } from './pricing.ts';

export interface BillingOverview {
  /** The subscription in force now, with its plan; null when there is none. */
  subscription: Subscription | null;
  plan: Plan | null;
  provider: BillingProvider | null;
  /** End of the term paid for (manual, Stripe); null for subscriptions arranged with the operator. */
  paidThrough: Date | null;
  /** When access ends, if it is going to: cancelled, or a manual term not yet renewed. */
  endsAt: Date | null;
  cancelAtPeriodEnd: boolean;
  scheduledPlan: Plan | null;
  /** The last subscription, when none is in force: "ended on ...". */
  lapsed: Subscription | null;
  invoices: Invoice[];
  openInvoices: Invoice[];
  /** The public price list. */
  plans: Plan[];
  /** What the customer may do from the billing page. */
  can: { choose: boolean; change: boolean; cancel: boolean; resume: boolean; renew: boolean };
}

export type ChooseResult =
  | { kind: 'redirect'; url: string }
  | { kind: 'invoice'; invoice: Invoice }
  | { kind: 'upgraded'; plan: Plan }
  | { kind: 'scheduled'; plan: Plan; at: Date }
  | { kind: 'unscheduled'; plan: Plan };

/** What the operator's `accounts create` did, or why it did nothing. */
export type ArrangeOutcome =
  | { kind: 'created'; account: Account; subscription: Subscription; plan: Plan }
  | { kind: 'unknown-plan'; knownCodes: string[] }
  | { kind: 'email-taken' };

/** What the operator's `subscriptions cancel` ended: the subscription in force, if any, and how many in all. */
export interface EndOutcome {
  ended: Subscription | null;
  count: number;
}

/**
 * What an operator's plan change did (`vinhistory subscriptions change`, the admin API): it takes
 * effect at once; `invoice` is what the customer is asked to pay for it, if anything.
 */
export type OperatorChangeOutcome =
  | { kind: 'started'; subscription: Subscription; plan: Plan }
  | { kind: 'changed'; subscription: Subscription; from: Plan; plan: Plan; provider: BillingProvider; invoice: Invoice | null }
  | { kind: 'unknown-plan'; knownCodes: string[] };

export interface BillingServiceOptions {
  db: Db;
  repos: Repositories;
  /** Who bills a new subscription: Stripe when configured, manual invoices otherwise. */
  checkout: PaymentProvider;
  /** Every provider a subscription may have been made with (a deployment may have switched). */
  providers: { manual: PaymentProvider; stripe?: PaymentProvider };
}

/**
 * The customer's side of billing: what the account has, and the changes it may make. The rules,
 * the same for both providers (docs/account.md):
 * - a first subscription starts when its first term is paid;
 * - an upgrade (a dearer plan) applies at once, charged for the rest of the paid term; the billing
 *   period's anchor and its count carry over, and the new quota applies to that count;
 * - a downgrade applies at the renewal; until then nothing changes;
 * - cancelling keeps the plan to the end of the paid term (for a subscription arranged with the
 *   operator, to the end of the current monthly period), and can be taken back until then;
 * - the billing period (monthly/annual) of a running subscription does not change.
 */
export class BillingService {
  constructor(private readonly options: BillingServiceOptions) {}

  private get repos(): Repositories {
    return this.options.repos;
  }

  async publicPlans(): Promise<Plan[]> {
    return (await this.repos.plans.list()).filter((plan) => plan.isPublic);
  }

  async overview(accountId: string, now = new Date()): Promise<BillingOverview> {
    const [subscription, invoices, plans] = await Promise.all([
      this.repos.subscriptions.findActive(accountId, now),
      this.repos.invoices.listForAccount(accountId),
      this.publicPlans(),
    ]);
    const openInvoices = invoices.filter((invoice) => invoice.status === 'open');
    if (!subscription) {
      const latest = await this.repos.subscriptions.findLatest(accountId);
      return {
        subscription: null,
        plan: null,
        provider: null,
        paidThrough: null,
        endsAt: null,
        cancelAtPeriodEnd: false,
        scheduledPlan: null,
        lapsed: latest ?? null,
        invoices,
        openInvoices,
        plans,
        can: { choose: true, change: false, cancel: false, resume: false, renew: false },
      };
    }
    const [plan, billing] = await Promise.all([this.repos.plans.findByCode(subscription.planCode), this.repos.billing.find(subscription.id)]);
    const provider: BillingProvider = billing?.provider ?? 'operator';
    const cancelAtPeriodEnd = billing?.cancelAtPeriodEnd ?? false;
    const paidThrough = billing?.paidThrough ? new Date(billing.paidThrough) : null;
    const scheduledPlan = billing?.scheduledPlanCode ? ((await this.repos.plans.findByCode(billing.scheduledPlanCode)) ?? null) : null;
    const endsAt =
      provider === 'stripe' ? (cancelAtPeriodEnd ? paidThrough : null) : subscription.endsAt ? new Date(subscription.endsAt) : null;
    const selfService = provider !== 'operator' && plan?.isPublic === true;
    return {
      subscription,
      plan: plan ?? null,
      provider,
      paidThrough,
      endsAt,
      cancelAtPeriodEnd,
      scheduledPlan,
      lapsed: null,
      invoices,
      openInvoices,
      plans,
      can: {
        choose: false,
        change: selfService && !cancelAtPeriodEnd,
        cancel: !cancelAtPeriodEnd && (provider !== 'operator' || subscription.endsAt === null),
        resume: cancelAtPeriodEnd,
        renew: provider === 'manual' && !cancelAtPeriodEnd,
      },
    };
  }

  private providerFor(billing: SubscriptionBilling): PaymentProvider {
    const provider = billing.provider === 'stripe' ? this.options.providers.stripe : billing.provider === 'manual' ? this.options.providers.manual : undefined;
    if (!provider) throw new PaymentError('This subscription is billed in a way this service cannot change now; contact us.');
    return provider;
  }

  /** The subscription in force and what changing it needs, or a refusal the customer can read. */
  private async changeContext(account: Account, now: Date): Promise<ChangeContext> {
    const subscription = await this.repos.subscriptions.findActive(account.id, now);
    if (!subscription) throw new PaymentError('You have no plan in force. Choose one below.');
    const [current, billing] = await Promise.all([this.repos.plans.findByCode(subscription.planCode), this.repos.billing.find(subscription.id)]);
    if (!current) throw new Error(`subscription ${subscription.id} names unknown plan ${subscription.planCode}`);
    return {
      account,
      subscription,
      current,
      now,
      billing: billing ?? { subscriptionId: subscription.id, provider: 'operator', externalId: null, cancelAtPeriodEnd: false, scheduledPlanCode: null, paidThrough: null, updatedAt: now.toISOString() },
    };
  }

  /**
   * `buyer`: the details the checkout form asked for; kept on the account (for the next invoice)
   * and put on this purchase's invoice.
   */
  async choose(account: Account, planCode: string, billing: BillingCycle, now = new Date(), buyer?: BuyerDetails, via?: 'invoice'): Promise<ChooseResult> {
    const plan = await this.repos.plans.findByCode(planCode);
    if (!plan || !plan.isPublic) throw new PaymentError('That plan is not on the price list. Choose one of the plans shown.');
    if (buyer) await this.repos.accounts.setBuyerDetails(account.id, buyer);
    const active = await this.repos.subscriptions.findActive(account.id, now);
    // `via: 'invoice'`: the customer asked for a bank-transfer invoice (card payment was unavailable).
    const checkout = via === 'invoice' ? this.options.providers.manual : this.options.checkout;
    if (!active) return checkout.purchase({ account, plan, billing, now, ...(buyer ? { buyer } : {}) });

    const context = await this.changeContext(account, now);
    if (context.billing.provider === 'operator' || !context.current.isPublic) {
      throw new PaymentError('Your plan was arranged with our team; write to us to change it.');
    }
    if (context.billing.cancelAtPeriodEnd) throw new PaymentError('Your plan is cancelled at the end of the term. Resume it first to change it.');
    if (billing !== context.subscription.billing) {
      throw new PaymentError(
        `Your plan is billed ${context.subscription.billing === 'annual' ? 'annually' : 'monthly'}, and a running subscription keeps its billing period. Choose a ${context.subscription.billing} price, or cancel and subscribe again when the term ends.`,
      );
    }
    const provider = this.providerFor(context.billing);
    const order = comparePlans(plan, context.current);
    if (plan.code === context.current.code) {
      if (!context.billing.scheduledPlanCode) throw new PaymentError(`You are already on the ${plan.name} plan.`);
      await provider.scheduleChange(context, null);
      return { kind: 'unscheduled', plan };
    }
    if (order > 0) {
      const result = await provider.upgrade(context, plan);
      return result.kind === 'invoice' ? { kind: 'invoice', invoice: result.invoice } : { kind: 'upgraded', plan };
    }
    await provider.scheduleChange(context, plan);
    const at = context.billing.paidThrough ? new Date(context.billing.paidThrough) : now;
    return { kind: 'scheduled', plan, at };
  }

  /** Withdraws a downgrade waiting for the renewal. */
  async keepCurrentPlan(account: Account, now = new Date()): Promise<void> {
    const context = await this.changeContext(account, now);
    if (!context.billing.scheduledPlanCode) return;
    await this.providerFor(context.billing).scheduleChange(context, null);
  }

  /** Returns the date the plan ends. */
  async cancel(account: Account, now = new Date()): Promise<Date> {
    const context = await this.changeContext(account, now);
    if (context.billing.cancelAtPeriodEnd) throw new PaymentError('Your plan is already cancelled.');
    if (context.billing.provider === 'operator') {
      if (context.subscription.endsAt !== null) throw new PaymentError('Your plan already has an end date; write to us to change it.');
      // No paid term to run out: the plan runs to the end of the current monthly period.
      const end = billingPeriodAt(new Date(context.subscription.startedAt), now).end;
      await inTransaction(this.options.db, async (repos) => {
        await repos.billing.ensure(context.subscription.id, 'operator', now);
        await repos.billing.setCancelAtPeriodEnd(context.subscription.id, true, now);
        await repos.subscriptions.setEndsAt(context.subscription.id, end);
      });
      return end;
    }
    await this.providerFor(context.billing).setCancelAtPeriodEnd(context, true);
    return new Date(context.billing.paidThrough ?? context.subscription.endsAt ?? now);
  }

  async resume(account: Account, now = new Date()): Promise<void> {
    const context = await this.changeContext(account, now);
    if (!context.billing.cancelAtPeriodEnd) return;
    if (context.billing.provider === 'operator') {
      await inTransaction(this.options.db, async (repos) => {
        await repos.billing.setCancelAtPeriodEnd(context.subscription.id, false, now);
        await repos.subscriptions.setEndsAt(context.subscription.id, null);
      });
      return;
    }
    await this.providerFor(context.billing).setCancelAtPeriodEnd(context, false);
  }

  /**
   * The operator ends the account's plan now (`vinhistory subscriptions cancel`): a subscription
   * a provider bills is stopped there first (Stripe cancels it at once, so nothing more is
   * charged; manual invoices still unpaid are void), then every subscription in force or
   * scheduled ends here, so that nothing revives. A provider's refusal ends nothing.
   */
  async endNow(account: Account, now = new Date()): Promise<EndOutcome> {
    const active = await this.repos.subscriptions.findActive(account.id, now);
    if (active) {
      const context = await this.changeContext(account, now);
      if (context.billing.provider !== 'operator') {
        const provider = this.options.providers[context.billing.provider];
        if (!provider) throw new PaymentError(`The subscription is billed by ${context.billing.provider}, which is not configured here; nothing was changed.`);
        await provider.stopNow(context);
      }
    }
    const count = await this.repos.subscriptions.cancelActive(account.id, now);
    return { ended: active ?? null, count };
  }

  /**
   * A new account with a subscription in force from now, arranged with the operator and paid
   * outside the service (`vinhistory accounts create`). An existing account is refused, whatever
   * it has: its plan changes through the billing rules, not around them.
   */
  async arrangeNewAccount(input: { email: string; planCode: string; billing: BillingCycle }, now = new Date()): Promise<ArrangeOutcome> {
    const plan = await this.repos.plans.findByCode(input.planCode);
    if (!plan) return { kind: 'unknown-plan', knownCodes: (await this.repos.plans.list()).map((known) => known.code) };
    if (await this.repos.accounts.findByEmail(input.email)) return { kind: 'email-taken' };
    try {
      return await inTransaction(this.options.db, async (repos) => {
        const account = await repos.accounts.create(input.email, now);
        const subscription = await repos.subscriptions.create({ accountId: account.id, planCode: plan.code, billing: input.billing, startedAt: now }, now);
        return { kind: 'created', account, subscription, plan };
      });
    } catch (error) {
      // Another process made the account between the check and the insert.
      if (this.options.db.isUniqueViolation(error)) return { kind: 'email-taken' };
      throw error;
    }
  }

  /** The subscription in force, or else a new one arranged with the operator (paid outside the service), from now. */
  async ensureArranged(account: Account, planCode: string, billing: BillingCycle, now = new Date()): Promise<Subscription> {
    return (await this.inForce(account.id, now)) ?? this.repos.subscriptions.create({ accountId: account.id, planCode, billing, startedAt: now }, now);
  }

  /** The subscription in force at `now`, if any. */
  async inForce(accountId: string, now = new Date()): Promise<Subscription | undefined> {
    return this.repos.subscriptions.findActive(accountId, now);
  }

  /** Manual billing: the invoice for the next term. */
  async renew(account: Account, now = new Date()): Promise<Invoice> {
    const context = await this.changeContext(account, now);
    const provider = this.providerFor(context.billing);
    if (!provider.renew) throw new PaymentError('Your plan renews by itself; there is nothing to pay now.');
    if (context.billing.cancelAtPeriodEnd) throw new PaymentError('Your plan is cancelled at the end of the term. Resume it first to renew it.');
    return provider.renew(context);
  }

  /** The buyer's details the account keeps for its next invoice (empty until a checkout asks for them). */
  buyerDetails(accountId: string): Promise<BuyerDetails> {
    return this.repos.accounts.buyerDetails(accountId);
  }

  /** A customer withdraws an unpaid invoice of theirs (a manual one; Stripe's are settled on Stripe). */
  async voidInvoice(account: Account, invoiceId: string, now = new Date()): Promise<void> {
    const invoice = await this.repos.invoices.findForAccount(account.id, invoiceId);
    if (!invoice) throw new PaymentError('No such invoice.');
    if (invoice.provider !== 'manual' || invoice.status !== 'open' || !(await this.repos.invoices.markVoid(invoice.id, now))) {
      throw new PaymentError('Only an unpaid invoice can be cancelled.');
    }
  }

  // The operator's changes (docs/operators.md). They take effect at once; what is invoiced for
  // them follows the provider that bills the subscription, under the rules of docs/account.md.

  /**
   * Moves the account to `planCode` (and `billing`, when given) now. No subscription in force: one
   * arranged with the operator starts now, as `accounts create` makes it (paid outside the
   * service). Arranged with the operator: plan and cycle change in place, nothing is invoiced.
   * Billed by a provider: the billing period of a paid term does not change (refused); an upgrade
   * is charged as a customer's would be (manual: the prorated upgrade invoice, open; Stripe: its
   * proration) and a downgrade applies now with nothing refunded (manual; Stripe only changes at
   * the renewal, so it is refused there). The anchor is kept: the period's count carries over.
   */
  async operatorChange(account: Account, planCode: string, billing: BillingCycle | undefined, now = new Date()): Promise<OperatorChangeOutcome> {
    const plan = await this.repos.plans.findByCode(planCode);
    if (!plan) return { kind: 'unknown-plan', knownCodes: (await this.repos.plans.list()).map((known) => known.code) };
    const active = await this.repos.subscriptions.findActive(account.id, now);
    if (!active) {
      const subscription = await this.repos.subscriptions.create({ accountId: account.id, planCode: plan.code, billing: billing ?? 'monthly', startedAt: now }, now);
      return { kind: 'started', subscription, plan };
    }
    const context = await this.changeContext(account, now);
    const cycle = billing ?? active.billing;
    if (plan.code === context.current.code && cycle === active.billing) {
      throw new PaymentError(`${account.email} is already on the ${plan.code} plan, billed ${cycle}.`);
    }
    const provider = context.billing.provider;
    const changed = (invoice: Invoice | null): OperatorChangeOutcome => ({
      kind: 'changed',
      subscription: { ...active, planCode: plan.code, billing: cycle },
      from: context.current,
      plan,
      provider,
      invoice,
    });
    if (provider === 'operator') {
      await this.repos.subscriptions.changePlan(active.id, plan.code, cycle);
      return changed(null);
    }
    if (cycle !== active.billing) {
      throw new PaymentError(
        `The subscription is billed ${active.billing} by ${provider} and a paid term keeps its billing period; end it (subscriptions end) and start the ${cycle} one, or change it when the term ends.`,
      );
    }
    const payments = this.providerFor(context.billing);
    if (comparePlans(plan, context.current) > 0) {
      const result = await payments.upgrade(context, plan);
      // Stripe applied it with its proration; a manual upgrade applies now and its invoice waits to be paid.
      if (result.kind === 'invoice') await this.repos.subscriptions.changePlan(active.id, plan.code);
      return changed(result.kind === 'invoice' ? result.invoice : null);
    }
    if (provider === 'stripe') {
      throw new PaymentError('Stripe bills this subscription at its price until the renewal, so a downgrade cannot apply now; the customer can schedule it from the billing page, or end the subscription.');
    }
    await inTransaction(this.options.db, async (repos) => {
      await repos.subscriptions.changePlan(active.id, plan.code);
      await repos.billing.setScheduledPlan(active.id, null, now);
      // A renewal invoice issued for the old plan would renew at its price.
      const renewal = await repos.invoices.findOpen(account.id, 'renew', active.id);
      if (renewal) await repos.invoices.markVoid(renewal.id, now);
    });
    return changed(null);
  }

  /**
   * Moves the end of the subscription in force to `until` (a goodwill extension: nothing is
   * invoiced). A manual term is paid through `until` from then on; Stripe holds its own term, and
   * a subscription without an end date has nothing to extend.
   */
  async operatorExtend(account: Account, until: Date, now = new Date()): Promise<{ subscription: Subscription; previousEnd: string }> {
    const context = await this.changeContext(account, now).catch(() => {
      throw new PaymentError(`${account.email} has no subscription in force; start one with subscriptions change.`);
    });
    const { subscription, billing } = context;
    if (billing.provider === 'stripe') throw new PaymentError('Stripe holds the term of this subscription; extend it on Stripe.');
    if (subscription.endsAt === null) throw new PaymentError('The subscription has no end date: it runs until it is ended.');
    if (until.getTime() <= Date.parse(subscription.endsAt)) {
      throw new PaymentError(`The subscription already runs until ${subscription.endsAt}; give a later date.`);
    }
    await inTransaction(this.options.db, async (repos) => {
      await repos.subscriptions.setEndsAt(subscription.id, until);
      if (billing.provider === 'manual') await repos.billing.setPaidThrough(subscription.id, until, now);
    });
    return { subscription: { ...subscription, endsAt: until.toISOString() }, previousEnd: subscription.endsAt };
  }
}
