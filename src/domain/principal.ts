/** Monthly or annual: how a subscription is billed. */
export type BillingCycle = 'monthly' | 'annual';

/** Who a customer API request acts for, read from its token in a single query. */
export interface TokenPrincipal {
  tokenId: string;
  accountId: string;
  lastUsedAt: string | null;
  /** A sandbox token (`vh_test_...`): searches the sandbox catalogue, uncounted, with or without a subscription. */
  sandbox: boolean;
  /**
   * The report base URL of the brand the token's reports show (its own brand, else the account's
   * default), or null (or absent) for ours: report_url is built from it.
   */
  reportBaseUrl?: string | null;
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

/** A sandbox token's principal: its account may have no subscription at all. */
export type SandboxPrincipal = TokenPrincipal & { sandbox: true };

/** Who a search runs for: a live token of an account with a plan in force, or a sandbox token. */
export type SearchPrincipal = ActivePrincipal | SandboxPrincipal;

/** Who an admin API request acts for: a live operator token. */
export interface OperatorPrincipal {
  tokenId: string;
  name: string;
}
