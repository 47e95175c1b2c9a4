/** A plan of the price list, or a custom (enterprise) plan the operator made. */
export interface Plan {
  code: string;
  name: string;
  monthlyQuota: number;
  ratePerSecond: number;
  monthlyPriceCents: number;
  annualPriceCents: number;
  /** On the public price list; custom plans are not. */
  isPublic: boolean;
  /** The plan the price list highlights. */
  isFavourite: boolean;
  /** How many watches (webhook subscriptions to a VIN or a lot) an account of the plan may hold. */
  watchLimit: number;
  createdAt: string;
}

/** A custom plan the operator adds; it is not on the public price list. */
export interface NewPlan {
  code: string;
  name: string;
  monthlyQuota: number;
  ratePerSecond: number;
  monthlyPriceCents: number;
  /** Defaults to 12 x the monthly price (no discount), the rule for custom plans. */
  annualPriceCents?: number;
  /** Defaults to DEFAULT_WATCH_LIMIT, the Standard plan's. */
  watchLimit?: number;
}

/** Watches of a custom plan made without --watches: the Standard plan's number. */
export const DEFAULT_WATCH_LIMIT = 100;
