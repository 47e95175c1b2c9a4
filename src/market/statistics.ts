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
export function percentile(sorted: ArrayLike<number>, p: number): number | null {
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

/** The values sorted ascending, as numbers: a typed array's own numeric sort, without a comparator called per comparison. */
function sortedAscending(values: ArrayLike<number>): Float64Array {
  return new Float64Array(values).sort();
}

/** Whole-dollar price figures of the comparables' prices (any order); every figure null for none. */
export function priceFigures(prices: ArrayLike<number>): PriceFigures {
  return priceFiguresOfSorted(sortedAscending(prices));
}

export interface PriceFigures {
  min: number | null;
  p25: number | null;
  median: number | null;
  p75: number | null;
  max: number | null;
}

/** priceFigures of prices already sorted ascending. */
export function priceFiguresOfSorted(sorted: ArrayLike<number>): PriceFigures {
  const at = (p: number) => {
    const value = percentile(sorted, p);
    return value === null ? null : roundHalfUp(value);
  };
  return { min: at(0), p25: at(0.25), median: at(0.5), p75: at(0.75), max: at(1) };
}

/** The median of whole-dollar prices, rounded half up (by_damage, by_month): priceFigures(prices).median. */
export function medianPrice(prices: ArrayLike<number>): number | null {
  return medianOfSorted(sortedAscending(prices));
}

/** medianPrice of prices already sorted ascending. */
export function medianOfSorted(sorted: ArrayLike<number>): number | null {
  const value = percentile(sorted, 0.5);
  return value === null ? null : roundHalfUp(value);
}

/**
 * The median of price / retail value over the pairs whose retail value is above 0, rounded half
 * up to two decimals; null when there is none. The ratios are ordered as doubles, but the median
 * is rounded from its exact fraction (BigInt): 57 / 200 is 0.285 and rounds to 0.29, where its
 * double, 0.28499999..., would round down.
 */
export function shareOfRetailMedian(pairs: readonly { price: number; retail: number | null }[]): number | null {
  return shareOfRetailMedianOf(
    pairs.map((pair) => pair.price),
    pairs.map((pair) => pair.retail ?? Number.NaN),
    pairs.length,
  );
}

/**
 * shareOfRetailMedian of the first `count` pairs given as two columns, a retail value of NaN for
 * none (the market's packed comparables, market/comparables-cache.ts).
 */
export function shareOfRetailMedianOf(prices: ArrayLike<number>, retails: ArrayLike<number>, count: number): number | null {
  const kept: number[] = [];
  for (let i = 0; i < count; i++) if (retails[i]! > 0) kept.push(i);
  const n = kept.length;
  if (n === 0) return null;
  const ratios = new Float64Array(n);
  for (let i = 0; i < n; i++) ratios[i] = prices[kept[i]!]! / retails[kept[i]!]!;
  const sorted = new Float64Array(ratios).sort();
  const lower = kept[atRank(ratios, sorted, Math.floor((n - 1) / 2))]!;
  const upper = kept[atRank(ratios, sorted, Math.floor(n / 2))]!;
  // The median as the fraction numerator / denominator: one ratio, or the mean of the two middle ones.
  const numerator = BigInt(prices[lower]!) * BigInt(retails[upper]!) + BigInt(prices[upper]!) * BigInt(retails[lower]!);
  const denominator = 2n * BigInt(retails[lower]!) * BigInt(retails[upper]!);
  return roundFractionHalfUp(numerator, denominator, 100);
}

/**
 * The index of the pair at `rank` of the pairs ordered by ratio, equal ratios in their given order
 * (what a stable sort of the pairs by ratio gives), found from the sorted ratios alone: the pair is
 * the (rank - the count of smaller ratios)-th of those with its ratio. Pairs whose doubles are
 * equal may differ as fractions, so which of them is at the rank is fixed, not left to the sort.
 */
function atRank(ratios: Float64Array, sorted: Float64Array, rank: number): number {
  const value = sorted[rank]!;
  let low = 0;
  let high = rank;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  let skip = rank - low;
  for (let i = 0; i < ratios.length; i++) if (ratios[i] === value && skip-- === 0) return i;
  throw new Error('atRank: the ratio at the rank is not among the pairs');
}

/** numerator / denominator (both positive) rounded half up to 1 / scale. */
export function roundFractionHalfUp(numerator: bigint, denominator: bigint, scale: number): number {
  const scaled = (2n * BigInt(scale) * numerator + denominator) / (2n * denominator);
  return Number(scaled) / scale;
}
