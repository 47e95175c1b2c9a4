import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../../src/limits/rate/memory-rate-limiter.ts';
import type { RateDecision, RateLimiter } from '../../../src/limits/rate/rate-limiter.ts';
import { RedisHealth } from '../../../src/limits/rate/redis-health.ts';
import { RedisRateLimiter } from '../../../src/limits/rate/redis-rate-limiter.ts';
import { ResilientRateLimiter, type LimiterMode, type PrimaryHealth } from '../../../src/limits/rate/resilient-rate-limiter.ts';
import { TEST_REDIS_URL } from '../../support/env.ts';
import { TcpProxy } from '../../support/tcp-proxy.ts';
import { ManualClock } from './manual-clock.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';

/** A Redis stand-in on the test's clock that the test makes fail, hang, or come back empty. */
class FakeRedis implements RateLimiter {
  mode: 'ok' | 'fail' | 'hang' = 'ok';
  calls = 0;
  private window: MemoryRateLimiter;

  constructor(private readonly clock: ManualClock) {
    this.window = new MemoryRateLimiter(clock.now);
  }

  /** A restarted Redis keeps nothing. */
  wipe(): void {
    void this.window.close();
    this.window = new MemoryRateLimiter(this.clock.now);
  }

  async consume(key: string, limit: number): Promise<RateDecision> {
    this.calls++;
    if (this.mode === 'fail') throw new Error('ECONNREFUSED');
    if (this.mode === 'hang') return new Promise(() => {});
    return this.window.consumeSync(key, limit);
  }

  close(): Promise<void> {
    return this.window.close();
  }
}

/** The client's signal, set by the test. */
class FakeHealth implements PrimaryHealth {
  up: boolean;
  readonly suspected: unknown[] = [];
  private readonly listeners: ((up: boolean, reason?: unknown) => void)[] = [];

  constructor(up = true) {
    this.up = up;
  }

  onChange(listener: (up: boolean, reason?: unknown) => void): void {
    this.listeners.push(listener);
  }

  set(up: boolean): void {
    if (up === this.up) return;
    this.up = up;
    for (const listener of this.listeners) listener(up);
  }

  suspect(reason: unknown): void {
    this.suspected.push(reason);
    this.set(false);
  }
}

function instance(clock: ManualClock, redis: RateLimiter, options: { health?: FakeHealth; rejoinMs?: number } = {}) {
  const health = options.health ?? new FakeHealth();
  const events: string[] = [];
  const local = new MemoryRateLimiter(clock.now);
  const limiter = new ResilientRateLimiter(redis, local, health, {
    timeoutMs: 50,
    ...(options.rejoinMs === undefined ? {} : { rejoinMs: options.rejoinMs }),
    clock,
    events: {
      onModeChange: (mode: LimiterMode) => events.push(mode),
      onLocalDecision: (_decision, mode) => events.push(mode === 'fallback' ? 'alone' : 'local refusal'),
    },
  });
  return { limiter, health, events, local };
}

/** `size` requests one after the other at the current moment; how many passed. */
async function burst(limiter: RateLimiter, key: string, limit: number, size: number): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < size; i++) if ((await limiter.consume(key, limit)).allowed) allowed++;
  return allowed;
}

/** Windows [t, t + 1 s) holding more than `limit` of the accept times. */
function crowded(times: number[], limit: number): string[] {
  const sorted = [...times].sort((a, b) => a - b);
  const found: string[] = [];
  for (let i = 0; i + limit < sorted.length; i++) {
    if (sorted[i + limit]! - sorted[i]! < 1000) found.push(`${limit + 1} accepted in [${sorted[i]}, ${sorted[i + limit]}]`);
  }
  return found;
}

