import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { type BucketSpec, createMemoryLimiter, type RateLimiter, type TakeResult } from './bucket.js';

/**
 * The same bucket as `takeToken`, run atomically inside Redis so every replica shares it. The clock is Redis's
 * own (TIME), so replicas with skewed clocks still agree; Redis 5+ replicates a script's effects, not the script.
 */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local capacity = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local rate = capacity / window
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = capacity
if state[1] and state[2] then
  local elapsed = math.max(0, now - tonumber(state[2]))
  tokens = math.min(capacity, tonumber(state[1]) + elapsed * rate)
end
local allowed = 0
local retry = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  retry = math.ceil((1 - tokens) / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], window)
return {allowed, math.floor(tokens), retry}
`;

export interface RedisLimiterOptions {
  url: string;
  /** Prepended to every key (tests use a unique one per run). */
  prefix: string;
  logger: Logger;
  /**
   * How long one bucket command may take before this request is counted locally instead (default 250 ms): a Redis
   * that stops answering without closing the connection must not hold every request.
   */
  commandTimeoutMs?: number;
}

/**
 * Buckets shared through Redis. Connects before returning, so a wrong REDIS_URL stops the start with a clear
 * message. Later Redis errors and timeouts fall back to per-process buckets (logged once when it starts and once
 * when Redis answers again; `store()` says which) rather than failing every request or letting every request through:
 * each process still enforces the limit on its own, so a deployment of N replicas allows at most N times it.
 */
export async function createRedisLimiter(options: RedisLimiterOptions): Promise<RateLimiter> {
  const redis = new Redis(options.url, {
    lazyConnect: true,
    // Fail fast instead of queueing requests behind a reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: options.commandTimeoutMs ?? 250,
  });
  redis.on('error', () => {}); // reported through the failing commands below, not as an unhandled event
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new Error(
      `cannot connect to Redis at REDIS_URL for rate limits: ${(err as Error).message.slice(0, 200)}`,
    );
  }
  const fallback = createMemoryLimiter();
  let degraded = false;
  return {
    kind: 'redis',
    store: () => (degraded ? 'local-fallback' : 'redis'),
    async take(key: string, spec: BucketSpec): Promise<TakeResult> {
      try {
        const reply = (await redis.eval(
          TAKE_SCRIPT,
          1,
          `${options.prefix}rl:${key}`,
          spec.capacity,
          spec.windowMs,
        )) as [number, number, number];
        if (degraded) {
          degraded = false;
          options.logger.info(
            { code: 'rate_limit_store_recovered', rateLimitStore: 'redis' },
            'rate limits: Redis is back, buckets are shared again',
          );
        }
        return { allowed: reply[0] === 1, remaining: reply[1], retryAfterMs: reply[2] };
      } catch (err) {
        if (!degraded) {
          degraded = true;
          options.logger.warn(
            {
              code: 'rate_limit_store_fallback',
              rateLimitStore: 'local-fallback',
              err: (err as Error).message.slice(0, 200),
            },
            'rate limits: Redis unavailable, using per-process buckets until it answers',
          );
        }
        return fallback.take(key, spec);
      }
    },
    async close() {
      await fallback.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
