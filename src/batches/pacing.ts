/**
 * A batch's share of the account's per-second rate: half of it, rounded down, and at least one
 * (a plan of 1 per second still runs its batches, then at the whole rate). An item's search is
 * admitted only while the account's window (live searches and every batch, on every instance)
 * holds fewer than this: whenever a batch item takes a slot, the rest of the rate is free, so
 * live searches at up to the rest of it never meet a 429 (batch-runner.ts).
 */
export function batchShare(ratePerSecond: number): number {
  return Math.max(1, Math.floor(ratePerSecond / 2));
}

