import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What the feed gauges show of a feed (read from the database at scrape time). */
export interface FeedGaugeState {
  name: string;
  lastSuccessAt: string | null;
  newestLotAt: string | null;
  failuresInRow: number;
  paused: boolean;
}

const seconds = (iso: string | null) => (iso === null ? null : Date.parse(iso) / 1000);

/**
 * The service's Prometheus metrics, in a registry of its own (not prom-client's global one), so
 * that several apps in one process (tests) do not share counters.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'vinhistory_http_requests_total',
    help: 'HTTP requests answered, by route, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'vinhistory_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route, method and status code.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly rateDecisions = new Counter({
    name: 'vinhistory_rate_limiter_decisions_total',
    help: 'Per-second rate limiter decisions, by limiter (redis, memory) and outcome (allowed, limited).',
    labelNames: ['limiter', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly rateFallbacks = new Counter({
    name: 'vinhistory_rate_limiter_fallbacks_total',
    help: 'Rate limiter decisions made in process because Redis failed or was too slow.',
    registers: [this.registry],
  });

  readonly rateDegraded = new Gauge({
    name: 'vinhistory_rate_limiter_degraded',
    help: '1 while this instance does not leave the rate to Redis alone (Redis unreachable or slow, or rejoining after it came back), else 0.',
    registers: [this.registry],
  });

  readonly rateMode = new Gauge({
    name: 'vinhistory_rate_limiter_mode',
    help: 'Who decides the per-second rate on this instance: 1 for the current mode (redis: the shared window; fallback: this instance alone, Redis down; rejoining: both, for one window after Redis came back). Absent without REDIS_URL.',
    labelNames: ['mode'] as const,
    registers: [this.registry],
  });

  readonly quotaRejections = new Counter({
    name: 'vinhistory_quota_rejections_total',
    help: 'Searches refused because the monthly quota was used up.',
    registers: [this.registry],
  });

  readonly principalLookups = new Counter({
    name: 'vinhistory_principal_lookups_total',
    help: "Search requests' token lookups, by where the principal came from: this process's cache (re-checked in the commit) or the database.",
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  readonly searches = new Counter({
    name: 'vinhistory_searches_total',
    help: 'Counted searches, by outcome (found, not_found, replayed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'vinhistory_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by what followed (delivered, retry, failed: given up).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveryDuration = new Histogram({
    name: 'vinhistory_webhook_delivery_duration_seconds',
    help: 'Time from sending a webhook to its answer (or its failure).',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /** Where the outbox gauges read from; set by the container (the outbox is shared by every instance). */
  private webhookQueue: (() => Promise<{ pending: number; oldestPendingAt: string | null }>) | null = null;
  private webhookQueueRead: { at: number; value: Promise<{ pending: number; oldestPendingAt: string | null }> } | null = null;

  readonly webhookQueueDepth = new Gauge({
    name: 'vinhistory_webhook_queue_depth',
    help: 'Webhook events not yet delivered nor given up (every instance together: read from the outbox).',
    registers: [this.registry],
    collect: async () => {
      const stats = await this.readWebhookQueue();
      if (stats) this.webhookQueueDepth.set(stats.pending);
    },
  });

  readonly webhookOldestAge = new Gauge({
    name: 'vinhistory_webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest webhook event not yet delivered nor given up; 0 when none is waiting.',
    registers: [this.registry],
    collect: async () => {
      const stats = await this.readWebhookQueue();
      if (stats) this.webhookOldestAge.set(stats.oldestPendingAt ? Math.max(0, (Date.now() - Date.parse(stats.oldestPendingAt)) / 1000) : 0);
    },
  });

  watchWebhookQueue(read: () => Promise<{ pending: number; oldestPendingAt: string | null }>): void {
    this.webhookQueue = read;
  }

  /** One read of the outbox per scrape serves both gauges. */
  private async readWebhookQueue(): Promise<{ pending: number; oldestPendingAt: string | null } | null> {
    if (!this.webhookQueue) return null;
    if (!this.webhookQueueRead || Date.now() - this.webhookQueueRead.at > 1000) {
      this.webhookQueueRead = { at: Date.now(), value: this.webhookQueue() };
    }
    try {
      return await this.webhookQueueRead.value;
    } catch {
      // A database that cannot answer now leaves the last values; the scrape itself still answers.
      this.webhookQueueRead = null;
      return null;
    }
  }

  readonly mediaFetches = new Counter({
    name: 'vinhistory_media_fetches_total',
    help: 'Photo archive attempts, by outcome (archived, deduplicated: the content was already stored, failed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly mediaFailures = new Counter({
    name: 'vinhistory_media_failures_total',
    help: 'Failed photo archive attempts, by reason (http, not_image, too_large, timeout, refused, network, store).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly mediaBytesStored = new Counter({
    name: 'vinhistory_media_stored_bytes_total',
    help: 'Bytes written to the photo archive (originals and their renditions).',
    registers: [this.registry],
  });

  readonly mediaInFlight = new Gauge({
    name: 'vinhistory_media_in_flight',
    help: 'Photos this instance is fetching and storing now.',
    registers: [this.registry],
  });

  readonly mediaPausedSeconds = new Counter({
    name: 'vinhistory_media_paused_seconds_total',
    help: 'Time photos waited before their image work because the event loop was late (the archive yielding to searches).',
    registers: [this.registry],
  });

  readonly mediaDuration = new Histogram({
    name: 'vinhistory_media_archive_duration_seconds',
    help: 'Time to archive one photo: fetch, check, renditions and store.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly mediaServed = new Counter({
    name: 'vinhistory_media_served_total',
    help: 'Archived photos served, by status (200, 206, 304, 404, 416).',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly pdfSteps = new Histogram({
    name: 'vinhistory_report_pdf_step_seconds',
    help: 'Time spent printing an uncached report PDF, by step (photos, html, page, content, print).',
    labelNames: ['step'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  // --- feeds (docs/feeds.md) ---
  readonly feedPulls = new Counter({
    name: 'vinhistory_feed_pulls_total',
    help: 'Feed pulls made by this instance, by feed and outcome (ok, not_modified, failed).',
    labelNames: ['feed', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly feedLots = new Counter({
    name: 'vinhistory_feed_lots_total',
    help: "Lots of this instance's feed pulls, by feed and outcome (read, inserted, updated, unchanged, skipped, left_listing, returned_to_listing).",
    labelNames: ['feed', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly feedPullDuration = new Histogram({
    name: 'vinhistory_feed_pull_duration_seconds',
    help: 'Time a feed pull took, download, checks and import together.',
    labelNames: ['feed'] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [this.registry],
  });

  readonly feedBatchWrite = new Histogram({
    name: 'vinhistory_feed_batch_write_seconds',
    help: "How long each batch of a feed's pull held the database's write lock (a SQLite file: the batch's transaction on the pull's own thread, which searches' commits wait out).",
    labelNames: ['feed'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });

  /** Where the feed gauges read from; set by the container (every instance reads the same rows). */
  private feedStates: (() => Promise<FeedGaugeState[]>) | null = null;
  private feedStatesRead: { at: number; value: Promise<FeedGaugeState[]> } | null = null;

  private feedGauge(name: string, help: string, value: (state: FeedGaugeState) => number | null): Gauge<'feed'> {
    const gauge: Gauge<'feed'> = new Gauge({
      name,
      help,
      labelNames: ['feed'] as const,
      registers: [this.registry],
      collect: async () => {
        const states = await this.readFeedStates();
        if (!states) return;
        gauge.reset();
        for (const state of states) {
          const v = value(state);
          if (v !== null) gauge.set({ feed: state.name }, v);
        }
      },
    });
    return gauge;
  }

  readonly feedLastSuccess = this.feedGauge('vinhistory_feed_last_success_timestamp_seconds', 'When the feed was last pulled successfully (ok or not_modified), as a Unix time; absent until it has been.', (s) => seconds(s.lastSuccessAt));
  readonly feedNewestLot = this.feedGauge('vinhistory_feed_newest_lot_timestamp_seconds', 'When a pull of the feed last stored a lot it had not stored before, as a Unix time; absent until one has.', (s) => seconds(s.newestLotAt));
  readonly feedFailuresInRow = this.feedGauge('vinhistory_feed_failures_in_row', 'Failed pulls of the feed since its last good one.', (s) => s.failuresInRow);
  readonly feedPaused = this.feedGauge('vinhistory_feed_paused', '1 while the operator has paused the feed, else 0.', (s) => (s.paused ? 1 : 0));

  watchFeeds(read: () => Promise<FeedGaugeState[]>): void {
    this.feedStates = read;
  }

  /** One read of the feeds per scrape serves every feed gauge. */
  private async readFeedStates(): Promise<FeedGaugeState[] | null> {
    if (!this.feedStates) return null;
    if (!this.feedStatesRead || Date.now() - this.feedStatesRead.at > 1000) this.feedStatesRead = { at: Date.now(), value: this.feedStates() };
    try {
      return await this.feedStatesRead.value;
    } catch {
      this.feedStatesRead = null;
      return null;
    }
  }
  // --- end feeds ---

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'vinhistory_' });
    this.rateDegraded.set(0);
  }
}
