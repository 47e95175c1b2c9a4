import type { ColumnType, Selectable } from 'kysely';

/**
 * Table types for Kysely. Timestamps are ISO 8601 UTC strings with milliseconds
 * (`2026-11-21T07:55:12.123Z`) in both databases: they sort as text, compare as text, and come
 * back from better-sqlite3 and pg alike (docs/decisions.md). Flags are integers 0/1 for the same
 * reason. JSON payloads (images, report snapshots) are text holding JSON.
 */
export interface PlansTable {
  code: string;
  name: string;
  monthly_quota: number;
  rate_per_second: number;
  monthly_price_cents: number;
  annual_price_cents: number;
  /** 1 for the plans on the public price list, 0 for custom (enterprise) plans. */
  is_public: number;
  is_favourite: number;
  created_at: string;
}

export interface AccountsTable {
  id: string;
  email: string;
  created_at: string;
  /** A report language code, or null: the reader's browser decides. */
  default_language: string | null;
}

export interface SubscriptionsTable {
  id: string;
  account_id: string;
  plan_code: string;
  billing: 'monthly' | 'annual';
  status: 'active' | 'cancelled';
  started_at: string;
  ends_at: string | null;
  created_at: string;
}

export interface ApiTokensTable {
  id: string;
  account_id: string;
  name: string;
  token_hash: string;
  display_prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Set when the token is rotated: it keeps working until then (0003). */
  expires_at: string | null;
  /** 1 for a sandbox token, `vh_test_...` (0009). */
  sandbox: ColumnType<number, number | undefined, number>;
  /** The brand its reports show instead of the account's default (0012). */
  brand_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface LotsTable {
  auction: string;
  lot_id: number;
  vin: string;
  body: string | null;
  fuel: string | null;
  keys: string | null;
  name: string | null;
  type: string | null;
  year: number | null;
  brand: string | null;
  color: string | null;
  drive: string | null;
  model: string | null;
  price: number | null;
  engine: string | null;
  document: string | null;
  location: string | null;
  odometer: number | null;
  cylinders: number | null;
  highlight: string | null;
  sale_date: string | null;
  repair_cost: number | null;
  location_zip: string | null;
  retail_value: number | null;
  transmission: string | null;
  configuration: string | null;
  odometer_type: string | null;
  primary_damage: string | null;
  secondary_damage: string | null;
  /** JSON array of absolute URLs. */
  images: string;
  created_at: string;
  updated_at: string;
}

export interface ReportsTable {
  id: string;
  account_id: string;
  vin: string;
  created_at: string;
  /** JSON array of Lot objects: the snapshot the report page shows. */
  lots: string;
  /** 1 when a sandbox token made it from the sandbox catalogue (0009). */
  sandbox: ColumnType<number, number | undefined, number>;
  /** The token whose search made it, for its brand; null before 0012. */
  token_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** An account's brand for white-label reports (0012). */
export interface BrandsTable {
  id: string;
  account_id: string;
  /** 1 for the account's default brand (at most one per account). */
  is_default: number;
  name: string;
  /** SHA-256 (hex) of the logo's PNG bytes: its address and cache key. */
  logo_hash: string | null;
  /** The logo as PNG, base64. */
  logo_png: string | null;
  accent: string | null;
  contact: string | null;
  report_base_url: string | null;
  created_at: string;
  updated_at: string;
}

export interface SearchesTable {
  id: string;
  account_id: string;
  token_id: string;
  vin: string;
  created_at: string;
  outcome: 'found' | 'not_found';
  report_id: string | null;
  period_start: string;
  /** 1 for a sandbox token's search: recorded (its Idempotency-Key names it) but never counted (0009). */
  sandbox: ColumnType<number, number | undefined, number>;
}

export interface UsageCountersTable {
  account_id: string;
  period_start: string;
  used: ColumnType<number, number, number>;
}

export interface IdempotencyKeysTable {
  account_id: string;
  key: string;
  vin: string;
  search_id: string;
  created_at: string;
}

/** Deployment-wide values shared by every instance (0003), e.g. the generated cookie secret. */
export interface SettingsTable {
  key: string;
  value: string;
  created_at: string;
}

/** An account's password (scrypt, self-describing string). No row: no password set yet. */
export interface AccountPasswordsTable {
  account_id: string;
  password_hash: string;
  updated_at: string;
}

/** A browser session of the personal account; the cookie holds the id, this table its SHA-256. */
export interface WebSessionsTable {
  id_hash: string;
  account_id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
}

export interface PasswordResetsTable {
  token_hash: string;
  account_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** A failed log-in or a reset request, counted per subject (email, address) in a time window. */
export interface AuthAttemptsTable {
  id: string;
  kind: string;
  subject: string;
  created_at: string;
}

export interface InvoicesTable {
  id: string;
  reference: string;
  account_id: string;
  provider: 'manual' | 'stripe';
  kind: 'subscribe' | 'renew' | 'upgrade';
  plan_code: string;
  billing: 'monthly' | 'annual';
  amount_cents: number;
  currency: string;
  description: string;
  subscription_id: string | null;
  status: 'open' | 'paid' | 'void';
  external_id: string | null;
  hosted_url: string | null;
  created_at: string;
  paid_at: string | null;
  voided_at: string | null;
}

/** How a subscription is paid and what is pending on it; no row for the operator's CLI ones. */
export interface SubscriptionBillingTable {
  subscription_id: string;
  provider: 'operator' | 'manual' | 'stripe';
  external_id: string | null;
  cancel_at_period_end: number;
  scheduled_plan_code: string | null;
  /** The end of the term paid for; the subscription's ends_at may add a grace for the renewal charge. */
  paid_through: string | null;
  updated_at: string;
}

export interface StripeCustomersTable {
  account_id: string;
  customer_id: string;
  created_at: string;
}

export interface WebhookEventsTable {
  id: string;
  provider: string;
  type: string;
  received_at: string;
}

/** Per Stripe subscription, the newest state event applied and its deletion (0005). */
export interface StripeSubscriptionEventsTable {
  stripe_subscription_id: string;
  last_event_at: string;
  deleted_at: string | null;
  updated_at: string;
}

/** A token of the admin API (0004); only its SHA-256 is stored. */
export interface OperatorTokensTable {
  id: string;
  name: string;
  token_hash: string;
  display_prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface Database {
  plans: PlansTable;
  accounts: AccountsTable;
  subscriptions: SubscriptionsTable;
  api_tokens: ApiTokensTable;
  lots: LotsTable;
  reports: ReportsTable;
  brands: BrandsTable;
  searches: SearchesTable;
  usage_counters: UsageCountersTable;
  idempotency_keys: IdempotencyKeysTable;
  settings: SettingsTable;
  account_passwords: AccountPasswordsTable;
  web_sessions: WebSessionsTable;
  password_resets: PasswordResetsTable;
  auth_attempts: AuthAttemptsTable;
  invoices: InvoicesTable;
  subscription_billing: SubscriptionBillingTable;
  stripe_customers: StripeCustomersTable;
  webhook_events: WebhookEventsTable;
  operator_tokens: OperatorTokensTable;
  stripe_subscription_events: StripeSubscriptionEventsTable;
}

export type PlanRow = Selectable<PlansTable>;
export type AccountRow = Selectable<AccountsTable>;
export type SubscriptionRow = Selectable<SubscriptionsTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type BrandRow = Selectable<BrandsTable>;
export type LotRow = Selectable<LotsTable>;
export type SearchRow = Selectable<SearchesTable>;

export type InvoiceRow = Selectable<InvoicesTable>;
export type SubscriptionBillingRow = Selectable<SubscriptionBillingTable>;
export type WebSessionRow = Selectable<WebSessionsTable>;
export type OperatorTokenRow = Selectable<OperatorTokensTable>;
