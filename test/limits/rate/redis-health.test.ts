import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisHealth } from '../../../src/limits/rate/redis-health.ts';
import { TEST_REDIS_URL } from '../../support/env.ts';
import { RedisServerProcess } from '../../support/redis-server.ts';
import { TcpProxy } from '../../support/tcp-proxy.ts';

async function until(condition: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`not within ${ms} ms`);
    await sleep(10);
  }
}

/** A redis-server of the suite's own, which the tests kill and restart, reached directly or through a proxy. */
describe.runIf(TEST_REDIS_URL)('RedisHealth', () => {
  let server: RedisServerProcess;
  let proxy: TcpProxy;
  const opened: { redis: Redis; health: RedisHealth }[] = [];

  beforeAll(async () => {
    server = await RedisServerProcess.start();
    proxy = new TcpProxy('127.0.0.1', server.port);
    await proxy.start();
  });
  afterAll(async () => {
    await proxy?.stop();
    await server?.stop();
  });
  afterEach(() => {
    for (const { redis, health } of opened.splice(0)) {
      health.close();
      redis.disconnect();
    }
  });

  function connect(port: number) {
    const redis = new Redis({ host: '127.0.0.1', port, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    redis.on('error', () => {});
    const health = new RedisHealth(redis, { pingEveryMs: 50, pingTimeoutMs: 200 });
    const changes: boolean[] = [];
    health.onChange((up) => changes.push(up));
    opened.push({ redis, health });
    return { redis, health, changes };
  }

  it('follows the client: up when ready, down as soon as the server dies, up again once it is back', async () => {
    const { health, changes } = connect(server.port);
    expect(health.up).toBe(false);
    await until(() => health.up, 2000);

    // Said by the client itself, with no command sent.
    await server.kill();
    await until(() => !health.up, 1000);
    // Down means down: reconnect attempts that fail say nothing new.
    await sleep(300);
    expect(changes).toEqual([true, false]);

    await server.restart();
    await until(() => health.up, 2000);
    expect(changes).toEqual([true, false, true]);
  });

  it('a suspected connection that still answers is back after one PING', async () => {
    const { health, changes } = connect(server.port);
    await until(() => health.up, 2000);
    health.suspect(new Error('one slow answer'));
    expect(health.up).toBe(false);
    await until(() => health.up, 1000);
    expect(changes).toEqual([true, false, true]);
  });

  it('a hung server stays down while PINGs go unanswered, and is up once it answers again', async () => {
    const { health, changes } = connect(proxy.port);
    await until(() => health.up, 2000);
    proxy.blackhole();
    health.suspect(new Error('timed out'));
    await sleep(600);
    expect(health.up).toBe(false);
    proxy.restore();
    await until(() => health.up, 2000);
    expect(changes).toEqual([true, false, true]);
  });

  it('after close it tells nothing more', async () => {
    const { redis, health, changes } = connect(server.port);
    await until(() => health.up, 2000);
    health.close();
    redis.disconnect();
    await sleep(100);
    expect(changes).toEqual([true]);
  });
});
