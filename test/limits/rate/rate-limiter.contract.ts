import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'vitest';
import { WINDOW_MS, type RateDecision, type RateLimiter } from '../../../src/limits/rate/rate-limiter.ts';

export type RateLimiterFactory = () => RateLimiter | Promise<RateLimiter>;

/**
 * Slack for an implementation whose clock counts whole milliseconds (a server clock, say) while
 * the test measures fractions: its decisions may be off by that rounding, never by more.
 */
const CLOCK_TOLERANCE_MS = 2;

/** A decision with the local times between which the implementation made it. */
interface Timed {
  decision: RateDecision;
  sent: number;
  received: number;
}

async function timedConsume(limiter: RateLimiter, key: string, limit: number): Promise<Timed> {
  const sent = performance.now();
  const decision = await limiter.consume(key, limit);
  return { decision, sent, received: performance.now() };
}

async function sleepUntil(moment: number): Promise<void> {
  // Timers may fire a fraction of a millisecond early; wait until the moment has surely passed.
  while (performance.now() < moment) await sleep(Math.max(1, Math.ceil(moment - performance.now())));
}

function burst(limiter: RateLimiter, key: string, limit: number, size: number): Promise<Timed[]> {
  return Promise.all(Array.from({ length: size }, () => timedConsume(limiter, key, limit)));
}

const allowedCount = (results: Timed[]) => results.filter((r) => r.decision.allowed).length;

/**
 * The contract of every RateLimiter (src/limits/rate/rate-limiter.ts): an exact sliding
 * window of one second per key. It runs against the real clock, so that an implementation whose
 * time comes from elsewhere (a Redis server) is held to it too: every timing assertion is derived
 * from the local moments before and after each call, which bracket the implementation's own
 * decision time, so a slow machine can make a check weaker but never make a correct limiter fail.
 * Keys are random, so suites sharing one server do not meet. Real waits add up to about 2.5 s
 * because the tests run concurrently.
 */
