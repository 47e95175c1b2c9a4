import type { Metrics } from '../../observability/metrics.ts';
import type { RateDecision, RateLimiter } from './rate-limiter.ts';

/** Counts each decision of the limiter it wraps, labelled with that limiter's name. */
export class InstrumentedRateLimiter implements RateLimiter {
  constructor(
    private readonly inner: RateLimiter,
    private readonly label: 'redis' | 'memory',
    private readonly metrics: Metrics,
  ) {}

  async consume(key: string, limit: number): Promise<RateDecision> {
    const decision = await this.inner.consume(key, limit);
    this.metrics.rateDecisions.inc({ limiter: this.label, outcome: decision.allowed ? 'allowed' : 'limited' });
    return decision;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
