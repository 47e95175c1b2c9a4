import { pino } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter, type RateLimiterSetup } from '../../../src/limits/rate/create-rate-limiter.ts';
import { Metrics } from '../../../src/observability/metrics.ts';
import { testConfig } from '../../support/app.ts';
import { TEST_REDIS_URL } from '../../support/env.ts';
import { RedisServerProcess } from '../../support/redis-server.ts';

interface Bracket {
  sent: number;
  received: number;
}

/**
 * Groups of `limit + 1` accepts surely decided within less than a second: the last answer came
 * back less than a second after the first request went out. (A slow answer can hide a crowded
 * window, never invent one.)
 */
function crowded(accepted: Bracket[], limit: number): string[] {
  const sorted = [...accepted].sort((a, b) => a.sent - b.sent);
  const found: string[] = [];
  for (let i = 0; i + limit < sorted.length; i++) {
    const group = sorted.slice(i, i + limit + 1);
    const span = Math.max(...group.map((r) => r.received)) - group[0]!.sent;
    if (span < 1000) found.push(`${limit + 1} accepted within ${span.toFixed(1)} ms`);
  }
  return found;
}

async function gauge(metrics: Metrics, name: 'rateDegraded'): Promise<number> {
  return (await metrics[name].get()).values[0]?.value ?? NaN;
}

async function modeOf(metrics: Metrics): Promise<string | undefined> {
  return (await metrics.rateMode.get()).values.find((v) => v.value === 1)?.labels.mode as string | undefined;
}

/**
 * The limiter as the server builds it, three times over (three instances), on a redis-server of
 * the test's own that the test kills and starts again, empty.
 */
describe.runIf(TEST_REDIS_URL)('createRateLimiter: Redis dies and comes back empty under load', () => {
  let server: RedisServerProcess;
  const setups: (RateLimiterSetup & { metrics: Metrics })[] = [];

  beforeAll(async () => {
    server = await RedisServerProcess.start();
  });
  afterAll(async () => {
    await Promise.all(setups.map((setup) => setup.close()));
    await server?.stop();
  });

  it('no one-second window holds more than 3 instances x rate through both transitions, and once back no more than the rate', async () => {
    // A long timeout on purpose: a decision that waited on the dead Redis would show.
    const config = testConfig({ REDIS_URL: server.url, REDIS_TIMEOUT_MS: '1000' });
    for (let i = 0; i < 3; i++) {
      const metrics = new Metrics({ defaultMetrics: false });
      setups.push({ metrics, ...createRateLimiter(config, metrics, pino({ level: 'silent' })) });
    }
    const deadline = performance.now() + 5000;
    while ((await Promise.all(setups.map((s) => modeOf(s.metrics)))).some((mode) => mode !== 'redis')) {
      if (performance.now() > deadline) throw new Error('the limiters never connected');
      await sleep(20);
    }

    const rate = 3;
    const accepted: Bracket[] = [];
    const slowWhileDown: number[] = [];
    // eslint-disable-next-line prefer-const -- read by the senders' closure before it is set, once Redis is killed.
    let down: { from: number; to: number } | undefined;
    const origin = performance.now();
    let running = true;
    const pending: Promise<void>[] = [];
    const traffic = (async () => {
      for (let tick = 0; running; tick++) {
        for (let i = 0; i < 6; i++) {
          const sent = performance.now();
          pending.push(
            setups[i % 3]!.limiter.consume('account', rate).then((decision) => {
              const received = performance.now();
              if (decision.allowed) accepted.push({ sent, received });
              if (down && sent > down.from && sent < down.to) slowWhileDown.push(received - sent);
            }),
          );
        }
        await sleep(Math.max(0, origin + (tick + 1) * 50 - performance.now()));
      }
    })();

    await sleep(1300);
    await server.kill();
    const killedAt = performance.now();
    // From a moment after the kill (each client has seen its connection close) until the restart.
    down = { from: killedAt + 200, to: Infinity };
    await sleep(2000);
    for (const setup of setups) expect(await gauge(setup.metrics, 'rateDegraded')).toBe(1);
    down.to = performance.now();
    await server.restart();
    // From when the last instance is back on Redis, Redis sees every accept. How long the reconnect
    // takes depends on the machine (0.5 s when idle, more beside other work): waited for, not assumed.
    const backDeadline = performance.now() + 10_000;
    while ((await Promise.all(setups.map((s) => modeOf(s.metrics)))).some((mode) => mode !== 'redis')) {
      if (performance.now() > backDeadline) throw new Error('the limiters never went back to Redis');
      await sleep(20);
    }
    const backAt = performance.now();
    // Three whole seconds after settling, so that 2 x rate is owed even if the reconnect takes a window's start.
    await sleep(3500);
    running = false;
    await traffic;
    await Promise.all(pending);

    expect(crowded(accepted, 3 * rate)).toEqual([]);
    expect(crowded(accepted.filter((r) => r.sent >= backAt), rate)).toEqual([]);
    // No decision waited for the dead Redis (it would have taken the whole 1000 ms timeout).
    expect(slowWhileDown.length).toBeGreaterThan(50);
    expect(Math.max(...slowWhileDown)).toBeLessThan(500);
    // The account was served throughout: each instance granted the rate alone while Redis was away.
    expect(accepted.filter((r) => r.sent > killedAt + 200 && r.received < down.to).length).toBeGreaterThanOrEqual(3 * rate);
    expect(accepted.filter((r) => r.sent >= backAt).length).toBeGreaterThanOrEqual(2 * rate);
    for (const setup of setups) {
      expect(await modeOf(setup.metrics)).toBe('redis');
      expect(await gauge(setup.metrics, 'rateDegraded')).toBe(0);
    }
  }, 30_000);
});
