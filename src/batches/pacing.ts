import type { SearchPrincipal } from '../domain/principal.ts';

/**
 * A batch's share of the account's per-second rate: half of it, rounded down, and at least one
 * (a plan of 1 per second still runs its batches, then at the whole rate). Every batch of the
 * account, on every instance, draws from one window of this size (batchRateKey), and each item's
 * search then takes its slot of the account's own window too: so batches never hold more than
 * this share of any one-second window, and live searches at up to the rest never meet a 429.
 */
export function batchShare(ratePerSecond: number): number {
  return Math.max(1, Math.floor(ratePerSecond / 2));
}

/** The rate limiter's key of the account's batch window (a sandbox token's apart, as its searches are). */
export function batchRateKey(principal: SearchPrincipal): string {
  return principal.sandbox ? `${principal.accountId}:sandbox:batch` : `${principal.accountId}:batch`;
}
