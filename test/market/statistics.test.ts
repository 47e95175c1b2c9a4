import { describe, expect, it } from 'vitest';
import { Prng } from '../../src/dev/seed/prng.ts';
import { percentile, priceFigures, roundHalfUp, shareOfRetailMedian } from '../../src/market/statistics.ts';

/**
 * The market's figures against an exact reference: fractions of BigInts, with numpy's linear
 * percentile written out (rank (n - 1) * p, interpolated), the median of an even count the mean of
 * the middle two, and rounding half up of the exact value. Random data from a seeded generator,
 * with many ties and exact halves (small ranges), and the known values numpy gives.
 */

/** A non-negative fraction, not reduced. */
type Fraction = { n: bigint; d: bigint };
const roundFraction = (f: Fraction, scale: bigint): number => Number((2n * scale * f.n + f.d) / (2n * f.d)) / Number(scale);

/** numpy.percentile(values, 100 * q / 4, method='linear') as an exact fraction. */
function referencePercentile(values: readonly number[], quarter: number): Fraction {
  const sorted = values.map(BigInt).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const rankTimes4 = BigInt((sorted.length - 1) * quarter);
  const low = rankTimes4 / 4n;
  const high = low + 1n < BigInt(sorted.length) ? low + 1n : low;
  const frac = rankTimes4 - low * 4n;
  const a = sorted[Number(low)]!;
  const b = sorted[Number(high)]!;
  return { n: 4n * a + frac * (b - a), d: 4n };
}

function referenceShare(pairs: { price: number; retail: number | null }[]): number | null {
  const shares = pairs.filter((p) => p.retail !== null && p.retail > 0).map((p) => ({ n: BigInt(p.price), d: BigInt(p.retail!) }));
  if (shares.length === 0) return null;
  shares.sort((x, y) => (x.n * y.d < y.n * x.d ? -1 : x.n * y.d > y.n * x.d ? 1 : 0));
  const k = shares.length;
  const a = shares[Math.floor((k - 1) / 2)]!;
  const b = shares[Math.floor(k / 2)]!;
  return roundFraction({ n: a.n * b.d + b.n * a.d, d: 2n * a.d * b.d }, 100n);
}

describe('market statistics', () => {
  it('gives the values numpy gives', () => {
    expect(percentile([1, 2, 3, 4], 0.25)).toBe(1.75);
    expect(percentile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(percentile([900, 4100, 5200], 0.25)).toBe(2500);
    expect(percentile([7], 0.75)).toBe(7);
    expect(percentile([], 0.5)).toBeNull();
    expect(priceFigures([1, 2, 3, 4])).toEqual({ min: 1, p25: 2, median: 3, p75: 3, max: 4 });
    expect(priceFigures([])).toEqual({ min: null, p25: null, median: null, p75: null, max: null });
    expect(roundHalfUp(2.5)).toBe(3);
    expect(roundHalfUp(2.25)).toBe(2);
    // 57 / 200 is 0.285 exactly: half up is 0.29 (its double, 0.28499..., would round down).
    expect(shareOfRetailMedian([{ price: 57, retail: 200 }])).toBe(0.29);
    expect(shareOfRetailMedian([{ price: 5, retail: 0 }, { price: 5, retail: null }])).toBeNull();
  });

  it('matches the exact reference on random data', () => {
    const prng = new Prng(24);
    for (let round = 0; round < 800; round++) {
      const n = prng.int(1, 60);
      // Narrow ranges make ties and exact halves common; wide ones reach the largest prices.
      const max = [3, 40, 20_000, 2_147_483_647][round % 4]!;
      const prices = Array.from({ length: n }, () => prng.int(1, max));
      const figures = priceFigures(prices);
      const expected = [0, 1, 2, 3, 4].map((quarter) => roundFraction(referencePercentile(prices, quarter), 1n));
      expect([figures.min, figures.p25, figures.median, figures.p75, figures.max], JSON.stringify(prices)).toEqual(expected);

      const pairs = prices.map((price) => ({ price, retail: prng.next() < 0.15 ? (prng.next() < 0.5 ? null : 0) : prng.int(1, Math.min(max * 3, 2_147_483_647)) }));
      expect(shareOfRetailMedian(pairs), JSON.stringify(pairs)).toBe(referenceShare(pairs));
    }
  });

  it('takes the middle pairs as a stable sort by ratio would, also among ratios whose doubles are equal', () => {
    // What shareOfRetailMedian did before it sorted the ratios alone: the pairs sorted by their double, stably.
    const stableSorted = (pairs: { price: number; retail: number | null }[]) => {
      const shares = pairs.filter((p) => p.retail !== null && p.retail > 0).map((p) => ({ price: p.price, retail: p.retail! })).sort((a, b) => a.price / a.retail - b.price / b.retail);
      if (shares.length === 0) return null;
      const lower = shares[Math.floor((shares.length - 1) / 2)]!;
      const upper = shares[Math.floor(shares.length / 2)]!;
      return roundFraction({ n: BigInt(lower.price) * BigInt(upper.retail) + BigInt(upper.price) * BigInt(lower.retail), d: 2n * BigInt(lower.retail) * BigInt(upper.retail) }, 100n);
    };
    // 333333337 / 1000000007 and 333333338 / 1000000010 are one double, two fractions.
    const twins = [{ price: 333_333_337, retail: 1_000_000_007 }, { price: 333_333_338, retail: 1_000_000_010 }];
    expect(twins[0]!.price / twins[0]!.retail).toBe(twins[1]!.price / twins[1]!.retail);
    const prng = new Prng(2024);
    for (let round = 0; round < 400; round++) {
      const pairs = Array.from({ length: prng.int(1, 30) }, () =>
        prng.next() < 0.5 ? { ...twins[prng.int(0, 1)]! } : { price: prng.int(1, 4), retail: prng.next() < 0.1 ? null : prng.int(1, 12) },
      );
      expect(shareOfRetailMedian(pairs), JSON.stringify(pairs)).toBe(stableSorted(pairs));
    }
  });
});
