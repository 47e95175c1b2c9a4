import type { RateDecision } from './rate/rate-limiter.ts';

/** What every search response reports about the account's two limits. */
export interface LimitsSnapshot {
  rate: RateDecision;
  quota: {
    limit: number;
    used: number;
    periodStart: Date;
    periodEnd: Date;
  };
  now: Date;
}

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

/** Retry-After for a refusal whose limit frees in `ms`: whole seconds, and never 0 (which would invite a retry at once). */
export function retryAfter(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

/**
 * RateLimit-Policy and RateLimit as structured fields (draft-ietf-httpapi-ratelimit-headers-11):
 * one policy for the second and one for the billing month, with q (quota), w (window, seconds),
 * r (remaining) and t (seconds until it resets). X-RateLimit-* repeat the per-second window,
 * because many clients read only those.
 */
export function limitHeaders(limits: LimitsSnapshot): Record<string, string> {
  const { rate, quota, now } = limits;
  const periodSeconds = seconds(quota.periodEnd.getTime() - quota.periodStart.getTime());
  const quotaRemaining = Math.max(0, quota.limit - quota.used);
  return {
    'ratelimit-policy': `"second";q=${rate.limit};w=1, "month";q=${quota.limit};w=${periodSeconds}`,
    ratelimit: `"second";r=${rate.remaining};t=${seconds(rate.resetMs)}, "month";r=${quotaRemaining};t=${seconds(quota.periodEnd.getTime() - now.getTime())}`,
    'x-ratelimit-limit': String(rate.limit),
    'x-ratelimit-remaining': String(rate.remaining),
  };
}
