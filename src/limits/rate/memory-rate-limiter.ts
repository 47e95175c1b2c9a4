import { performance } from 'node:perf_hooks';
import { WINDOW_MS, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/**
 * The exact sliding window in one process. The clock is monotonic (performance.now) so that a
 * wall-clock step cannot open or close the window. Keys idle for a window are swept so that memory
 * stays proportional to the accounts active in the last second or so.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly accepted = new Map<string, number[]>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.sweeper = setInterval(() => this.sweep(), 10_000);
    this.sweeper.unref();
  }

  async consume(key: string, limit: number): Promise<RateDecision> {
    return this.consumeSync(key, limit);
  }

  consumeSync(key: string, limit: number): RateDecision {
    const now = this.now();
    const times = this.window(key, limit, now);
    const allowed = times.length < limit;
    if (allowed) times.push(now);
    const oldest = times[0];
    return {
      allowed,
      limit,
      remaining: limit - times.length,
      // Whole milliseconds of the elapsed time, so that float error (oldest + 1000 - now giving
      // 1000.0000001) cannot round a fresh window up to 1001 ms.
      resetMs: oldest === undefined ? 0 : Math.max(0, WINDOW_MS - Math.floor(now - oldest)),
    };
  }

  /**
   * Counts an accept that another limiter decided (the shared one, in Redis), unconditionally: when
   * this process has to decide alone, what it let through moments ago is already in its window.
   */
  record(key: string, limit: number): void {
    const now = this.now();
    const times = this.window(key, limit, now);
    times.push(now);
    // Should jitter put more than `limit` in the window, the newest accepts are the ones to keep.
    if (times.length > limit) times.shift();
  }

  /** Whether the key's window has room now, without taking it. */
  hasRoom(key: string, limit: number): boolean {
    return this.window(key, limit, this.now()).length < limit;
  }

  /** Whether any key accepted a request within the last window. */
  holdsRecentAccepts(): boolean {
    const windowStart = this.now() - WINDOW_MS;
    for (const times of this.accepted.values()) {
      if (times.length > 0 && times[times.length - 1]! > windowStart) return true;
    }
    return false;
  }

  /** The key's accept times still in the window, at most the newest `limit` of them. */
  private window(key: string, limit: number, now: number): number[] {
    let times = this.accepted.get(key);
    if (times === undefined) {
      times = [];
      this.accepted.set(key, times);
    }
    // Drop what left the window, and anything beyond the newest `limit` (a plan was downgraded).
    const windowStart = now - WINDOW_MS;
    let drop = 0;
    while (drop < times.length && times[drop]! <= windowStart) drop++;
    if (times.length - drop > limit) drop = times.length - limit;
    if (drop > 0) times.splice(0, drop);
    return times;
  }

  private sweep(): void {
    const windowStart = this.now() - WINDOW_MS;
    for (const [key, times] of this.accepted) {
      if (times.length === 0 || times[times.length - 1]! <= windowStart) this.accepted.delete(key);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.accepted.clear();
  }
}
