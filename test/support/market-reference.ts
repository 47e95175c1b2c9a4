/**
 * The contract's figures computed the plain way, for tests to hold pages to: percentiles by linear
 * interpolation between closest ranks (numpy's default), rounded half up to a whole dollar.
 */
export function referencePercentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (sorted.length - 1) * p;
  const low = Math.floor(rank);
  const high = Math.min(low + 1, sorted.length - 1);
  return Math.floor(sorted[low]! + (rank - low) * (sorted[high]! - sorted[low]!) + 0.5);
}

const dollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 0, minimumFractionDigits: 0 });

/** `$12,345`, as the English page writes a price. */
export function usd(amount: number): string {
  return dollars.format(amount);
}
