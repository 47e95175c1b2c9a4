import type { BillingCycle } from './principal.ts';

/** An account's right to search on a plan, from startedAt until endsAt (null: until cancelled). */
export interface Subscription {
  id: string;
  accountId: string;
  planCode: string;
  billing: BillingCycle;
  status: 'active' | 'cancelled';
  startedAt: string;
  endsAt: string | null;
  createdAt: string;
}

/** Who bills a subscription: the operator's own arrangement (CLI), manual invoices, or Stripe. */
export type BillingProvider = 'operator' | 'manual' | 'stripe';

/** How a subscription is paid and what is pending on it. */
export interface SubscriptionBilling {
  subscriptionId: string;
  provider: BillingProvider;
  /** The subscription's id at the provider (Stripe's sub_...). */
  externalId: string | null;
  cancelAtPeriodEnd: boolean;
  scheduledPlanCode: string | null;
  /** The end of the term paid for; the subscription's endsAt may add a grace for the renewal charge. */
  paidThrough: string | null;
  updatedAt: string;
}
