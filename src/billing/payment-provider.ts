import type { AccountRow, InvoiceRow, PlanRow, SubscriptionBillingRow, SubscriptionRow } from '../storage/schema.ts';
import type { Billing } from './pricing.ts';

export interface PurchaseInput {
  account: AccountRow;
  plan: PlanRow;
  billing: Billing;
  now: Date;
}

export type PurchaseResult =
  /** Manual: an invoice to pay by bank transfer; the plan starts when it is marked paid. */
  | { kind: 'invoice'; invoice: InvoiceRow }
  /** Stripe: the customer continues on Stripe's checkout page. */
  | { kind: 'redirect'; url: string };

/** A subscription in force that the customer wants to change, with what is known about its billing. */
export interface ChangeContext {
  account: AccountRow;
  subscription: SubscriptionRow;
  billing: SubscriptionBillingRow;
  current: PlanRow;
  now: Date;
}

export type UpgradeResult = { kind: 'invoice'; invoice: InvoiceRow } | { kind: 'applied' };

/** A refusal the customer can act on, shown on the billing page as it is. */
export class PaymentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PaymentError';
  }
}

/**
 * How plans are paid for. Both implementations keep the same rules (docs/account.md): a new
 * subscription starts when its first term is paid; an upgrade applies at once for the difference
 * over the rest of the term; a downgrade applies at the renewal; a cancellation at the term's end.
 */
export interface PaymentProvider {
  readonly name: 'manual' | 'stripe';
  purchase(input: PurchaseInput): Promise<PurchaseResult>;
  upgrade(context: ChangeContext, to: PlanRow): Promise<UpgradeResult>;
  /** Moves to `to` at the renewal; null withdraws a scheduled change. */
  scheduleChange(context: ChangeContext, to: PlanRow | null): Promise<void>;
  setCancelAtPeriodEnd(context: ChangeContext, cancel: boolean): Promise<void>;
  /** Manual only: the invoice for the next term (Stripe renews by itself). */
  renew?(context: ChangeContext): Promise<InvoiceRow>;
}
