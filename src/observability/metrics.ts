import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
    help: '1 while this instance limits in process because Redis is unreachable or slow, else 0.',
    registers: [this.registry],
  });

  readonly quotaRejections = new Counter({
    name: 'vinhistory_quota_rejections_total',
    help: 'Searches refused because the monthly quota was used up.',
    registers: [this.registry],
  });

  readonly searches = new Counter({
    name: 'vinhistory_searches_total',
    help: 'Counted searches, by outcome (found, not_found, replayed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

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

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'vinhistory_' });
    this.rateDegraded.set(0);
  }
}
