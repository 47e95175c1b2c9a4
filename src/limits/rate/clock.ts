import { performance } from 'node:perf_hooks';

/**
 * Time as the fallback machinery sees it: a monotonic clock and timers. Injected so that tests can
 * walk through an outage and a recovery millisecond by millisecond, without waiting.
 */
export interface Clock {
  now(): number;
  /** Calls `fn` after `ms`; the answer cancels it. The timer never keeps the process alive. */
  after(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
