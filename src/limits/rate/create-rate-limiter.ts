import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { InstrumentedRateLimiter } from './instrumented-rate-limiter.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { RedisRateLimiter } from './redis-rate-limiter.ts';
import { ResilientRateLimiter } from './resilient-rate-limiter.ts';

/** After Redis fails, how long this instance limits on its own before it asks Redis again. */
const RETRY_REDIS_AFTER_MS = 1000;

export interface RateLimiterSetup {
  limiter: RateLimiter;
  close(): Promise<void>;
}

/**
 * One node: the in-process limiter. Scaled out (REDIS_URL): the Redis limiter, with the in-process
 * one as a fallback while Redis is unreachable or slower than REDIS_TIMEOUT_MS.
 */
export function createRateLimiter(config: Config, metrics: Metrics, log: FastifyBaseLogger): RateLimiterSetup {
  const memory = new InstrumentedRateLimiter(new MemoryRateLimiter(), 'memory', metrics);
  if (!config.redisUrl) return { limiter: memory, close: () => memory.close() };

  const redis = new Redis(config.redisUrl, {
    // Fail at once while disconnected instead of queueing: the fallback decides meanwhile.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
  });
  let lastErrorLog = 0;
  redis.on('error', (error) => {
    // ioredis emits an error per failed reconnect; one line every ten seconds is plenty.
    if (Date.now() - lastErrorLog > 10_000) {
      lastErrorLog = Date.now();
      log.warn({ err: error }, 'redis connection error');
    }
  });

  const shared = new InstrumentedRateLimiter(new RedisRateLimiter(redis), 'redis', metrics);
  const limiter = new ResilientRateLimiter(shared, memory, {
    timeoutMs: config.redisTimeoutMs,
    retryAfterMs: RETRY_REDIS_AFTER_MS,
    events: {
      onDegraded: (error) => {
        metrics.rateDegraded.set(1);
        log.warn({ err: error }, 'rate limiter: Redis unreachable or slow; limiting per instance until it answers again');
      },
      onRecovered: () => {
        metrics.rateDegraded.set(0);
        log.info('rate limiter: Redis answers again; shared rate limiting resumed');
      },
      onFallbackDecision: () => metrics.rateFallbacks.inc(),
    },
  });
  return {
    limiter,
    close: async () => {
      await limiter.close();
      redis.disconnect();
    },
  };
}
