import type { ColumnType, Generated, Selectable } from 'kysely';
import type { SearchKind } from '../domain/search.ts';

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
  /** How many watches an account of the plan may hold (0007). */
  watch_limit: ColumnType<number, number | undefined, number>;
}

export interface AccountsTable {
  id: string;
  email: string;
  created_at: string;
  /** A report language code, or null: the reader's browser decides. */
  default_language: string | null;
  company: string | null;
  billing_address: string | null;
  tax_id: string | null;
  terms_accepted_at: string | null;
  deleted_at: string | null;
  deleted_email: string | null;
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
  /** When the lot was first stored: its first sighting (lot history). */
  created_at: string;
  updated_at: string;
  /** The keys `brand`, `model` and `primary_damage` are compared on (domain/market-key.ts), written by every upsert (0018). */
  make_key: ColumnType<string | null, string | null | undefined, string | null>;
  model_key: ColumnType<string | null, string | null | undefined, string | null>;
  damage_key: ColumnType<string | null, string | null | undefined, string | null>;
  /** What first brought the lot (0019): a file's or feed's name, `admin-api:<token name>`, `demo`, `before history`. */
  source: ColumnType<string | null, string | null | undefined, string | null>;
  /** The last import that named the lot, changed or not (0019). */
  last_seen_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set while the lot is out of its auction's listing (0019). */
  left_listing_at: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One later state of a lot: what an observation changed (0019; the first state is the lot rolled back). */
export interface LotVersionsTable {
  auction: string;
  lot_id: number;
  observed_at: string;
  source: string;
  /** JSON {field: {from, to}}. */
  changed: string;
}

/** When an import last named a lot it left unchanged (0024); a lot's last sighting is the later of this and lots.last_seen_at. */
export interface LotSightingsTable {
  auction: string;
  lot_id: number;
  last_seen_at: string;
}

/** A market group's generation (0026): bumped by every batch that writes a comparable of the group. */
export interface MarketGroupsTable {
  make_key: string;
  model_key: string;
  year: number;
  /** 'YYYY-MM', the UTC month of the sale date. */
  month: string;
  generation: number | string;
}

export interface ReportsTable {
  id: string;
  account_id: string;
  vin: string;
  created_at: string;
  /**
   * The snapshot the report page shows: a JSON array of Lot objects (copied), or since 0025 the
   * lots it named with their count of versions (domain/report-snapshot.ts).
   */
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
  /** What kind of counted call it was (0018). */
  kind: ColumnType<SearchKind, SearchKind | undefined, SearchKind>;
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
  buyer_company: string | null;
  buyer_address: string | null;
  buyer_tax_id: string | null;
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

/** The durable mail queue (0006): one row per message, claimed by a delivery worker while it sends. */
export interface MailQueueTable {
  id: string;
  kind: string;
  recipient: string;
  subject: string;
  body: string;
  /** The HTML alternative of `body` (0016); null for a plain-text message. */
  html: ColumnType<string | null, string | null | undefined, string | null>;
  status: 'queued' | 'sent' | 'skipped' | 'failed';
  attempts: number;
  created_at: string;
  next_attempt_at: string;
  claim_id: string | null;
  lease_until: string | null;
  sent_at: string | null;
  failed_at: string | null;
  last_error: string | null;
}

/** The operator's legal pages, shared by every instance (0016). */
export interface LegalDocumentsTable {
  name: 'terms' | 'privacy';
  markdown: string;
  updated_at: string;
}

/** A billing mail decided, once per (kind, subject) whichever instance decides it (0016). */
export interface BillingNoticesTable {
  kind: string;
  subject: string;
  account_id: string;
  created_at: string;
}

/** A VIN or one auction lot an account wants events for (0007): exactly one of the two is set. */
export interface WatchesTable {
  id: string;
  account_id: string;
  vin: string | null;
  auction: string | null;
  lot_id: number | null;
  created_at: string;
}

/** An account's webhook endpoint (0007); secrets are AES-256-GCM boxes (webhooks/secret-box.ts). */
export interface WebhookEndpointsTable {
  account_id: string;
  url: string;
  secret_box: string;
  /** The first characters of the secret, to tell secrets apart in the account. */
  secret_hint: string;
  previous_secret_box: string | null;
  previous_secret_until: string | null;
  enabled: number;
  failing_since: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** One event for one account, and its delivery state (0007). */
export interface WebhookOutboxTable {
  id: string;
  account_id: string;
  type: string;
  payload: string;
  created_at: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string;
  give_up_at: string;
  lease_owner: string | null;
  lease_until: string | null;
  last_attempt_at: string | null;
  finished_at: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  event_id: string;
  attempted_at: string;
  url: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

/** The photo archive's queue and state, one row per image URL (0008). */
export interface MediaImagesTable {
  id: Generated<number>;
  url: string;
  host: string;
  state: 'queued' | 'archived' | 'failed' | 'removed';
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_until: string | null;
  hash: string | null;
  ext: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** One archived content, by its sha256, however many URLs share it (0008). */
export interface MediaObjectsTable {
  hash: string;
  ext: string;
  content_type: string;
  bytes: number;
  rendition_bytes: number;
  width: number;
  height: number;
  created_at: string;
}

/** The operators' audit log (0015): who changed what, when; `details` is JSON text. */
export interface OperatorAuditTable {
  id: string;
  at: string;
  actor: string;
  action: string;
  target: string;
  details: string;
}

/** An Ed25519 key of the service that signs reports (0020): the private half sealed, never in the clear. */
export interface SigningKeysTable {
  id: string;
  /** The public key as a JWK (JSON text), as /.well-known/jwks.json publishes it. */
  public_jwk: string;
  private_sealed: string;
  created_at: string;
}

/** A report's signature, made at its first need and kept (0020). */
export interface ReportSignaturesTable {
  report_id: string;
  key_id: string;
  issuer: string;
  issued_at: string;
  /** The compact JWS; its payload is the signed Report JSON. */
  signature: string;
}

/** A feed the service pulls itself, its pulls' state, lease and checkpoint (0021; docs/feeds.md). */
export interface FeedsTable {
  id: string;
  name: string;
  url: string;
  format: string;
  /** A CSV mapping as JSON text, for format csv. */
  mapping: string | null;
  every_seconds: number;
  /** JSON: [{name, value}] where value is {env: NAME} or {sealed: box}; never a resolved secret. */
  headers: string;
  listing: number;
  /** JSON: the paging and incremental options of a JSON API feed, or null. */
  paging: string | null;
  paused: number;
  created_at: string;
  next_run_at: string;
  last_attempt_at: string | null;
  last_success_at: string | null;
  last_status: string | null;
  last_error: string | null;
  /** JSON: the last pull's counts (read, inserted, updated, unchanged, skipped). */
  last_counts: string | null;
  failures_in_row: number;
  alerted: number;
  newest_lot_at: string | null;
  accept_changes: number;
  good_etag: string | null;
  good_last_modified: string | null;
  good_bytes: number | null;
  good_rows: number | null;
  good_header: string | null;
  good_started_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
  /** JSON: the next page of a paged pull under way and what the pages before it counted. */
  checkpoint: string | null;
}

/** The lots a listing feed's last good pull listed, and those that left it (0021). */
export interface FeedListingTable {
  feed_id: string;
  auction: string;
  lot_id: number;
  listed: number;
  changed_at: string;
}

// Batches (0022, issue 26).
/** A customer's batch of searches and the lease of the runner working on it. */
export interface BatchesTable {
  id: string;
  account_id: string;
  token_id: string;
  status: 'queued' | 'running' | 'done';
  total: number;
  idempotency_key: string | null;
  body_hash: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  lease_owner: string | null;
  lease_until: string | null;
}

/** One item of a batch: its input (JSON) and, once run, its result. */
export interface BatchItemsTable {
  batch_id: string;
  idx: number;
  input: string;
  status: number | null;
  report_id: string | null;
  report_url: string | null;
  message: string | null;
  finished_at: string | null;
}

export type BatchRow = Selectable<BatchesTable>;

export interface Database {
  plans: PlansTable;
  accounts: AccountsTable;
  subscriptions: SubscriptionsTable;
  api_tokens: ApiTokensTable;
  lots: LotsTable;
  // Issue 29: lot history.
  lot_versions: LotVersionsTable;
  lot_sightings: LotSightingsTable;
  market_groups: MarketGroupsTable;
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
  watches: WatchesTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_outbox: WebhookOutboxTable;
  webhook_attempts: WebhookAttemptsTable;
  media_images: MediaImagesTable;
  media_objects: MediaObjectsTable;
  mail_queue: MailQueueTable;
  legal_documents: LegalDocumentsTable;
  billing_notices: BillingNoticesTable;
  operator_audit: OperatorAuditTable;
  // Verifiable reports (0020).
  signing_keys: SigningKeysTable;
  report_signatures: ReportSignaturesTable;
  // Feeds the service pulls itself (0021).
  feeds: FeedsTable;
  feed_listing: FeedListingTable;
  // Batches (0022).
  batches: BatchesTable;
  batch_items: BatchItemsTable;
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
export type WatchRow = Selectable<WatchesTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookOutboxRow = Selectable<WebhookOutboxTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
export type MailQueueRow = Selectable<MailQueueTable>;
