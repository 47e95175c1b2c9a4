/**
 * A small seeded pseudo-random generator (mulberry32). Synthetic data must be reproducible from
 * its seed, which Math.random is not; mulberry32 passes the usual statistical batteries for this
 * kind of use, costs a few nanoseconds a draw, and its 2^32 period is far beyond what a seed run
 * draws (about 60 values a lot).
 */
export class Prng {
  private state: number;

  constructor(seed: number) {
    // Spread nearby seeds (1, 2, 3...) apart before the first draw.
    this.state = mix32(seed >>> 0) >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An unsigned 32-bit integer. */
  uint32(): number {
    return Math.floor(this.next() * 4294967296);
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/** A 32-bit integer hash (the murmur3 finaliser): a seed from another seed, or a salt. */
export function mix32(value: number): number {
  let h = value | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A weighted choice precomputed once: picking is a binary search over cumulative weights, which
 * matters at a million lots with a dozen weighted fields each.
 */
export class WeightedTable<T> {
  private readonly items: T[];
  private readonly cumulative: Float64Array;
  private readonly total: number;

  constructor(entries: readonly (readonly [T, number])[]) {
    if (entries.length === 0) throw new Error('a weighted table needs at least one entry');
    this.items = entries.map(([item]) => item);
    this.cumulative = new Float64Array(entries.length);
    let sum = 0;
    entries.forEach(([, weight], index) => {
      if (!(weight > 0)) throw new Error(`weights must be positive; got ${weight}`);
      sum += weight;
      this.cumulative[index] = sum;
    });
    this.total = sum;
  }

  pick(rng: Prng): T {
    const target = rng.next() * this.total;
    let low = 0;
    let high = this.cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.cumulative[mid]! > target) high = mid;
      else low = mid + 1;
    }
    return this.items[low]!;
  }
}
