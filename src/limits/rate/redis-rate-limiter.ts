import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { WINDOW_MS, type RateDecision, type RateLimiter } from './rate-limiter.ts';

/**
 * The contract's exact sliding window, shared by every instance: per key, a sorted set of the
 * accept times (microseconds) of the last `limit` accepted requests. One Lua script reads Redis's
 * own clock (TIME), drops what left the window, and accepts when fewer than `limit` remain, so the
 * decision is atomic and no instance's clock matters.
 */
const SLIDING_WINDOW = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local member = ARGV[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count > limit then
  -- the limit was lowered (a plan change): keep only the newest accept times
  redis.call('ZREMRANGEBYRANK', key, 0, count - limit - 1)
  count = limit
end
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, member)
  count = count + 1
  allowed = 1
end
redis.call('PEXPIRE', key, math.floor(window / 1000) + 1000)
local reset = 0
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
return {allowed, limit - count, reset}
`;

type SlidingWindowCommand = (key: string, limit: number, windowMicros: number, member: string) => Promise<[number, number, number]>;

export interface RedisRateLimiterOptions {
  /** Prefix of every key, so that several services can share one Redis. */
  keyPrefix?: string;
}

export class RedisRateLimiter implements RateLimiter {
  private readonly keyPrefix: string;
  private readonly slidingWindow: SlidingWindowCommand;

  constructor(
    private readonly redis: Redis,
    options: RedisRateLimiterOptions = {},
  ) {
    this.keyPrefix = options.keyPrefix ?? 'vinhistory:rate:';
    // defineCommand sends EVALSHA and falls back to EVAL once per connection when the script is not cached.
    if (!('vinhistorySlidingWindow' in redis)) {
      redis.defineCommand('vinhistorySlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
    }
    const command = (redis as unknown as { vinhistorySlidingWindow: SlidingWindowCommand }).vinhistorySlidingWindow;
    this.slidingWindow = command.bind(redis);
  }

  async consume(key: string, limit: number): Promise<RateDecision> {
    // A unique member per request: two accepts in the same microsecond must both count.
    const member = randomBytes(8).toString('base64url');
    const [allowed, remaining, resetMicros] = await this.slidingWindow(this.keyPrefix + key, limit, WINDOW_MS * 1000, member);
    return {
      allowed: allowed === 1,
      limit,
      remaining,
      resetMs: Math.max(0, Math.ceil(resetMicros / 1000)),
    };
  }

  /** The Redis connection belongs to whoever made it; closing the limiter leaves it open. */
  async close(): Promise<void> {}
}
