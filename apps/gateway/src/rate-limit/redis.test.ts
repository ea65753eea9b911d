import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimiter } from './bucket.js';
import { createRedisLimiter } from './redis.js';

// Redis is part of the test environment (127.0.0.1:6379, or REDIS_URL); the limiter must be tested against it.
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `flowgate-test:${randomBytes(6).toString('hex')}:`;
const spec = { capacity: 3, windowMs: 60_000 };

let limiter: RateLimiter;
let admin: Redis;

beforeAll(async () => {
  try {
    limiter = await createRedisLimiter({ url, prefix, logger: pino({ level: 'silent' }) });
  } catch (err) {
    throw new Error(
      `the Redis-backed rate limiter test needs Redis at ${url} (start it, or set REDIS_URL): ${(err as Error).message}`,
    );
  }
  admin = new Redis(url);
});

afterAll(async () => {
  // Leave nothing behind in the shared Redis.
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
  await admin.quit();
  await limiter?.close();
});

describe('the Redis rate limiter', () => {
  it('spends a shared bucket atomically and refuses with Retry-After once it is empty', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => limiter.take('key:flood', spec)));
    expect(results.filter((r) => r.allowed)).toHaveLength(3);
    const refused = results.filter((r) => !r.allowed);
    expect(refused).toHaveLength(2);
    for (const r of refused) {
      // One token per 20 s at 3 per minute.
      expect(r.retryAfterMs).toBeGreaterThan(0);
      expect(r.retryAfterMs).toBeLessThanOrEqual(20_000);
    }
    expect((await limiter.take('key:other', spec)).allowed).toBe(true);
  });

  it('is shared by every replica: a second limiter sees the first one spend the bucket', async () => {
    const replica = await createRedisLimiter({ url, prefix, logger: pino({ level: 'silent' }) });
    try {
      for (let i = 0; i < 3; i++) expect((await limiter.take('key:shared', spec)).allowed).toBe(true);
      expect((await replica.take('key:shared', spec)).allowed).toBe(false);
    } finally {
      await replica.close();
    }
  });

  it('expires idle buckets (no key outlives its refill window)', async () => {
    await limiter.take('key:ttl', spec);
    const ttl = await admin.pttl(`${prefix}rl:key:ttl`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('names the URL when Redis cannot be reached', async () => {
    await expect(
      createRedisLimiter({ url: 'redis://127.0.0.1:1', prefix, logger: pino({ level: 'silent' }) }),
    ).rejects.toThrow(/cannot connect to Redis/);
  });
});
