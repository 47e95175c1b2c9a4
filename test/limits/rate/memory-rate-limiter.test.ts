import { describe, expect, test } from 'vitest';
import { MemoryRateLimiter } from '../../../src/limits/rate/memory-rate-limiter.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';

rateLimiterContract('MemoryRateLimiter', () => new MemoryRateLimiter());

/** With an injected clock the exact edges can be checked to the microsecond. */
describe('MemoryRateLimiter on a controlled clock', () => {
  function withClock() {
    const clock = { now: 0 };
    const limiter = new MemoryRateLimiter(() => clock.now);
    return { clock, limiter };
  }

  test('the oldest request leaves the window at exactly one second', async () => {
    const { clock, limiter } = withClock();
    clock.now = 100;
    expect(limiter.consumeSync('k', 2)).toEqual({ allowed: true, limit: 2, remaining: 1, resetMs: 1000 });
    clock.now = 400;
    expect(limiter.consumeSync('k', 2)).toEqual({ allowed: true, limit: 2, remaining: 0, resetMs: 700 });
    clock.now = 1099.999;
    expect(limiter.consumeSync('k', 2)).toEqual({ allowed: false, limit: 2, remaining: 0, resetMs: 1 });
    clock.now = 1100;
    expect(limiter.consumeSync('k', 2)).toEqual({ allowed: true, limit: 2, remaining: 0, resetMs: 300 });
    clock.now = 1399;
    expect(limiter.consumeSync('k', 2)).toMatchObject({ allowed: false, resetMs: 1 });
    clock.now = 1400;
    expect(limiter.consumeSync('k', 2)).toMatchObject({ allowed: true });
    await limiter.close();
  });

  test('a fixed window would let 2 x limit through at its edge; this one does not', async () => {
    const { clock, limiter } = withClock();
    clock.now = 999;
    for (let i = 0; i < 3; i++) expect(limiter.consumeSync('k', 3).allowed).toBe(true);
    clock.now = 1001;
    expect(limiter.consumeSync('k', 3).allowed).toBe(false);
    clock.now = 1998.999;
    expect(limiter.consumeSync('k', 3).allowed).toBe(false);
    clock.now = 1999;
    for (let i = 0; i < 3; i++) expect(limiter.consumeSync('k', 3).allowed).toBe(true);
    await limiter.close();
  });

  test('refusals do not extend the wait', async () => {
    const { clock, limiter } = withClock();
    limiter.consumeSync('k', 1);
    for (let t = 10; t < 1000; t += 10) {
      clock.now = t;
      expect(limiter.consumeSync('k', 1)).toMatchObject({ allowed: false, resetMs: 1000 - t });
    }
    clock.now = 1000;
    expect(limiter.consumeSync('k', 1).allowed).toBe(true);
    await limiter.close();
  });
});

describe('MemoryRateLimiter as the fallback of the shared limiter', () => {
  test('record counts an accept decided elsewhere, whatever the window holds, keeping the newest', async () => {
    const clock = { now: 0 };
    const limiter = new MemoryRateLimiter(() => clock.now);
    limiter.record('k', 2);
    clock.now = 300;
    limiter.record('k', 2);
    expect(limiter.hasRoom('k', 2)).toBe(false);
    expect(limiter.consumeSync('k', 2).allowed).toBe(false);
    clock.now = 400;
    // A third (Redis's clock and this one disagree by a little): the oldest goes, the window stays full.
    limiter.record('k', 2);
    clock.now = 1000;
    expect(limiter.consumeSync('k', 2)).toMatchObject({ allowed: false, resetMs: 300 });
    clock.now = 1300;
    expect(limiter.hasRoom('k', 2)).toBe(true);
    expect(limiter.consumeSync('k', 2)).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.close();
  });

  test('hasRoom takes nothing', async () => {
    const limiter = new MemoryRateLimiter(() => 0);
    for (let i = 0; i < 5; i++) expect(limiter.hasRoom('k', 1)).toBe(true);
    expect(limiter.consumeSync('k', 1).allowed).toBe(true);
    expect(limiter.hasRoom('k', 1)).toBe(false);
    await limiter.close();
  });

  test('holdsRecentAccepts says whether anything was accepted within the last window', async () => {
    const clock = { now: 0 };
    const limiter = new MemoryRateLimiter(() => clock.now);
    expect(limiter.holdsRecentAccepts()).toBe(false);
    limiter.consumeSync('a', 3);
    clock.now = 500;
    limiter.record('b', 3);
    clock.now = 1000;
    expect(limiter.holdsRecentAccepts()).toBe(true);
    clock.now = 1500;
    expect(limiter.holdsRecentAccepts()).toBe(false);
    await limiter.close();
  });
});
