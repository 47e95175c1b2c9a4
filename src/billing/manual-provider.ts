import type { Db } from '../storage/database.ts';
import type { BuyerDetails } from '../domain/account.ts';
import type { Invoice, InvoiceKind } from '../domain/invoice.ts';
import type { Plan } from '../domain/plan.ts';
import type { BillingCycle } from '../domain/principal.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { PaymentError, type ChangeContext, type PaymentProvider, type PurchaseInput, type PurchaseResult, type UpgradeResult } from './payment-provider.ts';
import { paidTerm, prorationCents, termPriceCents } from './pricing.ts';
import { inTransaction } from '../storage/transaction.ts';

/** Settings key of the bank details printed on open invoices (`vinhistory invoices payee`). */
export const BANK_DETAILS_SETTING = 'bank_transfer_details';

function sameBuyer(a: BuyerDetails, b: BuyerDetails): boolean {
  return a.company === b.company && a.address === b.address && a.taxId === b.taxId;
}

export function describeTerm(plan: Plan, billing: BillingCycle): string {
  return `${plan.name} plan, ${billing === 'annual' ? '12 months' : '1 month'} (${plan.monthlyQuota.toLocaleString('en-US')} searches a month, ${plan.ratePerSecond} a second)`;
}

/**
 * Manual invoices, the default: the account shows an invoice to pay by bank transfer, and the
 * operator marks it paid (`vinhistory invoices pay <id>`), which applies it (manual-invoices.ts).
 */
export class ManualPaymentProvider implements PaymentProvider {
  readonly name = 'manual';

  constructor(private readonly db: Db) {}

  async purchase(input: PurchaseInput): Promise<PurchaseResult> {
    const invoice = await inTransaction(this.db, async (repos) => {
      // A customer who picks again (another plan or period) replaces the unpaid choice, so that
      // two subscriptions cannot both be paid for and started.
      const buyer = input.buyer ?? (await repos.accounts.buyerDetails(input.account.id));
      const open = await repos.invoices.findOpen(input.account.id, 'subscribe', null);
      if (open && open.planCode === input.plan.code && open.billing === input.billing && sameBuyer(open.buyer, buyer)) return open;
      if (open) await repos.invoices.markVoid(open.id, input.now);
      return repos.invoices.create(
        {
          accountId: input.account.id,
          provider: 'manual',
          kind: 'subscribe',
          planCode: input.plan.code,
          billing: input.billing,
          amountCents: termPriceCents(input.plan, input.billing),
          currency: 'usd',
          description: describeTerm(input.plan, input.billing),
          subscriptionId: null,
          buyer,
        },
        input.now,
      );
    });
    return { kind: 'invoice', invoice };
  }

  async upgrade(context: ChangeContext, to: Plan): Promise<UpgradeResult> {
    const { subscription, billing, now } = context;
    if (!billing.paidThrough) throw new PaymentError('This subscription has no paid term to upgrade; contact us to change it.');
    const term = paidTerm(new Date(subscription.startedAt), new Date(billing.paidThrough), subscription.billing);
    const amount = prorationCents(context.current, to, subscription.billing, term, now);
    const invoice = await inTransaction(this.db, async (repos) => {
      const open = await repos.invoices.findOpen(context.account.id, 'upgrade', subscription.id);
      if (open) await repos.invoices.markVoid(open.id, now);
      return repos.invoices.create(
        {
          accountId: context.account.id,
          provider: 'manual',
          kind: 'upgrade',
          planCode: to.code,
          billing: subscription.billing,
          amountCents: amount,
          currency: 'usd',
          description: `Upgrade from ${context.current.name} to ${to.name} for the rest of the term ending ${term.end.toISOString().slice(0, 10)}`,
          subscriptionId: subscription.id,
          buyer: await repos.accounts.buyerDetails(context.account.id),
        },
        now,
      );
    });
    return { kind: 'invoice', invoice };
  }

  async scheduleChange(context: ChangeContext, to: Plan | null): Promise<void> {
    await inTransaction(this.db, async (repos) => {
      await repos.billing.setScheduledPlan(context.subscription.id, to?.code ?? null, context.now);
      await this.voidOpen(repos, context, 'renew');
    });
  }

  async setCancelAtPeriodEnd(context: ChangeContext, cancel: boolean): Promise<void> {
    await inTransaction(this.db, async (repos) => {
      await repos.billing.setCancelAtPeriodEnd(context.subscription.id, cancel, context.now);
      if (cancel) await this.voidOpen(repos, context, 'renew');
    });
  }

  async renew(context: ChangeContext): Promise<Invoice> {
    const { subscription, billing, now } = context;
    if (!billing.paidThrough) throw new PaymentError('This subscription has no paid term to renew.');
    return inTransaction(this.db, async (repos) => {
      const open = await repos.invoices.findOpen(context.account.id, 'renew', subscription.id);
      if (open) return open;
      const plan = billing.scheduledPlanCode ? await repos.plans.findByCode(billing.scheduledPlanCode) : context.current;
      if (!plan) throw new PaymentError('The plan of this renewal no longer exists; choose another.');
      return repos.invoices.create(
        {
          accountId: context.account.id,
          provider: 'manual',
          kind: 'renew',
          planCode: plan.code,
          billing: subscription.billing,
          amountCents: termPriceCents(plan, subscription.billing),
          currency: 'usd',
          description: `Renewal: ${describeTerm(plan, subscription.billing)}, from ${billing.paidThrough!.slice(0, 10)}`,
          subscriptionId: subscription.id,
          buyer: await repos.accounts.buyerDetails(context.account.id),
        },
        now,
      );
    });
  }

  /** Nothing is charged automatically; the unpaid invoices for the ended subscription are void. */
  async stopNow(context: ChangeContext): Promise<void> {
    await inTransaction(this.db, async (repos) => {
      await this.voidOpen(repos, context, 'renew');
      await this.voidOpen(repos, context, 'upgrade');
    });
  }

  /** An unpaid invoice for a plan or a term the customer no longer wants is void; they can issue another. */
  private async voidOpen(repos: Repositories, context: ChangeContext, kind: InvoiceKind): Promise<void> {
    const open = await repos.invoices.findOpen(context.account.id, kind, context.subscription.id);
    if (open) await repos.invoices.markVoid(open.id, context.now);
  }
}
