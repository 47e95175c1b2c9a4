import type { RateDecision, RateLimiter } from './rate-limiter.ts';

export interface ResilienceEvents {
  /** Redis failed or was too slow: requests go to the in-process limiter for a while. */
  onDegraded(error: unknown): void;
  /** Redis answered again: shared limiting resumes. */
  onRecovered(): void;
  /** One decision made by the fallback instead of the primary. */
  onFallbackDecision(): void;
}

export interface ResilientRateLimiterOptions {
  /** How long a call to the primary may take before the fallback decides (tens of ms). */
  timeoutMs: number;
  /** After a failure, how long to stay on the fallback before trying the primary again. */
  retryAfterMs: number;
  events: ResilienceEvents;
  now?: () => number;
}

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`rate limiter did not answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * The shared (Redis) limiter with an in-process fallback. When the primary fails or is slower
 * than `timeoutMs`, the fallback decides and the primary is left alone for `retryAfterMs` (a
 * circuit breaker, so that an outage costs no request more than one timeout); then one request
 * probes it again, and the first success switches back. During an outage each instance enforces
 * the rate on its own, so an account may get up to (instances x rate) per second; the monthly
 * quota lives in the database and stays exact.
 */
export class ResilientRateLimiter implements RateLimiter {
  private openUntil = 0;
  private degraded = false;
  private probing = false;
  private readonly now: () => number;

  constructor(
    private readonly primary: RateLimiter,
    private readonly fallback: RateLimiter,
    private readonly options: ResilientRateLimiterOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  get isDegraded(): boolean {
    return this.degraded;
  }

  async consume(key: string, limit: number): Promise<RateDecision> {
    if (this.degraded && (this.now() < this.openUntil || this.probing)) return this.useFallback(key, limit);
    const probe = this.degraded;
    if (probe) this.probing = true;
    try {
      const decision = await this.withTimeout(this.primary.consume(key, limit));
      if (this.degraded) {
        this.degraded = false;
        this.options.events.onRecovered();
      }
      return decision;
    } catch (error) {
      this.openUntil = this.now() + this.options.retryAfterMs;
      if (!this.degraded) {
        this.degraded = true;
        this.options.events.onDegraded(error);
      }
      return this.useFallback(key, limit);
    } finally {
      if (probe) this.probing = false;
    }
  }

  private useFallback(key: string, limit: number): Promise<RateDecision> {
    this.options.events.onFallbackDecision();
    return this.fallback.consume(key, limit);
  }

  private withTimeout<T>(promise: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TimeoutError(this.options.timeoutMs)), this.options.timeoutMs);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  }

  async close(): Promise<void> {
    await Promise.all([this.primary.close(), this.fallback.close()]);
  }
}
