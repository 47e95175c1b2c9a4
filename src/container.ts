import type Stripe from 'stripe';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { Lot } from './domain/lot.ts';
import { pendingMigrations, type Db, type DialectName } from './storage/database.ts';
import { Readiness } from './operations/readiness.ts';
import { createRepositories } from './storage/repositories/index.ts';
import { HistoryService } from './history/history-service.ts';
import { Metrics } from './observability/metrics.ts';
import type { RateLimiter } from './limits/rate/rate-limiter.ts';
import { createRateLimiter } from './limits/rate/create-rate-limiter.ts';
import { createGuards, type Guards } from './limits/guards.ts';
import { UsageService } from './limits/usage-service.ts';
import { ReportService } from './search/report-service.ts';
import { SearchService } from './search/search-service.ts';
import { VinPreviewService } from './search/vin-preview.ts';
import { MarketService } from './market/market-service.ts';
import { MarketLookService } from './market/market-looks.ts';
import { MarketCalls } from './market/market-calls.ts';
import { VehicleDecoder } from './ingest/enrich-from-vin.ts';
import { createMailSender } from './accounts/mail/create-mail-sender.ts';
import type { MailSender } from './accounts/mail/mail-sender.ts';
import { MailQueue } from './accounts/mail/mail-queue.ts';
import { MailDeliveryWorker, sendAsQueued, type MailDeliveryTuning } from './accounts/mail/mail-delivery-worker.ts';
import { AccountAuthService } from './accounts/account-auth-service.ts';
import { AccountService } from './accounts/account-service.ts';
import { AccountDeletionService } from './accounts/account-deletion.ts';
import { LegalDocuments } from './accounts/legal-documents.ts';
import { BillingMailSweep } from './billing/billing-mail-sweep.ts';
import { BrandService } from './accounts/brand-service.ts';
import { LogoProcess } from './media/logo-process.ts';
import { ApiTokenService } from './accounts/api-tokens.ts';
import { OperatorTokenService } from './accounts/operator-tokens.ts';
import { PasswordHasher, type ScryptCost } from './accounts/password-hasher.ts';
import { SessionService } from './accounts/session-service.ts';
import { createPayments, type PaymentsSetup } from './billing/create-payments.ts';
import { InvoiceService } from './billing/invoice-service.ts';
import { PlanService } from './billing/plan-service.ts';
import { SellerService } from './billing/seller.ts';
import type { StripeApiBase } from './billing/stripe-client.ts';
import { StripeWebhookHandler } from './billing/stripe-webhooks.ts';
import { IngestService } from './ingest/ingest-service.ts';
import { BILLING_PATH, RESET_PASSWORD_PATH, WEBHOOK_PATH } from './domain/site-paths.ts';
import { OutboundClient } from './outbound/outbound-client.ts';
import { outboundPolicy } from './outbound/outbound-policy.ts';
import { PdfRenderer } from './pdf/pdf-renderer.ts';
import { PdfCache } from './pdf/pdf-cache.ts';
import path from 'node:path';
import { WatchService } from './watches/watch-service.ts';
import { DeliveryWorker } from './webhooks/delivery-worker.ts';
import { SecretKeeper } from './webhooks/secret-keeper.ts';
import { WebhookSender } from './webhooks/webhook-sender.ts';
import { WebhookService } from './webhooks/webhook-service.ts';
import { createMediaStore } from './media/create-media-store.ts';
import { MediaService } from './media/media-service.ts';
import { lotsWrittenHooks } from './lots-written-hooks.ts';
import { OperatorService } from './operations/operator-service.ts';
import { SigningKeys } from './verification/signing-keys.ts';
import { ReportVerification } from './verification/report-verification.ts';
// Feeds the service pulls itself (docs/feeds.md).
import { FeedService } from './feeds/feed-service.ts';
import { FeedScheduler } from './feeds/feed-scheduler.ts';
import { DEFAULT_FEED_TUNING, FeedPuller, type FeedTuning } from './feeds/feed-puller.ts';
import { RequestsInFlight } from './worker-threads.ts';
// Batches (issue 26).
import { BatchService } from './batches/batch-service.ts';
import { BatchRunner } from './batches/batch-runner.ts';


