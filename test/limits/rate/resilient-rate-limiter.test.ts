import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../../src/limits/rate/memory-rate-limiter.ts';
import type { RateDecision, RateLimiter } from '../../../src/limits/rate/rate-limiter.ts';
import { RedisRateLimiter } from '../../../src/limits/rate/redis-rate-limiter.ts';
import { ResilientRateLimiter } from '../../../src/limits/rate/resilient-rate-limiter.ts';
import { TEST_REDIS_URL } from '../../support/env.ts';
import { TcpProxy } from '../../support/tcp-proxy.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';

function recorder() {
  const events: string[] = [];
  return {
    events,
    handlers: {
      onDegraded: () => events.push('degraded'),
      onRecovered: () => events.push('recovered'),
      onFallbackDecision: () => events.push('fallback'),
    },
  };
}

/** A primary the test switches between answering, failing and hanging. */
class ControlledLimiter implements RateLimiter {
  mode: 'ok' | 'fail' | 'hang' = 'ok';
  calls = 0;
  private readonly inner = new MemoryRateLimiter();
  async consume(key: string, limit: number): Promise<RateDecision> {
    this.calls++;
    if (this.mode === 'fail') throw new Error('ECONNREFUSED');
    if (this.mode === 'hang') return new Promise(() => {});
    return this.inner.consume(key, limit);
  }
  close() {
    return this.inner.close();
  }
}

describe('ResilientRateLimiter', () => {
  rateLimiterContract('resilient over a healthy primary', () =>
    new ResilientRateLimiter(new MemoryRateLimiter(), new MemoryRateLimiter(), { timeoutMs: 50, retryAfterMs: 1000, events: recorder().handlers }),
  );

  it('decides in process when the primary fails, leaves it alone for retryAfterMs, then recovers', async () => {
    let clock = 0;
    const primary = new ControlledLimiter();
    const { events, handlers } = recorder();
    const limiter = new ResilientRateLimiter(primary, new MemoryRateLimiter(), { timeoutMs: 50, retryAfterMs: 1000, events: handlers, now: () => clock });
    expect((await limiter.consume('a', 5)).allowed).toBe(true);
    primary.mode = 'fail';
    expect((await limiter.consume('a', 5)).allowed).toBe(true);
    expect(events).toEqual(['degraded', 'fallback']);
    expect(limiter.isDegraded).toBe(true);
    const callsWhenOpened = primary.calls;
    clock = 500;
    await limiter.consume('a', 5);
    expect(primary.calls).toBe(callsWhenOpened); // the circuit is open: no call waits on a dead primary
    clock = 1001;
    primary.mode = 'ok';
    await limiter.consume('a', 5);
    expect(primary.calls).toBe(callsWhenOpened + 1);
    expect(events.at(-1)).toBe('recovered');
    expect(limiter.isDegraded).toBe(false);
    await limiter.close();
  });

  it('never waits on a hung primary longer than the timeout', async () => {
    const primary = new ControlledLimiter();
    primary.mode = 'hang';
    const { events, handlers } = recorder();
    const limiter = new ResilientRateLimiter(primary, new MemoryRateLimiter(), { timeoutMs: 40, retryAfterMs: 1000, events: handlers });
    const started = performance.now();
    const decision = await limiter.consume('b', 2);
    const took = performance.now() - started;
    expect(decision.allowed).toBe(true);
    expect(took).toBeGreaterThanOrEqual(35);
    expect(took).toBeLessThan(500);
    const fast = performance.now();
    await limiter.consume('b', 2);
    expect(performance.now() - fast).toBeLessThan(20);
    expect(events).toEqual(['degraded', 'fallback', 'fallback']);
    await limiter.close();
  });

  it('keeps limiting while on the fallback: the rate still holds per instance', async () => {
    const primary = new ControlledLimiter();
    primary.mode = 'fail';
    const limiter = new ResilientRateLimiter(primary, new MemoryRateLimiter(), { timeoutMs: 50, retryAfterMs: 10_000, events: recorder().handlers });
    const decisions = await Promise.all(Array.from({ length: 6 }, () => limiter.consume('c', 3)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
    await limiter.close();
  });
});

describe.runIf(TEST_REDIS_URL)('ResilientRateLimiter over a real Redis behind a faulty network', () => {
  let proxy: TcpProxy;
  let redis: Redis;

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
  });
  afterEach(async () => {
    redis.disconnect();
    await proxy.stop();
  });

  for (const fault of ['blackhole', 'down'] as const) {
    it(`falls back when Redis is ${fault === 'down' ? 'unreachable' : 'hung'} and recovers by itself when it returns`, async () => {
      const { events, handlers } = recorder();
      const limiter = new ResilientRateLimiter(new RedisRateLimiter(redis, { keyPrefix: 'vh-test:rate:' }), new MemoryRateLimiter(), {
        timeoutMs: 50,
        retryAfterMs: 200,
        events: handlers,
      });
      const key = `fault-${fault}-${Date.now()}`;
      expect((await limiter.consume(key, 100)).allowed).toBe(true);
      expect(events).toEqual([]);

      proxy[fault]();
      const started = performance.now();
      const during = await Promise.all(Array.from({ length: 20 }, () => limiter.consume(key, 100)));
      expect(performance.now() - started).toBeLessThan(1000);
      expect(during.every((d) => d.allowed)).toBe(true);
      expect(events[0]).toBe('degraded');
      expect(limiter.isDegraded).toBe(true);

      proxy.restore();
      const deadline = Date.now() + 5000;
      while (limiter.isDegraded && Date.now() < deadline) {
        await sleep(100);
        await limiter.consume(key, 100);
      }
      expect(limiter.isDegraded).toBe(false);
      expect(events.at(-1)).toBe('recovered');
      expect(events.filter((e) => e === 'degraded')).toHaveLength(1);
      await limiter.close();
    });
  }
});
