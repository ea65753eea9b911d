import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RateLimiter } from './bucket.js';
import { sharedLimiter, TAKE_SCRIPT, takeResultOf } from './shared.js';

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
 * message. Later Redis errors and timeouts fall back to per-process buckets (`sharedLimiter`).
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
  return sharedLimiter(
    async (key, spec) =>
      takeResultOf(
        await redis.eval(TAKE_SCRIPT, 1, `${options.prefix}rl:${key}`, spec.capacity, spec.windowMs),
      ),
    options.logger,
    async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  );
}