/** What tests (and only tests) replace: an outside service, or the cost of a password hash. */
export interface ContainerOverrides {
  /** The mail delivery worker's transport (SMTP or the outbox by default). */
  mailer?: MailSender;
  /** Shorter polls and retries for tests. */
  mailDelivery?: Partial<MailDeliveryTuning>;
  stripeClient?: Stripe;
  stripeApiBase?: StripeApiBase;
  /** The origin of Stripe's checkout pages, allowed as a form target by the pages' CSP. */
  stripeCheckoutOrigin?: string;
  passwordCost?: ScryptCost;
  /** The webhook worker's pace: tests shorten the poll; benchmarks raise the concurrency. */
  webhookWorker?: { pollMs?: number; concurrency?: number };
  /** The jitter of retry delays (tests fix it). */
  random?: () => number;
  /** Feeds: shorter retries and time-outs, and the scheduler's poll (tests). */
  feedTuning?: Partial<FeedTuning>;
  feedPollMs?: number;
  /** The counted requests a pull gives way to: bench:feeds gives a second database's pulls the searches' app's. */
  requestsInFlight?: RequestsInFlight;
  /** The batch runner's pace: tests shorten the poll and the lease. */
  batchRunner?: { pollMs?: number; leaseMs?: number };
}

export interface ContainerOptions {
  config: Config;
  db: Db;
  log: FastifyBaseLogger;
  /** Defaults to a fresh registry without the process metrics (tests build many containers). */
  metrics?: Metrics;
  /** Defaults to the configured limiter (in-process, or Redis with an in-process fallback). */
  rateLimiter?: RateLimiter;
  now?: () => Date;
  overrides?: ContainerOverrides;
}

/**
 * Every service of the product, built once. The server, the CLI and the tests all take their
 * services from here; routes and commands call these, and only these reach storage.
 */
export interface Container {
  readonly config: Config;
  readonly metrics: Metrics;
  /** Storage health, for the load balancer's probe. */
  readonly database: Pick<Db, 'ping'> & { readonly dialect: DialectName };
  // Search and limits.
  readonly search: SearchService;
  readonly reports: ReportService;
  /** Lot history (issue 29): a lot's versions, counted like a search. */
  readonly history: HistoryService;
  readonly vinPreview: VinPreviewService;
  /** What similar cars sold for (issue 24): the API's market value, the report page's and the Market page's. */
  readonly market: MarketService;
  /** The catalogue search and the market value as counted API calls. */
  readonly marketCalls: MarketCalls;
  readonly usage: UsageService;
  readonly guards: Guards;
  /** The website's free market looks: the market's figures behind the VIN check's guard and a daily allowance per address. */
  readonly marketLooks: MarketLookService;
  // Accounts and billing.
  readonly accounts: AccountService;
  readonly apiTokens: ApiTokenService;
  /** White-label brands of accounts and which one a report shows. */
  readonly brands: BrandService;
  readonly operatorTokens: OperatorTokenService;
  readonly plans: PlanService;
  readonly invoices: InvoiceService;
  readonly sessions: SessionService;
  readonly auth: AccountAuthService;
  /** Account mail waiting to be sent, for the operator (`vinhistory mail status`). */
  readonly mail: MailQueue;
  /** Sends queued mail; `vinhistory serve` starts it, tests `drain()` it. */
  readonly mailDelivery: MailDeliveryWorker;
  /** Queues billing mail (invoices, receipts, quota warnings, a plan's end); `serve` starts it, tests `sweep()` it. */
  readonly billingMail: BillingMailSweep;
  readonly accountDeletion: AccountDeletionService;
  readonly payments: PaymentsSetup;
  /** The seller on invoices and the contact address (SELLER_*, SUPPORT_EMAIL). */
  readonly seller: SellerService;
  /** The operator's Terms of Service and Privacy Policy (the database, else LEGAL_DIR). */
  readonly legal: LegalDocuments;
  readonly stripeWebhooks: StripeWebhookHandler | null;
  readonly stripeCheckoutOrigin: string;
  // Ingestion.
  readonly ingest: IngestService;
  // Outbound requests and report PDFs.
  /** The one client for URLs customers and feeds give (photos, webhooks): see src/outbound/. */
  readonly outbound: OutboundClient;
  /** One shared browser printing report PDFs, a few at a time. */
  readonly pdfRenderer: PdfRenderer;
  /** Printed PDFs under DATA_DIR/report-pdfs (a report never changes), evicted by size and age; bounds the prints in flight. */
  readonly pdfCache: PdfCache;
  // Watches and webhooks.
  readonly watches: WatchService;
  readonly webhooks: WebhookService;
  /** Sends due webhook events; started by `serve` (unless WEBHOOK_WORKER=false) and `deliver`. */
  readonly deliveryWorker: DeliveryWorker;
  /** The photo archive: its store, the serving side and the archiver (off: no store). */
  readonly media: MediaService;
  // The operators' customer operations (CLI, admin API, operators' page) and their audit log.
  readonly operations: OperatorService;
  // Verifiable reports (docs/reports.md): the signing keys, the reports' signatures, /verify.
  readonly signingKeys: SigningKeys;
  readonly verification: ReportVerification;
  /** Whether this instance can take customers: /readyz, `vinhistory doctor`, the start of `serve`. */
  readonly readiness: Readiness;
  /** The operator's feeds (`vinhistory feeds`, /admin/v1/feeds). */
  readonly feeds: FeedService;
  /** Pulls due feeds, one instance at a time per feed; `serve` starts it (unless FEEDS_WORKER=false). */
  readonly feedScheduler: FeedScheduler;
  /** The counted API requests in flight, which a pull's threads give way to (the app counts them). */
  readonly requestsInFlight: RequestsInFlight;
  // Batches (issue 26).
  /** Batches as the customer makes and reads them. */
  readonly batches: BatchService;
  /** Runs stored batches' items in the background; `serve` starts it, tests `runDue()` it. */
  readonly batchRunner: BatchRunner;
  /** Closes what the container opened (the mail worker, its transport, the PDF browser, the rate limiter's Redis connection); not the database. */
  close(): Promise<void>;
}

