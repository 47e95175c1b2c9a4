/** Monthly or annual: how a subscription is billed. */
export type BillingCycle = 'monthly' | 'annual';

/** Who a customer API request acts for, read from its token in a single query. */
export interface TokenPrincipal {
  tokenId: string;
  accountId: string;
  lastUsedAt: string | null;
  subscription: {
    id: string;
    startedAt: string;
    billing: BillingCycle;
    planCode: string;
    planName: string;
    monthlyQuota: number;
    ratePerSecond: number;
  } | null;
}

/** A principal whose account has a subscription in force: what a search runs for. */
export type ActivePrincipal = TokenPrincipal & { subscription: NonNullable<TokenPrincipal['subscription']> };

/** Who an admin API request acts for: a live operator token. */
export interface OperatorPrincipal {
  tokenId: string;
  name: string;
}
