import type { Db } from '../storage/database.ts';
import type { InvoiceRow, PlanRow } from '../storage/schema.ts';
import type { Repositories } from '../storage/repositories/index.ts';
import { PaymentError, type ChangeContext, type PaymentProvider, type PurchaseInput, type PurchaseResult, type UpgradeResult } from './payment-provider.ts';
import { paidTerm, prorationCents, termPriceCents, type Billing } from './pricing.ts';
import { inTransaction } from './transaction.ts';

/** Settings key of the bank details printed on open invoices (`vinhistory invoices payee`). */
export const BANK_DETAILS_SETTING = 'bank_transfer_details';

export function describeTerm(plan: PlanRow, billing: Billing): string {
  return `${plan.name} plan, ${billing === 'annual' ? '12 months' : '1 month'} (${plan.monthly_quota.toLocaleString('en-US')} searches a month, ${plan.rate_per_second} a second)`;
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
      const open = await repos.invoices.findOpen(input.account.id, 'subscribe', null);
      if (open && open.plan_code === input.plan.code && open.billing === input.billing) return open;
      if (open) await repos.invoices.markVoid(open.id, input.now);
      return repos.invoices.create(
        {
          account_id: input.account.id,
          provider: 'manual',
          kind: 'subscribe',
          plan_code: input.plan.code,
          billing: input.billing,
          amount_cents: termPriceCents(input.plan, input.billing),
          currency: 'usd',
          description: describeTerm(input.plan, input.billing),
          subscription_id: null,
        },
        input.now,
      );
    });
    return { kind: 'invoice', invoice };
  }

  async upgrade(context: ChangeContext, to: PlanRow): Promise<UpgradeResult> {
    const { subscription, billing, now } = context;
    if (!billing.paid_through) throw new PaymentError('This subscription has no paid term to upgrade; contact us to change it.');
    const term = paidTerm(new Date(subscription.started_at), new Date(billing.paid_through), subscription.billing);
    const amount = prorationCents(context.current, to, subscription.billing, term, now);
    const invoice = await inTransaction(this.db, async (repos) => {
      const open = await repos.invoices.findOpen(context.account.id, 'upgrade', subscription.id);
      if (open) await repos.invoices.markVoid(open.id, now);
      return repos.invoices.create(
        {
          account_id: context.account.id,
          provider: 'manual',
          kind: 'upgrade',
          plan_code: to.code,
          billing: subscription.billing,
          amount_cents: amount,
          currency: 'usd',
          description: `Upgrade from ${context.current.name} to ${to.name} for the rest of the term ending ${term.end.toISOString().slice(0, 10)}`,
          subscription_id: subscription.id,
        },
        now,
      );
    });
    return { kind: 'invoice', invoice };
  }

  async scheduleChange(context: ChangeContext, to: PlanRow | null): Promise<void> {
    await inTransaction(this.db, async (repos) => {
      await repos.billing.setScheduledPlan(context.subscription.id, to?.code ?? null, context.now);
      await this.voidOpenRenewal(repos, context);
    });
  }

  async setCancelAtPeriodEnd(context: ChangeContext, cancel: boolean): Promise<void> {
    await inTransaction(this.db, async (repos) => {
      await repos.billing.setCancelAtPeriodEnd(context.subscription.id, cancel, context.now);
      if (cancel) await this.voidOpenRenewal(repos, context);
    });
  }

  async renew(context: ChangeContext): Promise<InvoiceRow> {
    const { subscription, billing, now } = context;
    if (!billing.paid_through) throw new PaymentError('This subscription has no paid term to renew.');
    return inTransaction(this.db, async (repos) => {
      const open = await repos.invoices.findOpen(context.account.id, 'renew', subscription.id);
      if (open) return open;
      const plan = billing.scheduled_plan_code ? await repos.plans.findByCode(billing.scheduled_plan_code) : context.current;
      if (!plan) throw new PaymentError('The plan of this renewal no longer exists; choose another.');
      return repos.invoices.create(
        {
          account_id: context.account.id,
          provider: 'manual',
          kind: 'renew',
          plan_code: plan.code,
          billing: subscription.billing,
          amount_cents: termPriceCents(plan, subscription.billing),
          currency: 'usd',
          description: `Renewal: ${describeTerm(plan, subscription.billing)}, from ${billing.paid_through!.slice(0, 10)}`,
          subscription_id: subscription.id,
        },
        now,
      );
    });
  }

  /** An unpaid renewal for a plan or a term the customer no longer wants is void; they can issue another. */
  private async voidOpenRenewal(repos: Repositories, context: ChangeContext): Promise<void> {
    const open = await repos.invoices.findOpen(context.account.id, 'renew', context.subscription.id);
    if (open) await repos.invoices.markVoid(open.id, context.now);
  }
}
