/**
 * The figures of a market value (contract, "Market value"), as pure functions over plain numbers:
 * percentiles interpolated linearly between closest ranks (numpy's default), the median of an even
 * count the mean of the two middle values, prices rounded half up to a whole dollar, and the share
 * of retail value rounded half up to two decimals. test/market/statistics.test.ts holds them to an
 * exact reference on random data.
 */

/**
 * The p-th quantile (0 to 1) of values sorted ascending, numpy's "linear" method: the value at
 * rank (n - 1) * p, interpolated between the two closest ranks. Null for no values.
 */
export function percentile(sorted: readonly number[], p: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const rank = (n - 1) * p;
  const low = Math.floor(rank);
  const high = Math.min(low + 1, n - 1);
  return sorted[low]! + (rank - low) * (sorted[high]! - sorted[low]!);
}

/**
 * Rounds half up to a whole number. Interpolated prices are whole dollars plus a multiple of a
 * quarter (ranks at p25, p50, p75 are multiples of a quarter), which a double holds exactly, so
 * adding a half and flooring is exact.
 */
export function roundHalfUp(value: number): number {
  return Math.floor(value + 0.5);
}

/** Whole-dollar price figures of the comparables' prices (any order); every figure null for none. */
export function priceFigures(prices: readonly number[]): { min: number | null; p25: number | null; median: number | null; p75: number | null; max: number | null } {
  const sorted = [...prices].sort((a, b) => a - b);
  const at = (p: number) => {
    const value = percentile(sorted, p);
    return value === null ? null : roundHalfUp(value);
  };
  return { min: at(0), p25: at(0.25), median: at(0.5), p75: at(0.75), max: at(1) };
}

/** The median of whole-dollar prices, rounded half up (by_damage, by_month). */
export function medianPrice(prices: readonly number[]): number | null {
  return priceFigures(prices).median;
}

/**
 * The median of price / retail value over the pairs whose retail value is above 0, rounded half
 * up to two decimals; null when there is none. The ratios are ordered as doubles, but the median
 * is rounded from its exact fraction (BigInt): 57 / 200 is 0.285 and rounds to 0.29, where its
 * double, 0.28499999..., would round down.
 */
export function shareOfRetailMedian(pairs: readonly { price: number; retail: number | null }[]): number | null {
  const shares = pairs
    .filter((pair): pair is { price: number; retail: number } => pair.retail !== null && pair.retail > 0)
    .map((pair) => ({ price: pair.price, retail: pair.retail, ratio: pair.price / pair.retail }))
    .sort((a, b) => a.ratio - b.ratio);
  const n = shares.length;
  if (n === 0) return null;
  const lower = shares[Math.floor((n - 1) / 2)]!;
  const upper = shares[Math.floor(n / 2)]!;
  // The median as the fraction numerator / denominator: one ratio, or the mean of the two middle ones.
  const numerator = BigInt(lower.price) * BigInt(upper.retail) + BigInt(upper.price) * BigInt(lower.retail);
  const denominator = 2n * BigInt(lower.retail) * BigInt(upper.retail);
  return roundFractionHalfUp(numerator, denominator, 100);
}

/** numerator / denominator (both positive) rounded half up to 1 / scale. */
export function roundFractionHalfUp(numerator: bigint, denominator: bigint, scale: number): number {
  const scaled = (2n * BigInt(scale) * numerator + denominator) / (2n * denominator);
  return Number(scaled) / scale;
}
