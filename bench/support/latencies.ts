/** Latency percentiles in milliseconds, exact (from every sample, not a histogram's buckets). */
export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summariseLatencies(samples: Float64Array | number[]): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  const count = sorted.length;
  if (count === 0) return { count, mean: Number.NaN, p50: Number.NaN, p90: Number.NaN, p99: Number.NaN, max: Number.NaN };
  // Nearest-rank percentile: the smallest sample with at least q of all samples at or below it.
  const at = (q: number) => sorted[Math.min(count - 1, Math.max(0, Math.ceil(q * count) - 1))]!;
  let sum = 0;
  for (const value of sorted) sum += value;
  return { count, mean: sum / count, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[count - 1]! };
}
