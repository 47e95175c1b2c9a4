import { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { InstrumentedRateLimiter } from './instrumented-rate-limiter.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import type { RateLimiter } from './rate-limiter.ts';
import { RedisHealth } from './redis-health.ts';
import { RedisRateLimiter } from './redis-rate-limiter.ts';
import { ResilientRateLimiter, type LimiterMode } from './resilient-rate-limiter.ts';

/**
 * The longest wait between two reconnect attempts. It bounds how long an instance stays on its
 * own after Redis is back (then one window of rejoining), so it is short: an attempt to a local
 * network address costs next to nothing.
 */
const MAX_RECONNECT_DELAY_MS = 500;

/** While Redis is connected but does not answer (hung), how often to PING it in the background. */
const PING_EVERY_MS = 250;
/** A PING is a health check, not a rate decision: it may take longer than REDIS_TIMEOUT_MS. */
const PING_TIMEOUT_MS = 1000;

const MODES: readonly LimiterMode[] = ['redis', 'fallback', 'rejoining'];

export interface RateLimiterSetup {
  limiter: RateLimiter;
  close(): Promise<void>;
}

/**
 * One node: the in-process limiter. Scaled out (REDIS_URL): the Redis limiter, with the in-process
 * one as a fallback while Redis is unreachable or slower than REDIS_TIMEOUT_MS
 * (resilient-rate-limiter.ts says how the transitions stay within instances x rate).
 */
export function createRateLimiter(config: Config, metrics: Metrics, log: FastifyBaseLogger): RateLimiterSetup {
  if (!config.redisUrl) {
    const memory = new InstrumentedRateLimiter(new MemoryRateLimiter(), 'memory', metrics);
    return { limiter: memory, close: () => memory.close() };
  }

  const redis = new Redis(config.redisUrl, {
    // Fail at once while disconnected instead of queueing: the fallback decides meanwhile.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 50, MAX_RECONNECT_DELAY_MS),
  });
  let lastErrorLog = 0;
  redis.on('error', (error) => {
    // ioredis emits an error per failed reconnect; one line every ten seconds is plenty.
    if (Date.now() - lastErrorLog > 10_000) {
      lastErrorLog = Date.now();
      log.warn({ err: error }, 'redis connection error');
    }
  });

  const health = new RedisHealth(redis, { pingEveryMs: PING_EVERY_MS, pingTimeoutMs: PING_TIMEOUT_MS });
  const local = new MemoryRateLimiter();
  const shared = new InstrumentedRateLimiter(new RedisRateLimiter(redis), 'redis', metrics);
  let everShared = false;
  const showMode = (mode: LimiterMode) => {
    for (const each of MODES) metrics.rateMode.set({ mode: each }, each === mode ? 1 : 0);
    metrics.rateDegraded.set(mode === 'redis' ? 0 : 1);
  };
  const limiter = new ResilientRateLimiter(shared, local, health, {
    timeoutMs: config.redisTimeoutMs,
    events: {
      onModeChange: (mode, _previous, reason) => {
        showMode(mode);
        if (mode === 'fallback') {
          log.warn({ err: reason }, 'rate limiter: Redis unreachable or slow; limiting per instance until it answers again');
        } else if (mode === 'rejoining') {
          log.info('rate limiter: Redis answers again; for one window a search must pass both Redis and this instance\'s own window');
        } else if (everShared) {
          log.info('rate limiter: Redis answers again; shared rate limiting resumed');
        } else {
          log.info('rate limiter: connected to Redis; shared rate limiting on');
        }
        if (mode === 'redis') everShared = true;
      },
      onLocalDecision: (decision, mode) => {
        if (mode === 'fallback') metrics.rateFallbacks.inc();
        metrics.rateDecisions.inc({ limiter: 'memory', outcome: decision.allowed ? 'allowed' : 'limited' });
      },
    },
  });
  showMode(limiter.mode);
  if (limiter.mode === 'redis') everShared = true;
  return {
    limiter,
    close: async () => {
      await limiter.close();
      health.close();
      await local.close();
      redis.disconnect();
    },
  };
}