describe('ResilientRateLimiter', () => {
  rateLimiterContract('resilient over a healthy primary', () => {
    const local = new MemoryRateLimiter();
    return new ResilientRateLimiter(new MemoryRateLimiter(), local, new FakeHealth(true), {
      timeoutMs: 50,
      events: { onModeChange: () => {}, onLocalDecision: () => {} },
    });
  });

  it('Redis → fallback: the fallback counts what Redis let through this window, and leaves Redis alone', async () => {
    const clock = new ManualClock();
    const redis = new FakeRedis(clock);
    const a = instance(clock, redis);
    clock.advanceTo(100);
    expect(await burst(a.limiter, 'k', 3, 5)).toBe(3);
    expect(a.events).toEqual([]);

    clock.advanceTo(400);
    redis.mode = 'fail';
    a.health.set(false);
    expect(a.limiter.mode).toBe('fallback');
    expect(a.events).toEqual(['fallback']);
    const callsWhenDown = redis.calls;

    // The three Redis accepted at 100 ms are still in this instance's window: nothing more yet.
    clock.advanceTo(600);
    expect(await burst(a.limiter, 'k', 3, 5)).toBe(0);
    clock.advanceTo(1099);
    expect(await burst(a.limiter, 'k', 3, 1)).toBe(0);
    clock.advanceTo(1100);
    expect(await burst(a.limiter, 'k', 3, 5)).toBe(3);
    expect(redis.calls).toBe(callsWhenDown);
    expect(a.events.filter((e) => e === 'alone')).toHaveLength(11);
  });

  it('while the client says Redis is down, a decision waits for nothing', async () => {
    const clock = new ManualClock();
    const redis = new FakeRedis(clock);
    redis.mode = 'hang';
    const a = instance(clock, redis, { health: new FakeHealth(false) });
    expect(a.limiter.mode).toBe('fallback');
    // The clock does not move: a decision that needed the timeout would never settle.
    const decisions = await Promise.all([a.limiter.consume('k', 2), a.limiter.consume('k', 2), a.limiter.consume('k', 2)]);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
    expect(redis.calls).toBe(0);
  });

  it('a call that times out sends the instance to its fallback at once, and the client\'s health check brings it back', async () => {
    const clock = new ManualClock();
    const redis = new FakeRedis(clock);
    const a = instance(clock, redis);
    redis.mode = 'hang';
    let settled = false;
    const pending = a.limiter.consume('k', 2).then((decision) => {
      settled = true;
      return decision;
    });
    clock.advance(49);
    await sleep(0);
    expect(settled).toBe(false);
    clock.advance(1);
    expect((await pending).allowed).toBe(true);
    expect(a.health.suspected).toHaveLength(1);
    expect(a.limiter.mode).toBe('fallback');

    const calls = redis.calls;
    expect((await a.limiter.consume('k', 2)).allowed).toBe(true);
    expect(redis.calls).toBe(calls);

    // Recovery comes from the health signal, with no request at all.
    redis.mode = 'ok';
    a.health.set(true);
    expect(a.limiter.mode).toBe('rejoining');
    clock.advance(1050);
    expect(a.limiter.mode).toBe('redis');
    expect(a.events).toEqual(['fallback', 'alone', 'alone', 'rejoining', 'redis']);
  });

  it('fallback → Redis back empty: for one window a request must pass both; then Redis alone decides', async () => {
    const clock = new ManualClock();
    const redis = new FakeRedis(clock);
    const a = instance(clock, redis);
    const accepted: number[] = [];
    const at = async (moment: number, size: number) => {
      clock.advanceTo(moment);
      const allowed = await burst(a.limiter, 'k', 3, size);
      for (let i = 0; i < allowed; i++) accepted.push(moment);
      return allowed;
    };

    redis.mode = 'fail';
    redis.wipe();
    a.health.set(false);
    expect(await at(200, 5)).toBe(3);

    clock.advanceTo(500);
    redis.mode = 'ok';
    a.health.set(true);
    expect(a.limiter.mode).toBe('rejoining');
    // An empty Redis would let three more through here; the local window still holds the three of 200 ms.
    expect(await at(600, 5)).toBe(0);
    expect(redis.calls).toBe(0);
    expect(await at(1200, 5)).toBe(3);
    expect(redis.calls).toBe(3);

    // One window plus the timeout after Redis came back, Redis alone decides; it has seen those three.
    clock.advanceTo(1549);
    expect(a.limiter.mode).toBe('rejoining');
    clock.advanceTo(1550);
    expect(a.limiter.mode).toBe('redis');
    expect(await at(1600, 5)).toBe(0);
    expect(await at(2200, 5)).toBe(3);
    expect(a.events.filter((e) => e !== 'alone' && e !== 'local refusal')).toEqual(['fallback', 'rejoining', 'redis']);
    // The refusals of 600 ms and the two beyond the rate at 1200 ms were the local window's.
    expect(a.events.filter((e) => e === 'local refusal')).toHaveLength(7);
    expect(crowded(accepted, 3)).toEqual([]);
  });

  it('comes straight back to Redis when it accepted nothing alone within the last window', async () => {
    const clock = new ManualClock();
    const redis = new FakeRedis(clock);
    const a = instance(clock, redis, { health: new FakeHealth(false) });
    expect(await burst(a.limiter, 'k', 3, 1)).toBe(1);
    clock.advanceTo(1000);
    a.health.set(true);
    expect(a.limiter.mode).toBe('redis');
    expect(clock.pendingTimers).toBe(0);
  });

  it('Redis down again while rejoining: back to the fallback, and the old rejoin timer changes nothing', async () => {
    const clock = new ManualClock();
    const redis = new FakeRedis(clock);
    const a = instance(clock, redis, { health: new FakeHealth(false) });
    expect(await burst(a.limiter, 'k', 3, 3)).toBe(3);
    clock.advanceTo(100);
    a.health.set(true);
    expect(a.limiter.mode).toBe('rejoining');
    clock.advanceTo(300);
    a.health.set(false);
    expect(a.limiter.mode).toBe('fallback');
    clock.advanceTo(2000);
    expect(a.limiter.mode).toBe('fallback');
    expect(await burst(a.limiter, 'k', 3, 3)).toBe(3);
    a.health.set(true);
    expect(a.limiter.mode).toBe('rejoining');
    clock.advanceTo(3049);
    expect(a.limiter.mode).toBe('rejoining');
    clock.advanceTo(3050);
    expect(a.limiter.mode).toBe('redis');
  });

  it('a failed call while rejoining sends the instance back to its fallback, which still decides within the rate', async () => {
    const clock = new ManualClock();
    const redis = new FakeRedis(clock);
    const a = instance(clock, redis, { health: new FakeHealth(false) });
    expect(await burst(a.limiter, 'k', 3, 2)).toBe(2);
    a.health.set(true);
    redis.mode = 'fail';
    expect(await burst(a.limiter, 'k', 3, 3)).toBe(1);
    expect(a.limiter.mode).toBe('fallback');
    expect(a.health.suspected).toHaveLength(1);
  });

  /**
   * Three instances share one Redis, which dies (every instance notices at its own moment, so
   * that their own windows run out of phase), stays away two seconds, and comes back empty (each instance reconnects at its own moment),
   * under bursts of 15 requests every 100 ms against a 3/s account.
   */
  async function outage(rejoinMs?: number) {
    const clock = new ManualClock();
    const redis = new FakeRedis(clock);
    const instances = [0, 1, 2].map(() => instance(clock, redis, rejoinMs === undefined ? {} : { rejoinMs }));
    const script = new Map<number, () => void>([
      [
        700,
        () => {
          redis.mode = 'fail';
          redis.wipe();
          instances[0]!.health.set(false);
        },
      ],
      [730, () => instances[1]!.health.set(false)],
      [800, () => instances[2]!.health.set(false)],
      [
        3000,
        () => {
          redis.mode = 'ok';
          instances[0]!.health.set(true);
        },
      ],
      [3250, () => instances[1]!.health.set(true)],
      [3500, () => instances[2]!.health.set(true)],
    ]);
    const accepted: number[] = [];
    for (let t = 0; t <= 7000; t += 10) {
      clock.advanceTo(t);
      script.get(t)?.();
      if (t % 100 !== 0) continue;
      for (let i = 0; i < 15; i++) if ((await instances[i % 3]!.limiter.consume('account', 3)).allowed) accepted.push(t);
    }
    return { accepted, instances };
  }

  it('three instances through an outage: never more than 3 x rate in any window, and the rate alone once every instance is back', async () => {
    const { accepted, instances } = await outage();
    expect(crowded(accepted, 9)).toEqual([]);
    // The last instance reconnected at 3500 ms: from then on every accept passes Redis.
    expect(crowded(accepted.filter((t) => t >= 3500), 3)).toEqual([]);
    // Availability: during the outage each instance grants the rate on its own, and after it the account gets its rate.
    expect(accepted.filter((t) => t >= 1500 && t < 2500)).toHaveLength(9);
    for (let second = 5000; second < 7000; second += 1000) expect(accepted.filter((t) => t >= second && t < second + 1000)).toHaveLength(3);
    expect(instances.map((i) => i.limiter.mode)).toEqual(['redis', 'redis', 'redis']);
  });

  it('(the same outage without the rejoining window lets more through: the check above can fail)', async () => {
    const { accepted } = await outage(0);
    // Redis, empty, lets through what an instance had accepted alone just before it came back.
    expect(crowded(accepted, 9)).not.toEqual([]);
  });
});

