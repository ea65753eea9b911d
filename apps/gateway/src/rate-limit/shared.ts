import type { Logger } from 'pino';
import { type BucketSpec, createMemoryLimiter, type RateLimiter, type TakeResult } from './bucket.js';

/**
 * The same bucket as `takeToken`, run atomically inside Redis so every replica shares it. The clock is Redis's
 * own (TIME), so replicas with skewed clocks still agree; Redis 5+ replicates a script's effects, not the script.
 * KEYS[1] is the bucket, ARGV capacity and window (ms); answers {allowed 0|1, whole tokens left, retry-after ms}.
 * Shared by the ioredis limiter (long-lived processes) and the per-request socket one (Workers).
 */
export const TAKE_SCRIPT = `
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

/** The parts of the pino logger the fallback reports through. */
type FallbackLogger = Pick<Logger, 'info' | 'warn'>;

/**
 * Buckets shared through Redis by `takeShared`, with the fallback both limiters keep: a Redis error or timeout counts
 * this request in per-process buckets (logged once when that starts and once when Redis answers again; `store()`
 * says which) rather than failing every request or letting every request through. Each process still enforces the
 * limit on its own, so a deployment of N replicas allows at most N times it.
 */
export function sharedLimiter(
  takeShared: (key: string, spec: BucketSpec) => Promise<TakeResult>,
  logger: FallbackLogger,
  closeShared: () => Promise<void>,
): RateLimiter {
  const fallback = createMemoryLimiter();
  let degraded = false;
  return {
    kind: 'redis',
    store: () => (degraded ? 'local-fallback' : 'redis'),
    async take(key, spec) {
      try {
        const result = await takeShared(key, spec);
        if (degraded) {
          degraded = false;
          logger.info(
            { code: 'rate_limit_store_recovered', rateLimitStore: 'redis' },
            'rate limits: Redis is back, buckets are shared again',
          );
        }
        return result;
      } catch (err) {
        if (!degraded) {
          degraded = true;
          logger.warn(
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
      await closeShared();
    },
  };
}

/** The script's answer as a take result; anything else is an error (and counted locally). */
export function takeResultOf(reply: unknown): TakeResult {
  if (!Array.isArray(reply)) throw new Error('unexpected reply to the bucket script');
  const [allowed, remaining, retryAfterMs] = reply as unknown[];
  if (typeof allowed !== 'number' || typeof remaining !== 'number' || typeof retryAfterMs !== 'number')
    throw new Error('unexpected reply to the bucket script');
  return { allowed: allowed === 1, remaining, retryAfterMs };
}
