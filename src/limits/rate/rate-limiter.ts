/**
 * Per-second rate limiting with the contract's exact sliding window: per key, the times of the
 * last `limit` accepted requests; a request is accepted when fewer than `limit` were accepted in
 * the last second, i.e. when the oldest of the last `limit` is at least one second old. A burst of
 * `limit` simultaneous requests all pass, and no one-second window ever holds more than `limit`.
 *
 * Implementations: in-process (memory-rate-limiter.ts, one node) and, for scale-out, Redis.
 * Every implementation passes the same contract suite (test/limits/rate/rate-limiter.contract.ts).
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in the current one-second window after this decision. */
  remaining: number;
  /** Milliseconds until the next slot frees (0 when the window holds nothing). */
  resetMs: number;
}

export interface RateLimiter {
  consume(key: string, limit: number): Promise<RateDecision>;
  close(): Promise<void>;
}

export const WINDOW_MS = 1000;