describe.runIf(TEST_REDIS_URL)('ResilientRateLimiter over a real Redis behind a faulty network', () => {
  let proxy: TcpProxy;
  let redis: Redis;
  let health: RedisHealth;

  beforeEach(async () => {
    const target = new URL(TEST_REDIS_URL!);
    proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
    await proxy.start();
    redis = new Redis({
      host: '127.0.0.1',
      port: proxy.port,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => 50,
    });
    redis.on('error', () => {});
    await new Promise<void>((resolve) => redis.once('ready', () => resolve()));
    health = new RedisHealth(redis, { pingEveryMs: 50, pingTimeoutMs: 200 });
  });
  afterEach(async () => {
    health.close();
    redis.disconnect();
    await proxy.stop();
  });

  for (const fault of ['blackhole', 'down'] as const) {
    it(`falls back when Redis is ${fault === 'down' ? 'unreachable' : 'hung'} and recovers by itself, without a request, when it returns`, async () => {
      const modes: LimiterMode[] = [];
      const limiter = new ResilientRateLimiter(new RedisRateLimiter(redis, { keyPrefix: 'vh-test:rate:' }), new MemoryRateLimiter(), health, {
        timeoutMs: 50,
        rejoinMs: 300,
        events: { onModeChange: (mode) => modes.push(mode), onLocalDecision: () => {} },
      });
      const key = `fault-${fault}-${Date.now()}`;
      expect((await limiter.consume(key, 100)).allowed).toBe(true);
      expect(limiter.mode).toBe('redis');

      proxy[fault]();
      const started = performance.now();
      const during = await Promise.all(Array.from({ length: 20 }, () => limiter.consume(key, 100)));
      expect(performance.now() - started).toBeLessThan(1000);
      expect(during.every((d) => d.allowed)).toBe(true);
      expect(modes[0]).toBe('fallback');

      proxy.restore();
      const deadline = Date.now() + 5000;
      while (limiter.mode !== 'redis' && Date.now() < deadline) await sleep(20);
      expect(limiter.mode).toBe('redis');
      expect(modes).toEqual(['fallback', 'rejoining', 'redis']);
      await limiter.close();
    });
  }
});
