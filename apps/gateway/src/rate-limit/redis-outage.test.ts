import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness } from '../testing.js';
import type { RateLimiter } from './bucket.js';
import { createRedisLimiter } from './redis.js';

/**
 * Redis going away mid-flight: requests keep being limited (per process), never hang on a Redis that stops
 * answering, the switch is logged once each way, and `/readyz` says which store counts. Redis sits behind a local
 * TCP relay the test can blackhole, close and reopen; no outside network.
 */

const REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const prefix = `flowgate-test:${randomBytes(6).toString('hex')}:`;
const spec = { capacity: 3, windowMs: 60_000 };

/** A relay to the real Redis: `forward` passes bytes, `drop` swallows them (a Redis that stops answering). */
class Relay {
  mode: 'forward' | 'drop' = 'forward';
  private server: Server | null = null;
  private sockets = new Set<Socket>();
  port = 0;

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(Number(REDIS.port || 6379), REDIS.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {});
      }
      client.on('data', (d) => this.mode === 'forward' && upstream.write(d));
      upstream.on('data', (d) => this.mode === 'forward' && client.write(d));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    const address = server.address();
    if (address && typeof address === 'object') this.port = address.port;
    this.server = server;
  }

  /** Redis gone: the listener closed and every connection cut. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }
}

interface LogLine {
  level: number;
  code?: string;
  msg: string;
}

function capturingLogger() {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, sink) };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - start };
}

const relay = new Relay();
const { lines, logger } = capturingLogger();
let limiter: RateLimiter;

beforeAll(async () => {
  await relay.open();
  limiter = await createRedisLimiter({ url: `redis://127.0.0.1:${relay.port}`, prefix, logger });
});
afterAll(async () => {
  await limiter?.close();
  await relay.close();
});

const codes = () => lines.map((l) => l.code).filter(Boolean);

describe('rate limits when Redis goes away', () => {
  it('counts in Redis while it answers', async () => {
    expect((await limiter.take('k:shared', spec)).allowed).toBe(true);
    expect(limiter.store()).toBe('redis');
    expect(codes()).toEqual([]);
  });

  it('a Redis that stops answering costs one short timeout, then buckets are per process', async () => {
    relay.mode = 'drop';
    const { value, ms } = await timed(() => limiter.take('k:hang', spec));
    expect(value.allowed).toBe(true);
    expect(ms).toBeLessThan(1_500);
    expect(limiter.store()).toBe('local-fallback');
  });

  it('a Redis that is gone still limits: the per-process bucket refuses past its capacity', async () => {
    await relay.close();
    const results = [];
    for (let i = 0; i < 4; i++) {
      const { value, ms } = await timed(() => limiter.take('k:gone', spec));
      expect(ms).toBeLessThan(1_500);
      results.push(value.allowed);
    }
    expect(results).toEqual([true, true, true, false]);
    expect(limiter.store()).toBe('local-fallback');
    // One line for the whole outage, however many requests it saw.
    expect(codes()).toEqual(['rate_limit_store_fallback']);
    expect(lines.find((l) => l.code === 'rate_limit_store_fallback')?.level).toBe(40);
  });

  it('when Redis is back, buckets are shared again and that is logged once', async () => {
    relay.mode = 'forward';
    await relay.open();
    const until = Date.now() + 15_000;
    while (limiter.store() !== 'redis' && Date.now() < until) {
      await limiter.take('k:back', spec);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(limiter.store()).toBe('redis');
    await limiter.take('k:back', spec);
    expect(codes()).toEqual(['rate_limit_store_fallback', 'rate_limit_store_recovered']);
  }, 20_000);
});

describe('/readyz shows the rate-limit store', () => {
  it('memory without Redis', async () => {
    const h = await createHarness();
    try {
      const res = await h.request('GET', '/readyz', { token: null });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ready', rateLimitStore: 'memory' });
    } finally {
      await h.close();
    }
  });

  it('redis, then local-fallback once Redis is gone (still ready: requests are limited per process)', async () => {
    const own = new Relay();
    await own.open();
    const h = await createHarness({
      env: { REDIS_URL: `redis://127.0.0.1:${own.port}`, FLOWGATE_REDIS_PREFIX: prefix },
    });
    try {
      expect(await (await h.request('GET', '/readyz', { token: null })).json()).toEqual({
        status: 'ready',
        rateLimitStore: 'redis',
      });
      await own.close();
      await h.deps.rateLimiter.take('k:readyz', spec);
      const res = await h.request('GET', '/readyz', { token: null });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ready', rateLimitStore: 'local-fallback' });
    } finally {
      await h.close();
      await own.close();
    }
  });
});