export { lotsWrittenHooks };

export function createContainer(options: ContainerOptions): Container {
  const { config, db, log } = options;
  const overrides = options.overrides ?? {};
  const repos = createRepositories(db, { lotsWritten: lotsWrittenHooks({ photoArchive: config.media.store !== null }) });
  const metrics = options.metrics ?? new Metrics({ defaultMetrics: false });
  const limiterSetup = options.rateLimiter
    ? // A limiter handed in belongs to whoever made it, who closes it.
      { limiter: options.rateLimiter, close: async () => {} }
    : createRateLimiter(config, metrics, log.child({ component: 'rate-limiter' }));

  // The one client for URLs customers and feeds give (webhook endpoints, photos); the address is checked at connect time.
  const policy = outboundPolicy({ allowPrivate: config.outbound.allowPrivate, isProduction: config.isProduction });
  const outbound = new OutboundClient(policy);
  const media = new MediaService({
    repo: repos.media,
    store: config.media.store ? createMediaStore(config.media.store) : null,
    storeConfig: config.media.store,
    policy,
    metrics,
    log,
    publicBaseUrl: config.publicBaseUrl,
    concurrency: config.media.concurrency,
    hostConcurrency: config.media.hostConcurrency,
    maxBytes: config.media.maxBytes,
    imageShare: config.media.imageShare,
  });

  const apiTokens = new ApiTokenService(repos, metrics);
  const search = new SearchService({
    metrics,
    repos,
    principals: apiTokens,
    rateLimiter: limiterSetup.limiter,
    publicBaseUrl: config.publicBaseUrl,
    ...(options.now ? { now: options.now } : {}),
    onBackgroundError: (error) => log.warn({ err: error }, 'background write failed'),
    // With the archive off a search takes no step for it at all.
    ...(media.enabled ? { resolveImages: (lots: Lot[]) => media.resolveLots(lots) } : {}),
  });
  const guards = createGuards(limiterSetup.limiter);
  const vehicleDecoder = new VehicleDecoder(config.dataDir);
  const market = new MarketService({
    repos,
    cacheMaxBytes: config.marketCacheMaxBytes,
    decodeVehicle: (vin) => vehicleDecoder.decode(vin),
    ...(media.enabled ? { resolveImages: (lots: Lot[]) => media.resolveLots(lots) } : {}),
  });

  const hasher = new PasswordHasher(overrides.passwordCost);
  const sessions = new SessionService(repos);
  const mailer = overrides.mailer ?? createMailSender(config, log);
  const mail = new MailQueue(repos.mailQueue);
  const auth = new AccountAuthService({ db, repos, hasher, sessions, mail, publicBaseUrl: config.publicBaseUrl, resetPath: RESET_PASSWORD_PATH });
  const mailDelivery = new MailDeliveryWorker({
    repository: repos.mailQueue,
    queue: mail,
    transport: mailer,
    prepare: {
      password_reset: (queued, now) => auth.prepareResetMail(queued, now),
      billing: sendAsQueued,
      webhook_endpoint_disabled: sendAsQueued,
      feed_alert: sendAsQueued,
    },
    log: log.child({ component: 'mail-delivery' }),
    ...(options.now ? { now: options.now } : {}),
    ...(overrides.mailDelivery ? { tuning: overrides.mailDelivery } : {}),
  });
  const payments = createPayments({
    config,
    db,
    repos,
    returnPath: BILLING_PATH,
    ...(overrides.stripeClient ? { stripeClient: overrides.stripeClient } : {}),
    ...(overrides.stripeApiBase ? { stripeApiBase: overrides.stripeApiBase } : {}),
  });

  const now = options.now ?? (() => new Date());
  const pdfRenderer = new PdfRenderer({
    browserPath: config.pdf.browserPath,
    maxConcurrent: config.pdf.maxConcurrent,
    log: log.child({ component: 'pdf' }),
    onStep: (step, seconds) => metrics.pdfSteps.observe({ step }, seconds),
  });
  const secrets = new SecretKeeper(config.webhooks.secretKey, repos.settings);
  const deliveryWorker = new DeliveryWorker({
    repos,
    now,
    log: log.child({ component: 'webhooks' }),
    leaseMs: config.webhooks.leaseMs,
    ...overrides.webhookWorker,
    sender: new WebhookSender({
      repos,
      client: outbound,
      secrets,
      mail,
      metrics,
      log: log.child({ component: 'webhooks' }),
      accountUrl: `${config.publicBaseUrl}${WEBHOOK_PATH}`,
      now,
      ...(overrides.random ? { random: overrides.random } : {}),
    }),
  });
  metrics.watchWebhookQueue(() => repos.webhookOutbox.stats());
  const seller = new SellerService({ config, repos });
  const legal = new LegalDocuments({ dir: config.legalDir, isProduction: config.isProduction, store: repos.legalDocuments });
  // Started with the first upload: a process that never sees one never forks it.
  const logos = new LogoProcess();
  const billingMail = new BillingMailSweep({
    db,
    repos,
    mail,
    links: { billing: `${config.publicBaseUrl}${BILLING_PATH}`, invoice: (id) => `${config.publicBaseUrl}${BILLING_PATH}/invoices/${encodeURIComponent(id)}` },
    operatorEmail: config.billingMail.operatorEmail,
    log: log.child({ component: 'billing-mail' }),
    now,
  });
  const usage = new UsageService(repos);
  const invoices = new InvoiceService({ db, repos });
  const reports = new ReportService(repos.reports);
  const brands = new BrandService({ repos, isProduction: config.isProduction, logos });
  const signingKeys = new SigningKeys({ repo: repos.reportSignatures, secrets, now });
  const verification = new ReportVerification({ keys: signingKeys, reports, reportsRepo: repos.reports, repo: repos.reportSignatures, brands, issuer: config.publicBaseUrl, now });
  // A SQLite file: a feed's pull stores its batches on a thread and connection of its own.
  const bulkWriter = db.dialect.bulkWriter();
  const ingest = new IngestService(repos.lots, config.dataDir, bulkWriter ? { writer: bulkWriter, photoArchive: config.media.store !== null, sliceMs: config.feeds.sliceMs } : null);
  // Feeds: pulled through the outbound client, stored through the ingest pipeline.
  const requestsInFlight = overrides.requestsInFlight ?? new RequestsInFlight();
  const feedScheduler = new FeedScheduler({
    feeds: repos.feeds,
    puller: new FeedPuller({
      outbound,
      ingest,
      feeds: repos.feeds,
      history: repos.lotHistory,
      open: (sealed) => secrets.open(sealed),
      environment: config.feeds.environment,
      dir: path.join(config.dataDir, 'feeds'),
      maxBytes: config.feeds.maxBytes,
      threadPriority: config.feeds.threadPriority,
      giveWay: { buffer: requestsInFlight.buffer, maxPauseMs: config.feeds.yieldMs },
      tuning: { ...DEFAULT_FEED_TUNING, ...overrides.feedTuning },
      now,
      log: log.child({ component: 'feeds' }),
      ...(overrides.random ? { random: overrides.random } : {}),
      onBatchesHeld: (feed, heldMs) => heldMs.forEach((ms) => metrics.feedBatchWrite.observe({ feed: feed.name }, ms / 1000)),
    }),
    mail,
    operatorEmail: config.billingMail.operatorEmail,
    metrics,
    log: log.child({ component: 'feeds' }),
    now,
    leaseMs: config.feeds.leaseMs,
    pollMs: overrides.feedPollMs ?? config.feeds.pollMs,
  });
  metrics.watchFeeds(async () => (await repos.feeds.list()).map((feed) => ({ name: feed.name, lastSuccessAt: feed.lastSuccessAt, newestLotAt: feed.newestLotAt, failuresInRow: feed.failuresInRow, paused: feed.paused })));
  const feeds = new FeedService({ feeds: repos.feeds, scheduler: feedScheduler, outbound, seal: (secret) => secrets.seal(secret), now });
  // Batches (issue 26): the runner's items are searches through the search service, paced in the account's window.
  const batchRunner = new BatchRunner({
    db,
    repos,
    search,
    log: log.child({ component: 'batches' }),
    now,
    leaseMs: config.batches.leaseMs,
    ...overrides.batchRunner,
    onEventQueued: () => deliveryWorker.wake(),
  });
  const batches = new BatchService({ repos, now, onCreated: () => batchRunner.wake() });
  const operations = new OperatorService({ repos, billing: payments.billing, invoices, usage, apiTokens, ...(options.now ? { now: options.now } : {}) });

  return Object.freeze({
    config,
    metrics,
    database: { ping: () => db.ping(), dialect: db.dialect.name },
    search,
    reports,
    history: new HistoryService({ search, lotHistory: repos.lotHistory }),
    vinPreview: new VinPreviewService(repos.lots, guards.vinPreviews),
    market,
    marketCalls: new MarketCalls({
      repos,
      search,
      market,
      ...(media.enabled ? { resolveImages: (lots: Lot[]) => media.resolveLots(lots) } : {}),
      ...(options.now ? { now: options.now } : {}),
    }),
    usage,
    guards,
    marketLooks: new MarketLookService(market, guards.vinPreviews, repos.authAttempts),
    accounts: new AccountService(repos),
    apiTokens,
    brands,
    operatorTokens: new OperatorTokenService(repos),
    plans: new PlanService({ db, repos }),
    invoices,
    sessions,
    auth,
    mail,
    mailDelivery,
    billingMail,
    accountDeletion: new AccountDeletionService({ db, repos, auth, plans: payments.billing }),
    payments,
    seller,
    legal,
    stripeWebhooks: payments.stripe ? new StripeWebhookHandler(db, log) : null,
    stripeCheckoutOrigin: overrides.stripeCheckoutOrigin ?? 'https://checkout.stripe.com',
    ingest,
    outbound,
    pdfRenderer,
    pdfCache: new PdfCache({
      dir: path.join(config.dataDir, 'report-pdfs'),
      // The ones printing and the ones waiting for a slot: past them a reader is told to come back.
      maxPending: config.pdf.maxConcurrent + config.pdf.queueMax,
      maxBytes: config.pdf.cacheMaxBytes,
      maxAgeMs: config.pdf.cacheMaxAgeMs,
    }),
    watches: new WatchService({ repos, now }),
    webhooks: new WebhookService({ repos, secrets, worker: deliveryWorker, policy, now, checkNamesWhenSet: config.isProduction }),
    deliveryWorker,
    media,
    operations,
    signingKeys,
    verification,
    readiness: new Readiness({
      isProduction: config.isProduction,
      mail: config.mail,
      database: db,
      pendingMigrations: () => pendingMigrations(db),
      seller,
      legal,
      pdf: pdfRenderer,
      media,
    }),
    feeds,
    feedScheduler,
    requestsInFlight,
    batches,
    batchRunner,
    close: async () => {
      await feedScheduler.stop();
      await batchRunner.stop();
      await billingMail.stop();
      await mailDelivery.stop();
      await deliveryWorker.stop();
      await media.close();
      await logos.close();
      await pdfRenderer.close();
      await vehicleDecoder.close();
      await outbound.close();
      await mailer.close();
      await limiterSetup.close();
    },
  });
}
