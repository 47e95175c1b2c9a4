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

  readonly pdfSteps = new Histogram({
    name: 'vinhistory_report_pdf_step_seconds',
    help: 'Time spent printing an uncached report PDF, by step (photos, html, page, content, print).',
    labelNames: ['step'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'vinhistory_' });
    this.rateDegraded.set(0);
  }
}