export function rateLimiterContract(name: string, factory: RateLimiterFactory): void {
  describe.concurrent(`RateLimiter contract: ${name}`, () => {
    const newKey = () => `rl-contract:${randomBytes(8).toString('hex')}`;

    async function open(onTestFinished: (fn: () => Promise<void>) => void): Promise<RateLimiter> {
      const limiter = await factory();
      onTestFinished(() => limiter.close());
      return limiter;
    }

    test('a burst of `limit` simultaneous requests all pass, and the next is refused', async ({ expect, onTestFinished }) => {
      const limiter = await open(onTestFinished);
      const key = newKey();
      const accepted = await burst(limiter, key, 5, 5);
      expect(accepted.map((r) => r.decision.allowed)).toEqual([true, true, true, true, true]);
      expect(accepted.map((r) => r.decision.remaining).sort()).toEqual([0, 1, 2, 3, 4]);
      for (const r of accepted) expect(r.decision.limit).toBe(5);

      const next = await timedConsume(limiter, key, 5);
      expect(next.decision).toMatchObject({ allowed: false, limit: 5, remaining: 0 });
      expect(allowedCount(await burst(limiter, key, 5, 3))).toBe(0);
    });

    test('more simultaneous requests than the limit: exactly `limit` pass', async ({ expect, onTestFinished }) => {
      const limiter = await open(onTestFinished);
      const key = newKey();
      const results = await burst(limiter, key, 7, 25);
      expect(allowedCount(results)).toBe(7);
      const refused = results.filter((r) => !r.decision.allowed);
      for (const r of refused) expect(r.decision.remaining).toBe(0);
    });

    test('keys are independent', async ({ expect, onTestFinished }) => {
      const limiter = await open(onTestFinished);
      const [a, b, c] = [newKey(), newKey(), newKey()];
      expect(allowedCount(await burst(limiter, a, 3, 5))).toBe(3);
      expect((await limiter.consume(a, 3)).allowed).toBe(false);
      // A refused key takes nothing from the others, whatever their limits.
      expect(allowedCount(await burst(limiter, b, 3, 5))).toBe(3);
      expect(allowedCount(await burst(limiter, c, 10, 12))).toBe(10);
      expect(await limiter.consume(newKey(), 3)).toMatchObject({ allowed: true, remaining: 2 });
    });

    test('remaining counts down, and resetMs says when the oldest accepted request leaves the window', async ({ expect, onTestFinished }) => {
      const limiter = await open(onTestFinished);
      const key = newKey();
      const first = await timedConsume(limiter, key, 4);
      expect(first.decision).toMatchObject({ allowed: true, limit: 4, remaining: 3 });
      // The request just accepted is the oldest: a whole window to go.
      expect(first.decision.resetMs).toBeLessThanOrEqual(WINDOW_MS + CLOCK_TOLERANCE_MS);
      expect(first.decision.resetMs).toBeGreaterThanOrEqual(WINDOW_MS - (first.received - first.sent) - CLOCK_TOLERANCE_MS);

      await sleep(250);
      const later = [await timedConsume(limiter, key, 4), ...(await burst(limiter, key, 4, 2))];
      expect(later.map((r) => r.decision.allowed)).toEqual([true, true, true]);
      expect(later.map((r) => r.decision.remaining).sort()).toEqual([0, 1, 2]);
      const refused = await timedConsume(limiter, key, 4);
      expect(refused.decision).toMatchObject({ allowed: false, remaining: 0 });
      // Every later decision counts down to the first request leaving the window.
      for (const r of [...later, refused]) {
        expect(r.decision.resetMs).toBeGreaterThanOrEqual(first.sent + WINDOW_MS - r.received - CLOCK_TOLERANCE_MS);
        expect(r.decision.resetMs).toBeLessThanOrEqual(first.received + WINDOW_MS - r.sent + 1 + CLOCK_TOLERANCE_MS);
      }
      expect(refused.decision.resetMs).toBeLessThan(WINDOW_MS - 200);
    });

    test('a slot frees exactly when the oldest accepted request is one second old', async ({ expect, onTestFinished }) => {
      const limiter = await open(onTestFinished);
      const key = newKey();
      const oldest = await timedConsume(limiter, key, 3);
      await sleep(300);
      const pair = await burst(limiter, key, 3, 2);
      expect([oldest, ...pair].every((r) => r.decision.allowed)).toBe(true);
      expect((await limiter.consume(key, 3)).allowed).toBe(false);

      // Shortly before the oldest is a second old the window is still full. (When this process is
      // so slow that the answer comes back after that moment, nothing can be concluded.)
      await sleepUntil(oldest.sent + WINDOW_MS - 150);
      const early = await timedConsume(limiter, key, 3);
      if (early.received < oldest.sent + WINDOW_MS - CLOCK_TOLERANCE_MS) expect(early.decision.allowed).toBe(false);

      // Once it is a second old, exactly one slot is free: the pair is still in the window.
      await sleepUntil(oldest.received + WINDOW_MS + CLOCK_TOLERANCE_MS);
      const freed = await timedConsume(limiter, key, 3);
      expect(freed.decision).toMatchObject({ allowed: true, remaining: 0 });
      const full = await timedConsume(limiter, key, 3);
      const pairSent = Math.min(...pair.map((r) => r.sent));
      if (full.received < pairSent + WINDOW_MS - CLOCK_TOLERANCE_MS) expect(full.decision.allowed).toBe(false);

      // resetMs is a wait that works: after it, the next slot (the pair's) is free.
      await sleep(full.decision.resetMs + CLOCK_TOLERANCE_MS);
      expect((await limiter.consume(key, 3)).allowed).toBe(true);
    });

    test('no one-second window ever holds more than `limit` accepted requests, and no request is refused without cause', async ({ expect, onTestFinished }) => {
      const limiter = await open(onTestFinished);
      const key = newKey();
      const limit = 4;
      // A client that opens with a burst, keeps a steady trickle above the rate, and bursts again.
      const offsets: number[] = [];
      for (let i = 0; i < 6; i++) offsets.push(0);
      for (let t = 45; t < 2450; t += 45) offsets.push(t);
      for (let i = 0; i < 5; i++) offsets.push(1010);
      for (let i = 0; i < 3; i++) offsets.push(1700);
      for (let i = 0; i < 4; i++) offsets.push(2205);
      const start = performance.now();
      const results = await Promise.all(
        offsets.map(async (offset) => {
          await sleepUntil(start + offset);
          return timedConsume(limiter, key, limit);
        }),
      );

      const accepted = results.filter((r) => r.decision.allowed).sort((x, y) => x.sent - y.sent);
      const refused = results.filter((r) => !r.decision.allowed);
      expect(refused.length).toBeGreaterThan(0);
      expect(accepted.length).toBeGreaterThanOrEqual(2 * limit);

      // Safety: any limit + 1 accepted requests were decided at least a second apart.
      const crowded: string[] = [];
      for (let i = 0; i + limit < accepted.length; i++) {
        const group = accepted.slice(i, i + limit + 1);
        const span = Math.max(...group.map((r) => r.received)) - group[0]!.sent;
        if (span < WINDOW_MS - CLOCK_TOLERANCE_MS) crowded.push(`${limit + 1} accepted within ${span.toFixed(1)} ms from ${(group[0]!.sent - start).toFixed(1)} ms`);
      }
      expect(crowded).toEqual([]);

      // Liveness: a refusal needs `limit` accepted requests that could be in its window.
      const unfair: string[] = [];
      for (const r of refused) {
        const inWindow = accepted.filter(
          (a) => a.received > r.sent - WINDOW_MS - CLOCK_TOLERANCE_MS && a.sent <= r.received + CLOCK_TOLERANCE_MS,
        ).length;
        if (inWindow < limit) unfair.push(`refused at ${(r.sent - start).toFixed(1)} ms with ${inWindow} accepted in the window`);
      }
      expect(unfair).toEqual([]);
    });

    test('limit 1 works', async ({ expect, onTestFinished }) => {
      const limiter = await open(onTestFinished);
      const key = newKey();
      const first = await timedConsume(limiter, key, 1);
      expect(first.decision).toMatchObject({ allowed: true, limit: 1, remaining: 0 });
      const second = await timedConsume(limiter, key, 1);
      expect(second.decision).toMatchObject({ allowed: false, limit: 1, remaining: 0 });
      expect(second.decision.resetMs).toBeGreaterThan(0);
      expect(second.decision.resetMs).toBeLessThanOrEqual(WINDOW_MS + CLOCK_TOLERANCE_MS);

      expect(allowedCount(await burst(limiter, newKey(), 1, 6))).toBe(1);

      await sleep(second.decision.resetMs + CLOCK_TOLERANCE_MS);
      expect((await limiter.consume(key, 1)).allowed).toBe(true);
      expect((await limiter.consume(key, 1)).allowed).toBe(false);
    });

    test('a changed limit applies at once: lowered, the window counts as full; raised, there is room again', async ({ expect, onTestFinished }) => {
      const limiter = await open(onTestFinished);
      const key = newKey();
      expect(allowedCount(await burst(limiter, key, 5, 3))).toBe(3);
      expect(await limiter.consume(key, 2)).toMatchObject({ allowed: false, limit: 2, remaining: 0 });

      const other = newKey();
      expect(allowedCount(await burst(limiter, other, 3, 4))).toBe(3);
      expect(await limiter.consume(other, 5)).toMatchObject({ allowed: true, limit: 5, remaining: 1 });
    });
  });
}
