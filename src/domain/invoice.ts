import type { BillingCycle } from './principal.ts';

export type InvoiceKind = 'subscribe' | 'renew' | 'upgrade';
export type InvoiceStatus = 'open' | 'paid' | 'void';

/** A bill for a term of a plan: a manual one (bank transfer) or a copy of Stripe's. */
export interface Invoice {
  id: string;
  /** What the customer quotes on a bank transfer (VH-XXXX-XXXX). */
  reference: string;
  accountId: string;
  provider: 'manual' | 'stripe';
  kind: InvoiceKind;
  planCode: string;
  billing: BillingCycle;
  amountCents: number;
  currency: string;
  description: string;
  subscriptionId: string | null;
  status: InvoiceStatus;
  externalId: string | null;
  hostedUrl: string | null;
  createdAt: string;
  paidAt: string | null;
  voidedAt: string | null;
}
