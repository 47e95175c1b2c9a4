import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { ThreadPriority } from './worker-threads.ts';

/**
 * The only reader of process.env. Everything configurable is parsed and checked here once, at
 * start, so that a bad setting stops the process with a message naming the variable instead of
 * failing later in a request.
 */
const EnvSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
  }),
  // Digits only: a numeric conversion would quietly read 3.5, 1e3, 0x10 or true as a port.
  PORT: Type.String({ pattern: '^[0-9]{1,5}$', default: '3000' }),
  /**
   * Unset: 127.0.0.1 outside production (a development server serves the demo account, whose token
   * its banner prints), 0.0.0.0 in production (a container or a proxy on another host reaches it).
   */
  HOST: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^(postgres|postgresql)://' })),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$' })),
  /**
   * How long a statement waits for a lock another connection holds (SQLite's busy timeout,
   * PostgreSQL's lock_timeout) before the request is answered 503 with Retry-After.
   */
  DATABASE_LOCK_TIMEOUT_MS: Type.String({ pattern: '^[0-9]{1,7}$', default: '5000' }),
  SQLITE_COMMIT_THREAD: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** How long a rate-limit decision may wait for Redis before the instance decides alone. */
  REDIS_TIMEOUT_MS: Type.String({ pattern: '^[0-9]{1,5}$', default: '50' }),
  /**
   * The longest a client may take to send a whole request, headers and body: a slow or stalled
   * client is answered 408 and its connection closed instead of holding it open.
   */
  REQUEST_TIMEOUT_MS: Type.String({ pattern: '^[1-9][0-9]{2,6}$', default: '60000' }),
  /** Bearer token that opens /metrics; without it /metrics answers only on a loopback connection. */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  /** Behind a load balancer: trust X-Forwarded-For/-Proto from it (Fastify's trustProxy). */
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  /** Signs session cookies; generated once and kept in the database when unset. */
  COOKIE_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  MAIL_FROM: Type.String({ minLength: 3, default: 'vinhistory <no-reply@vinhistory.local>' }),
  STRIPE_SECRET_KEY: Type.Optional(Type.String({ pattern: '^(sk|rk)_' })),
  STRIPE_WEBHOOK_SECRET: Type.Optional(Type.String({ pattern: '^whsec_' })),
  /** Where Stripe's API is, when not api.stripe.com: a local stand-in (stripe-mock, the CLI's tests). */
  STRIPE_API_URL: Type.Optional(Type.String({ pattern: '^https?://[^/]+/?$' })),
  /**
   * Lifts the outbound rules for webhook deliveries and photo fetches (public https addresses only):
   * for tests and private networks.
   */
  OUTBOUND_ALLOW_PRIVATE: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  /** The Chromium (or Chrome) that prints report PDFs; without it the PDF answers 503 and the pages still work. */
  PDF_BROWSER_PATH: Type.String({ minLength: 1, default: '/usr/bin/chromium' }),
  /** Report PDFs printed at once (one shared browser, a tab each): each takes a core for a moment. */
  PDF_MAX_CONCURRENT: Type.String({ pattern: '^[1-9][0-9]?$', default: '2' }),
  /** How long a PDF waits for its lot photos, all together, before drawing placeholders. */
  PDF_PHOTO_BUDGET_MS: Type.String({ pattern: '^[0-9]{1,5}$', default: '3000' }),
  /** Uncached PDFs that may wait for a print slot; past them a PDF answers 503 with Retry-After (a flood waits nowhere). */
  PDF_QUEUE_MAX: Type.String({ pattern: '^[0-9]{1,3}$', default: '8' }),
  /** The most the printed PDFs may take on disk, in MiB; the least recently served go first past it. */
  PDF_CACHE_MAX_MB: Type.String({ pattern: '^[1-9][0-9]{0,6}$', default: '1024' }),
  /** A printed PDF not served for this many days is deleted (printed again if asked for). */
  PDF_CACHE_MAX_AGE_DAYS: Type.String({ pattern: '^[1-9][0-9]{0,3}$', default: '30' }),
  /** The most memory, in MiB, the market's comparables kept per process may take (market/comparables-cache.ts); 0 keeps none. */
  MARKET_CACHE_MAX_MB: Type.String({ pattern: '^[0-9]{1,6}$', default: '256' }),
  /**
   * Seals the webhook endpoints' signing secrets (AES-256-GCM). When unset, a key is generated once
   * and kept in the database; set it to keep the key apart from a copy of the database.
   */
  WEBHOOK_SECRET_KEY: Type.Optional(Type.String({ minLength: 32 })),
  /** Whether `vinhistory serve` runs the webhook delivery worker (false: run `vinhistory deliver` apart). */
  WEBHOOK_WORKER: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  /**
   * How long a worker's claim holds an event: an instance killed outright leaves its events to
   * another after this. At least 15 s (the 10 s an attempt may take, then its record), so that a
   * live worker never loses an event it is still sending.
   */
  WEBHOOK_LEASE_MS: Type.String({ pattern: '^[1-9][0-9]{4,6}$', default: '60000' }),
  /**
   * Batches (issue 26): how long a runner's claim holds a batch, renewed every third of it while
   * it runs; the batch of an instance killed outright is taken up again after this.
   */
  BATCH_LEASE_MS: Type.String({ pattern: '^[1-9][0-9]{3,5}$', default: '30000' }),
  /** The photo archive: off (the default), a directory, or an S3-compatible bucket (docs/media.md). */
  MEDIA_ARCHIVE: Type.Union([Type.Literal('off'), Type.Literal('directory'), Type.Literal('s3')], { default: 'off' }),
  /** The directory store's root; DATA_DIR/media when unset. */
  MEDIA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  /** Photos fetched at once, overall and from one host. */
  MEDIA_CONCURRENCY: Type.String({ pattern: '^[1-9][0-9]{0,2}$', default: '8' }),
  MEDIA_HOST_CONCURRENCY: Type.String({ pattern: '^[1-9][0-9]{0,2}$', default: '2' }),
  /** The largest photo fetched, in bytes: a larger answer fails as too large. */
  MEDIA_MAX_BYTES: Type.String({ pattern: '^[1-9][0-9]{3,9}$', default: '15728640' }),
  /**
   * The most of the time the archive's image process may spend on photos (0.01 to 1): after a photo
   * that took t, the next waits t × (1/share − 1). Searches' p99 while archiving (docs/media.md).
   */
  MEDIA_IMAGE_SHARE: Type.String({ pattern: '^(0?\\.(0[1-9]|[1-9][0-9]?)|1(\\.0{1,2})?)$', default: '0.5' }),
  S3_BUCKET: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' })),
  /** An S3-compatible service other than AWS (MinIO, R2, B2): its base URL. */
  S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s/]+/?$' })),
  S3_REGION: Type.String({ minLength: 1, default: 'us-east-1' }),
  S3_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  S3_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  /** Bucket in the path (https://host/bucket/key), as MinIO and most stand-ins need. */
  S3_FORCE_PATH_STYLE: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  /** Keys under this prefix in the bucket, e.g. `media/`. */
  S3_PREFIX: Type.String({ pattern: '^([A-Za-z0-9._-]+/)*$', default: '' }),
  /**
   * The seller on every invoice and the address customers write to (docs/decisions.md, "Seller
   * identity"). Outside production a missing one is a marked placeholder; in production `serve` and
   * /readyz report it. `\n` in a value starts a new line (addresses, bank details).
   */
  SELLER_NAME: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  SELLER_ADDRESS: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  SELLER_TAX_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  SELLER_BANK_DETAILS: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  SUPPORT_EMAIL: Type.Optional(Type.String({ pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', maxLength: 254 })),
  /** Where the operator's terms.md and privacy.md are; DATA_DIR/legal when unset. */
  LEGAL_DIR: Type.Optional(Type.String({ minLength: 1 })),
  /** Billing mail (docs/mail.md): the operator's copy of each new invoice and payment goes here; none when unset. */
  OPERATOR_EMAIL: Type.Optional(Type.String({ pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$', maxLength: 254 })),
  // --- operations (deploy, readiness, backups): docs/deploy.md ---
  /**
   * How mail leaves: `smtp` (needs SMTP_URL) or `outbox` (files under DATA_DIR/outbox). Unset:
   * smtp when SMTP_URL is set, else the outbox, which production reports as not ready (a reset mail
   * written to one instance's disk reaches nobody) unless it is chosen here explicitly.
   */
  MAIL_TRANSPORT: Type.Optional(Type.Union([Type.Literal('smtp'), Type.Literal('outbox')])),
  // --- end operations ---
  // --- feeds (docs/feeds.md) ---
  /** Whether `vinhistory serve` pulls the registered feeds (one instance at a time per feed). */
  FEEDS_WORKER: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  /** How long an instance's hold on a feed lasts unless renewed: a killed puller's feed is taken over after it. */
  FEEDS_LEASE_MS: Type.String({ pattern: '^[1-9][0-9]{3,7}$', default: '60000' }),
  FEEDS_POLL_MS: Type.String({ pattern: '^[1-9][0-9]{2,7}$', default: '15000' }),
  /** The largest feed download, uncompressed, in MiB. */
  FEEDS_MAX_MB: Type.String({ pattern: '^[1-9][0-9]{0,5}$', default: '2048' }),
  /**
   * The OS priority of a pull's reading and storing threads on Linux: `idle` (SCHED_IDLE through
   * chrt; niceness 19 where there is no chrt, and for the storing thread, which holds SQLite's
   * write lock: src/ingest/worker/store-file-in-worker.ts), or a niceness from 0 (as the server) to 19.
   */
  FEEDS_THREAD_PRIORITY: Type.Optional(Type.String({ pattern: '^(?:idle|[0-9]|1[0-9])$' })),
  /** Before FEEDS_THREAD_PRIORITY: a niceness (0-19), still honoured where FEEDS_THREAD_PRIORITY is not set. */
  FEEDS_THREAD_NICE: Type.Optional(Type.String({ pattern: '^(?:[0-9]|1[0-9])$' })),
  /** SQLite: while searches commit, a pull's batch is written in transactions of about this much write-lock time, ms (0: whole batches). */
  FEEDS_SLICE_MS: Type.String({ pattern: '^(?:0|[0-9]{1,3}(?:\\.[0-9]{1,3})?)$', default: '0.5' }),
  /**
   * The longest a pull's reading or storing thread pauses at a time while the server answers a
   * counted API request (a search, the catalogue, the market, a lot, its history), ms; after a
   * pause that long it works on a tenth of it before pausing again. 0: a pull never pauses.
   */
  FEEDS_YIELD_MS: Type.String({ pattern: '^(?:0|[1-9][0-9]{0,4})$', default: '100' }),
  // --- end feeds ---
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
});

type Env = Static<typeof EnvSchema>;

export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly file: string }
  | { readonly kind: 'postgres'; readonly url: string };

/** Where archived photos are kept (docs/media.md); null in Config.media.store when the archive is off. */
export type MediaStoreConfig =
  | { readonly kind: 'directory'; readonly dir: string }
  | {
      readonly kind: 's3';
      readonly bucket: string;
      readonly endpoint: string | null;
      readonly region: string;
      /** Null: the SDK's own chain (environment, instance role). Never logged. */
      readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | null;
      readonly forcePathStyle: boolean;
      readonly prefix: string;
    };

export interface MediaConfig {
  readonly store: MediaStoreConfig | null;
  readonly concurrency: number;
  readonly hostConcurrency: number;
  readonly maxBytes: number;
  /** The most of the time the image process may spend on photos. */
  readonly imageShare: number;
}

export interface Config {
  readonly env: Env['NODE_ENV'];
  readonly isProduction: boolean;
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly database: DatabaseConfig;
  /** The lock wait of every database connection, in ms (openDatabase's lockTimeoutMs). */
  readonly databaseLockTimeoutMs: number;
  /** SQLite, `serve`: commit searches on a thread of their own instead of on the event loop. */
  readonly sqliteCommitThread: boolean;
  /** Base of every report_url, without a trailing slash. Never derived from a request. */
  readonly publicBaseUrl: string;
  readonly logLevel: Env['LOG_LEVEL'];
  /** Set for a scaled-out deployment: shared rate limiting (and idempotency) across instances. */
  readonly redisUrl: string | null;
  readonly redisTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** The bound of the market's comparables kept in memory, in bytes (0: none kept). */
  readonly marketCacheMaxBytes: number;
  readonly metricsToken: string | null;
  /** Fastify's trustProxy: true, a hop count, or a list of addresses/CIDRs. False when unset. */
  readonly trustProxy: boolean | number | string;
  readonly cookieSecret: string | null;
  /**
   * `transport` is how mail leaves; `transportChosen` is false when the outbox is only the fallback
   * for a missing SMTP_URL (production's readiness reports it).
   */
  readonly mail: { readonly smtpUrl: string | null; readonly from: string; readonly transport: 'smtp' | 'outbox'; readonly transportChosen: boolean };
  /** Stripe is the payment provider when a secret key is set; manual invoices otherwise. */
  /** Requests to URLs a customer or a feed gave: see src/outbound/outbound-policy.ts. */
  readonly outbound: { readonly allowPrivate: boolean };
  /** Report PDFs: the browser that prints them, how many at once, the photos' time budget. */
  readonly pdf: {
    readonly browserPath: string;
    readonly maxConcurrent: number;
    readonly photoBudgetMs: number;
    /** Uncached PDFs waiting beyond the `maxConcurrent` printing. */
    readonly queueMax: number;
    readonly cacheMaxBytes: number;
    readonly cacheMaxAgeMs: number;
  };
  /** Webhooks: the key that seals endpoint secrets (null: the one kept in the database), and whether serve delivers. */
  readonly webhooks: { readonly secretKey: string | null; readonly workerInServe: boolean; readonly leaseMs: number };
  /** Batches: how long a runner's claim holds a batch (issue 26). */
  readonly batches: { readonly leaseMs: number };
  /** The photo archive: `store` is null when it is off. */
  readonly media: MediaConfig;
  /** As configured; null when unset (SellerService supplies the marked development placeholders). */
  readonly seller: { readonly name: string | null; readonly address: string | null; readonly taxId: string | null; readonly bankDetails: string | null };
  readonly supportEmail: string | null;
  readonly legalDir: string;
  /** Billing mail: who gets the operator's copies (null: nobody). */
  readonly billingMail: { readonly operatorEmail: string | null };
  readonly stripe: { readonly secretKey: string; readonly webhookSecret: string | null; readonly apiUrl: string | null } | null;
  /**
   * Feeds: whether serve pulls them, the lease, the largest download, and the environment a
   * header's `env:NAME` is read from when a pull runs (read then, so that a value set after start
   * or rotated is the one sent; never stored).
   */
  readonly feeds: { readonly workerInServe: boolean; readonly leaseMs: number; readonly pollMs: number; readonly maxBytes: number; readonly threadPriority: ThreadPriority; readonly sliceMs: number; readonly yieldMs: number; readonly environment: (name: string) => string | undefined };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** A webhook lease outlasts the 10 s an attempt may take and the time to record it. */
const MIN_WEBHOOK_LEASE_MS = 15_000;

const HINTS: Record<string, string> = {
  PORT: 'an integer from 0 to 65535',
  DATABASE_URL: 'a postgres:// or postgresql:// URL (leave it unset for the embedded SQLite database)',
  PUBLIC_BASE_URL: 'an absolute http(s) URL such as https://api.example.com',
  REDIS_URL: 'a redis:// or rediss:// URL',
  REDIS_TIMEOUT_MS: 'a whole number of milliseconds, e.g. 50',
  DATABASE_LOCK_TIMEOUT_MS: 'a whole number of milliseconds, e.g. 5000',
  SQLITE_COMMIT_THREAD: 'true or false',
  REQUEST_TIMEOUT_MS: 'a whole number of milliseconds from 100 to 9999999, e.g. 60000',
  METRICS_TOKEN: 'at least 16 characters',
  COOKIE_SECRET: 'at least 32 characters',
  OPERATOR_EMAIL: 'an email address such as billing@example.com',
  SMTP_URL: 'an smtp:// or smtps:// URL such as smtps://user:pass@smtp.example.com:465',
  STRIPE_SECRET_KEY: 'a Stripe secret key (sk_live_..., sk_test_... or rk_...)',
  STRIPE_WEBHOOK_SECRET: 'a Stripe webhook signing secret (whsec_...)',
  OUTBOUND_ALLOW_PRIVATE: 'true or false',
  PDF_BROWSER_PATH: 'the path of a Chromium or Chrome executable',
  PDF_MAX_CONCURRENT: 'a whole number from 1 to 99, e.g. 2',
  PDF_PHOTO_BUDGET_MS: 'a whole number of milliseconds, e.g. 3000',
  PDF_QUEUE_MAX: 'a whole number from 0 to 999, e.g. 8',
  PDF_CACHE_MAX_MB: 'a whole number of MiB from 1 to 9999999, e.g. 1024',
  PDF_CACHE_MAX_AGE_DAYS: 'a whole number of days from 1 to 9999, e.g. 30',
  MARKET_CACHE_MAX_MB: 'a whole number of MiB from 0 to 999999, e.g. 256',
  WEBHOOK_SECRET_KEY: 'at least 32 characters (e.g. openssl rand -base64 32)',
  WEBHOOK_WORKER: 'true or false',
  FEEDS_WORKER: 'true or false',
  FEEDS_LEASE_MS: 'a whole number of milliseconds from 1000 to 99999999, e.g. 60000',
  FEEDS_POLL_MS: 'a whole number of milliseconds from 100 to 99999999, e.g. 15000',
  FEEDS_MAX_MB: 'a whole number of MiB from 1 to 999999, e.g. 2048',
  FEEDS_THREAD_PRIORITY: 'idle (SCHED_IDLE), or a whole number from 0 (as the server) to 19 (lowest priority)',
  FEEDS_THREAD_NICE: 'a whole number from 0 (as the server) to 19 (lowest priority), e.g. 19',
  FEEDS_SLICE_MS: 'milliseconds, 0 (whole batches) or a number such as 0.5',
  FEEDS_YIELD_MS: 'a whole number of milliseconds from 0 (never pause) to 99999, e.g. 100',
  WEBHOOK_LEASE_MS: `a whole number of milliseconds from ${MIN_WEBHOOK_LEASE_MS} to 9999999, e.g. 60000`,
  BATCH_LEASE_MS: 'a whole number of milliseconds from 1000 to 999999, e.g. 30000',
  MEDIA_ARCHIVE: 'one of off, directory, s3',
  MEDIA_CONCURRENCY: 'a whole number from 1 to 999',
  MEDIA_HOST_CONCURRENCY: 'a whole number from 1 to 999',
  MEDIA_MAX_BYTES: 'a whole number of bytes from 1000 to 9999999999',
  MEDIA_IMAGE_SHARE: 'a fraction from 0.01 to 1 (two decimals at most)',
  S3_BUCKET: 'an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)',
  S3_ENDPOINT: 'the base URL of an S3-compatible service, such as https://s3.example.com',
  S3_FORCE_PATH_STYLE: 'true or false',
  S3_PREFIX: 'empty, or folder names each ending in /, such as media/',
  SELLER_NAME: '1 to 200 characters, e.g. "Acme Data Ltd"',
  SELLER_ADDRESS: '1 to 500 characters; \\n starts a new line',
  SELLER_TAX_ID: '1 to 50 characters, e.g. "GB123456789"',
  SELLER_BANK_DETAILS: '1 to 500 characters, e.g. "IBAN GB33 BUKB 2020 1555 5555 55, BIC BUKBGB22"',
  SUPPORT_EMAIL: 'an email address such as support@example.com',
  MAIL_TRANSPORT: 'smtp or outbox',
  HOST: 'an address or host name to listen on, up to 255 characters',
  LOG_LEVEL: 'one of fatal, error, warn, info, debug, trace, silent',
  NODE_ENV: 'one of development, production, test',
};

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = source[key];
    // An empty variable means "not set": `PORT= npm start` should not be an error.
    if (value !== undefined && value.trim() !== '') raw[key] = value.trim();
  }
  const withDefaults = Value.Default(EnvSchema, structuredClone(raw));
  const converted = Value.Convert(EnvSchema, withDefaults);
  const problems = [...Value.Errors(EnvSchema, converted)].map((error) => {
    const name = error.path.replace(/^\//, '');
    const hint = HINTS[name];
    return `${name}=${JSON.stringify(raw[name])} is not valid${hint ? `: expected ${hint}` : ` (${error.message})`}`;
  });
  const env = converted as Env;
  const port = Number(env.PORT);
  if (problems.length === 0 && Number(env.WEBHOOK_LEASE_MS) < MIN_WEBHOOK_LEASE_MS) {
    problems.push(`WEBHOOK_LEASE_MS=${JSON.stringify(raw.WEBHOOK_LEASE_MS)} is not valid: expected ${HINTS.WEBHOOK_LEASE_MS}`);
  }
  if (problems.length === 0 && port > 65535) {
    problems.push(`PORT=${JSON.stringify(raw.PORT)} is not valid: expected ${HINTS.PORT}`);
  }
  if (problems.length === 0 && env.NODE_ENV === 'production' && !env.PUBLIC_BASE_URL) {
    problems.push('PUBLIC_BASE_URL must be set in production: every report_url is built from it');
  }
  if (problems.length === 0 && env.STRIPE_SECRET_KEY && !env.STRIPE_WEBHOOK_SECRET) {
    problems.push('STRIPE_WEBHOOK_SECRET must be set with STRIPE_SECRET_KEY: without it no payment can be confirmed');
  }
  if (problems.length === 0 && env.MEDIA_ARCHIVE === 's3' && !env.S3_BUCKET) {
    problems.push('S3_BUCKET must be set with MEDIA_ARCHIVE=s3');
  }
  if (problems.length === 0 && Boolean(env.S3_ACCESS_KEY_ID) !== Boolean(env.S3_SECRET_ACCESS_KEY)) {
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together or not at all');
  }
  if (problems.length === 0 && env.MAIL_TRANSPORT === 'smtp' && !env.SMTP_URL) {
    problems.push('SMTP_URL must be set with MAIL_TRANSPORT=smtp');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const dataDir = path.resolve(env.DATA_DIR);
  const database: DatabaseConfig = env.DATABASE_URL
    ? { kind: 'postgres', url: env.DATABASE_URL }
    : { kind: 'sqlite', file: path.join(dataDir, 'vinhistory.sqlite') };
  const publicBaseUrl = (env.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');

  return Object.freeze({
    env: env.NODE_ENV,
    isProduction: env.NODE_ENV === 'production',
    port,
    host: env.HOST ?? (env.NODE_ENV === 'production' ? '0.0.0.0' : '127.0.0.1'),
    dataDir,
    database: Object.freeze(database),
    databaseLockTimeoutMs: Number(env.DATABASE_LOCK_TIMEOUT_MS),
    sqliteCommitThread: env.SQLITE_COMMIT_THREAD === 'true',
    publicBaseUrl,
    logLevel: env.LOG_LEVEL,
    redisUrl: env.REDIS_URL ?? null,
    redisTimeoutMs: Math.max(1, Number(env.REDIS_TIMEOUT_MS)),
    requestTimeoutMs: Number(env.REQUEST_TIMEOUT_MS),
    marketCacheMaxBytes: Number(env.MARKET_CACHE_MAX_MB) * 1024 * 1024,
    metricsToken: env.METRICS_TOKEN ?? null,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    cookieSecret: env.COOKIE_SECRET ?? null,
    mail: Object.freeze({
      smtpUrl: env.SMTP_URL ?? null,
      from: env.MAIL_FROM,
      transport: env.MAIL_TRANSPORT ?? (env.SMTP_URL ? ('smtp' as const) : ('outbox' as const)),
      transportChosen: env.MAIL_TRANSPORT !== undefined || env.SMTP_URL !== undefined,
    }),
    outbound: Object.freeze({ allowPrivate: env.OUTBOUND_ALLOW_PRIVATE === 'true' }),
    pdf: Object.freeze({
      browserPath: env.PDF_BROWSER_PATH,
      maxConcurrent: Number(env.PDF_MAX_CONCURRENT),
      photoBudgetMs: Number(env.PDF_PHOTO_BUDGET_MS),
      queueMax: Number(env.PDF_QUEUE_MAX),
      cacheMaxBytes: Number(env.PDF_CACHE_MAX_MB) * 1024 * 1024,
      cacheMaxAgeMs: Number(env.PDF_CACHE_MAX_AGE_DAYS) * 24 * 60 * 60 * 1000,
    }),
    webhooks: Object.freeze({ secretKey: env.WEBHOOK_SECRET_KEY ?? null, workerInServe: env.WEBHOOK_WORKER === 'true', leaseMs: Number(env.WEBHOOK_LEASE_MS) }),
    batches: Object.freeze({ leaseMs: Number(env.BATCH_LEASE_MS) }),
    media: Object.freeze({
      store: mediaStoreConfig(env, dataDir),
      concurrency: Number(env.MEDIA_CONCURRENCY),
      hostConcurrency: Number(env.MEDIA_HOST_CONCURRENCY),
      maxBytes: Number(env.MEDIA_MAX_BYTES),
      imageShare: Number(env.MEDIA_IMAGE_SHARE),
    }),
    seller: Object.freeze({
      name: multiline(env.SELLER_NAME),
      address: multiline(env.SELLER_ADDRESS),
      taxId: multiline(env.SELLER_TAX_ID),
      bankDetails: multiline(env.SELLER_BANK_DETAILS),
    }),
    supportEmail: env.SUPPORT_EMAIL ?? null,
    legalDir: env.LEGAL_DIR ? path.resolve(env.LEGAL_DIR) : path.join(dataDir, 'legal'),
    billingMail: Object.freeze({ operatorEmail: env.OPERATOR_EMAIL ?? null }),
    stripe: env.STRIPE_SECRET_KEY
      ? Object.freeze({ secretKey: env.STRIPE_SECRET_KEY, webhookSecret: env.STRIPE_WEBHOOK_SECRET ?? null, apiUrl: env.STRIPE_API_URL ?? null })
      : null,
    feeds: Object.freeze({
      workerInServe: env.FEEDS_WORKER === 'true',
      leaseMs: Number(env.FEEDS_LEASE_MS),
      pollMs: Number(env.FEEDS_POLL_MS),
      maxBytes: Number(env.FEEDS_MAX_MB) * 1024 * 1024,
      threadPriority: feedThreadPriority(env.FEEDS_THREAD_PRIORITY ?? env.FEEDS_THREAD_NICE ?? 'idle'),
      sliceMs: Number(env.FEEDS_SLICE_MS),
      yieldMs: Number(env.FEEDS_YIELD_MS),
      environment: (name: string) => source[name],
    }),
  });
}

/** `idle`: SCHED_IDLE, with niceness 19 where it cannot be had; a number: that niceness alone. */
function feedThreadPriority(value: string): ThreadPriority {
  return Object.freeze(value === 'idle' ? { idle: true, niceness: 19 } : { idle: false, niceness: Number(value) });
}

function mediaStoreConfig(env: Env, dataDir: string): MediaStoreConfig | null {
  if (env.MEDIA_ARCHIVE === 'directory') {
    return Object.freeze({ kind: 'directory', dir: env.MEDIA_DIR ? path.resolve(env.MEDIA_DIR) : path.join(dataDir, 'media') });
  }
  if (env.MEDIA_ARCHIVE === 's3') {
    const credentials =
      env.S3_ACCESS_KEY_ID && env.S3_SECRET_ACCESS_KEY
        ? Object.freeze({
            accessKeyId: env.S3_ACCESS_KEY_ID,
            secretAccessKey: env.S3_SECRET_ACCESS_KEY,
            // A config or store logged whole (an error's context, a debug line) must not carry the key.
            toJSON: () => ({ accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: '[REDACTED]' }),
          })
        : null;
    return Object.freeze({
      kind: 's3',
      bucket: env.S3_BUCKET!,
      endpoint: env.S3_ENDPOINT ? env.S3_ENDPOINT.replace(/\/+$/, '') : null,
      region: env.S3_REGION,
      credentials,
      forcePathStyle: env.S3_FORCE_PATH_STYLE === 'true',
      prefix: env.S3_PREFIX,
    });
  }
  return null;
}

/** A value that may span lines: a literal `\n` (what an env file can hold) starts a new one. */
function multiline(value: string | undefined): string | null {
  if (value === undefined) return null;
  return value.split('\\n').map((line) => line.trim()).filter((line) => line !== '').join('\n') || null;
}

function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}

/** Every variable loadConfig reads: the deploy files' tests check they set no other (test/deploy). */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.freeze(Object.keys(EnvSchema.properties));
