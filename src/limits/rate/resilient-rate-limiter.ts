import { systemClock, type Clock } from './clock.ts';
import { WINDOW_MS, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/**
 * Which limiter decides: `redis`, the shared window alone; `fallback`, this instance alone while
 * Redis is unreachable; `rejoining`, both for one window after Redis came back (see below).
 */
export type LimiterMode = 'redis' | 'fallback' | 'rejoining';

/** What the fallback decides with: this process's window, which also counts what the shared one let through. */
export interface LocalRateLimiter {
  consumeSync(key: string, limit: number): RateDecision;
  hasRoom(key: string, limit: number): boolean;
  /** Counts an accept the shared limiter decided. */
  record(key: string, limit: number): void;
  /** Whether anything was accepted within the last window. */
  holdsRecentAccepts(): boolean;
}

/**
 * Whether the shared limiter can answer, as its client knows it. Recovery follows this signal
 * alone (a reconnect, a health check in the background), never a customer's request.
 */
export interface PrimaryHealth {
  readonly up: boolean;
  onChange(listener: (up: boolean, reason?: unknown) => void): void;
  /** A call failed or timed out although the client looked connected: down until a health check passes. */
  suspect(reason: unknown): void;
}

export interface ResilienceEvents {
  onModeChange(mode: LimiterMode, previous: LimiterMode, reason?: unknown): void;
  /**
   * One decision settled by this instance's own window: every decision while on the fallback, and
   * a refusal while rejoining (Redis had no say, or allowed what the local window refused).
   */
  onLocalDecision(decision: RateDecision, mode: 'fallback' | 'rejoining'): void;
}

export interface ResilientRateLimiterOptions {
  /** How long a call to the shared limiter may take before this instance decides alone (tens of ms). */
  timeoutMs: number;
  /** How long both decide after the shared limiter comes back; default one window plus `timeoutMs`. */
  rejoinMs?: number;
  events: ResilienceEvents;
  clock?: Clock;
}

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`rate limiter did not answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * The shared (Redis) limiter with an in-process fallback, built so that no transition lets an
 * account through more than (instances x rate) in any one-second window:
 *
 * - Every accept, whoever decided it, is also in this instance's local window. So when Redis goes
 *   away, the fallback counts what this instance let through via Redis a moment ago: per instance,
 *   at most `rate` per window, Redis or not, and N instances at most N x rate.
 * - While the health signal says Redis is down, no call goes to it (no request waits a timeout):
 *   the local window decides.
 * - When Redis comes back, possibly empty (a restarted cache), it does not know what the instances
 *   accepted on their own a moment ago. For one window (`rejoining`) a request must pass both Redis
 *   (which so records it) and the local window; after that window every accept of this instance
 *   within the last second is in Redis, and Redis alone decides. Once every instance has rejoined,
 *   the account is back to `rate` per window, shared.
 *
 * The monthly quota lives in the database and is exact throughout.
 */
export class ResilientRateLimiter implements RateLimiter {
  private current: LimiterMode;
  private cancelRejoin: (() => void) | undefined;
  private readonly clock: Clock;
  private readonly rejoinMs: number;

  constructor(
    private readonly primary: RateLimiter,
    private readonly local: LocalRateLimiter,
    private readonly health: PrimaryHealth,
    private readonly options: ResilientRateLimiterOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.rejoinMs = options.rejoinMs ?? WINDOW_MS + options.timeoutMs;
    // Until the client says it is connected, the instance decides alone (it has accepted nothing yet).
    this.current = health.up ? 'redis' : 'fallback';
    health.onChange((up, reason) => (up ? this.primaryUp() : this.primaryDown(reason)));
  }

  get mode(): LimiterMode {
    return this.current;
  }

  async consume(key: string, limit: number): Promise<RateDecision> {
    const mode = this.current;
    if (mode === 'fallback') return this.decideLocally(key, limit, 'fallback');
    // Rejoining, a request the local window refuses anyway is not put to Redis, where it would
    // take a slot it never used.
    if (mode === 'rejoining' && !this.local.hasRoom(key, limit)) return this.decideLocally(key, limit, 'rejoining');
    let shared: RateDecision;
    try {
      shared = await this.withTimeout(this.primary.consume(key, limit));
    } catch (error) {
      this.health.suspect(error);
      this.primaryDown(error);
      return this.decideLocally(key, limit, 'fallback');
    }
    if (!shared.allowed) return shared;
    if (mode === 'rejoining') {
      // Redis has counted this one; should the local window have filled meanwhile, the slot stays
      // taken there: stricter for a moment, never looser.
      const own = this.local.consumeSync(key, limit);
      if (!own.allowed) {
        this.options.events.onLocalDecision(own, 'rejoining');
        return own;
      }
      return { allowed: true, limit, remaining: Math.min(shared.remaining, own.remaining), resetMs: Math.max(shared.resetMs, own.resetMs) };
    }
    this.local.record(key, limit);
    return shared;
  }

  private decideLocally(key: string, limit: number, mode: 'fallback' | 'rejoining'): RateDecision {
    const decision = this.local.consumeSync(key, limit);
    this.options.events.onLocalDecision(decision, mode);
    return decision;
  }

  private primaryDown(reason: unknown): void {
    this.stopRejoining();
    this.setMode('fallback', reason);
  }

  private primaryUp(): void {
    if (this.current !== 'fallback') return;
    // Nothing accepted within the last window, by Redis or alone: Redis misses nothing of this instance.
    if (!this.local.holdsRecentAccepts()) {
      this.setMode('redis');
      return;
    }
    this.setMode('rejoining');
    this.cancelRejoin = this.clock.after(this.rejoinMs, () => {
      this.cancelRejoin = undefined;
      if (this.current === 'rejoining') this.setMode('redis');
    });
  }

  private stopRejoining(): void {
    this.cancelRejoin?.();
    this.cancelRejoin = undefined;
  }

  private setMode(mode: LimiterMode, reason?: unknown): void {
    const previous = this.current;
    if (mode === previous) return;
    this.current = mode;
    this.options.events.onModeChange(mode, previous, reason);
  }

  private withTimeout<T>(promise: Promise<T>): Promise<T> {
    let cancel: (() => void) | undefined;
    const timeout = new Promise<never>((_, reject) => {
      cancel = this.clock.after(this.options.timeoutMs, () => reject(new TimeoutError(this.options.timeoutMs)));
    });
    return Promise.race([promise, timeout]).finally(() => cancel?.());
  }

  /** Stops its own timer; the limiters and the health signal belong to whoever made them. */
  async close(): Promise<void> {
    this.stopRejoining();
  }
}
