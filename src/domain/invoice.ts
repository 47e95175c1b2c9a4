import type { BuyerDetails } from './account.ts';
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
  /** The buyer's details as they were when the invoice was issued. */
  buyer: BuyerDetails;
}

/** Days a bank-transfer invoice gives to pay, from its issue. */
export const INVOICE_PAYMENT_DAYS = 14;

/** When an invoice is due: a fixed number of days after it was issued. */
export function invoiceDueAt(invoice: Pick<Invoice, 'createdAt'>): string {
  return new Date(Date.parse(invoice.createdAt) + INVOICE_PAYMENT_DAYS * 24 * 60 * 60 * 1000).toISOString();
}
