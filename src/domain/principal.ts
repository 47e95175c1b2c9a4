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

/** What a search may run for: a plan in force, or a sandbox token (which searches only the test catalogue, with or without one). */
export function canSearch(principal: TokenPrincipal): principal is SearchPrincipal {
  return principal.subscription !== null || principal.sandbox;
}

/** What a search relies on of a subscription: which one, where its periods start, its quota and its rate. */
export type SubscriptionFigures = Pick<NonNullable<TokenPrincipal['subscription']>, 'id' | 'startedAt' | 'monthlyQuota' | 'ratePerSecond'>;

/**
 * Whether two reads of an account's subscription in force say the same to a search: both none, or
 * the same one on the same figures (a count read from the database may arrive as a string).
 */
export function sameSubscription(a: SubscriptionFigures | null, b: SubscriptionFigures | null): boolean {
  if (a === null || b === null) return a === b;
  return a.id === b.id && a.startedAt === b.startedAt && Number(a.monthlyQuota) === Number(b.monthlyQuota) && Number(a.ratePerSecond) === Number(b.ratePerSecond);
}
