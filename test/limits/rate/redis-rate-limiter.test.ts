import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRateLimiter } from '../../../src/limits/rate/redis-rate-limiter.ts';
import { TEST_REDIS_URL } from '../../support/env.ts';
import { rateLimiterContract } from './rate-limiter.contract.ts';

describe.runIf(TEST_REDIS_URL)('RedisRateLimiter', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL!, { maxRetriesPerRequest: 1 });
  });
  afterAll(() => redis?.disconnect());

  rateLimiterContract('redis', () => new RedisRateLimiter(redis, { keyPrefix: 'vh-test:rate:' }));

  it('holds across separate connections, as separate instances would', async () => {
    const connections = [0, 1, 2].map(() => new Redis(TEST_REDIS_URL!));
    try {
      const limiters = connections.map((connection) => new RedisRateLimiter(connection, { keyPrefix: 'vh-test:rate:' }));
      const key = `shared-${Date.now()}-${Math.random()}`;
      const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => limiters[i % 3]!.consume(key, 4)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(4);
    } finally {
      for (const connection of connections) connection.disconnect();
    }
  });

  it('keeps no key longer than it needs (it expires after a quiet window)', async () => {
    const limiter = new RedisRateLimiter(redis, { keyPrefix: 'vh-test:rate:' });
    const key = `ttl-${Date.now()}`;
    await limiter.consume(key, 3);
    const ttl = await redis.pttl(`vh-test:rate:${key}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2000);
  });
});
