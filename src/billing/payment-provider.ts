import type { Account, BuyerDetails } from '../domain/account.ts';
import type { Invoice } from '../domain/invoice.ts';
import type { Plan } from '../domain/plan.ts';
import type { BillingCycle } from '../domain/principal.ts';
import type { Subscription, SubscriptionBilling } from '../domain/subscription.ts';

export interface PurchaseInput {
  account: Account;
  plan: Plan;
  billing: BillingCycle;
  now: Date;
  /** Who the invoice is addressed to (manual invoices); the account's stored details when absent. */
  buyer?: BuyerDetails;
}

export type PurchaseResult =
  /** Manual: an invoice to pay by bank transfer; the plan starts when it is marked paid. */
  | { kind: 'invoice'; invoice: Invoice }
  /** Stripe: the customer continues on Stripe's checkout page. */
  | { kind: 'redirect'; url: string };

/** A subscription in force that the customer wants to change, with what is known about its billing. */
export interface ChangeContext {
  account: Account;
  subscription: Subscription;
  billing: SubscriptionBilling;
  current: Plan;
  now: Date;
}

export type UpgradeResult = { kind: 'invoice'; invoice: Invoice } | { kind: 'applied' };

/** A refusal the customer can act on, shown on the billing page as it is. */
export class PaymentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PaymentError';
  }
}

/**
 * The payment provider could not be reached or refused our credentials (Stripe down, a bad key):
 * nothing was charged or changed. The customer may try again, or pay by invoice instead.
 */
export class PaymentUnavailableError extends PaymentError {
  constructor(readonly provider: 'stripe', cause: unknown) {
    super('Card payment is not available right now: we could not reach our payment provider. Nothing was charged.');
    this.name = 'PaymentUnavailableError';
    this.cause = cause;
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
  upgrade(context: ChangeContext, to: Plan): Promise<UpgradeResult>;
  /** Moves to `to` at the renewal; null withdraws a scheduled change. */
  scheduleChange(context: ChangeContext, to: Plan | null): Promise<void>;
  setCancelAtPeriodEnd(context: ChangeContext, cancel: boolean): Promise<void>;
  /** Manual only: the invoice for the next term (Stripe renews by itself). */
  renew?(context: ChangeContext): Promise<Invoice>;
  /**
   * Stops billing the subscription now, at the provider (the operator ends a plan at once); the
   * caller ends it here after this succeeded, so a refusal leaves both sides as they were.
   */
  stopNow(context: ChangeContext): Promise<void>;
}
