import { randomBytes } from 'node:crypto';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimiter } from './bucket.js';
import { createRedisLimiter } from './redis.js';
import {
  createSocketRedisLimiter,
  encodeCommand,
  parseReply,
  RedisReplyError,
  redisTarget,
  type TcpConnect,
} from './redis-socket.js';

/**
 * The Workers limiter's Redis client, against the real Redis (127.0.0.1:6379, or REDIS_URL). Node's sockets stand in
 * for `cloudflare:sockets` (same streams); the workerd replica in test/replicas.test.ts runs it on the real thing.
 */

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `flowgate-test:${randomBytes(6).toString('hex')}:`;
const spec = { capacity: 3, windowMs: 60_000 };
const silent = pino({ level: 'silent' });

/** `cloudflare:sockets`' connect over node:net; counts the connections it opens. */
function nodeConnect(opened: { count: number } = { count: 0 }): TcpConnect {
  return ({ hostname, port }, { secureTransport }) => {
    if (secureTransport !== 'off') throw new Error('the test adapter speaks plain TCP only');
    opened.count++;
    const socket = netConnect(port, hostname);
    const { readable, writable } = Duplex.toWeb(socket);
    return {
      readable: readable as ReadableStream<Uint8Array>,
      writable: writable as WritableStream<Uint8Array>,
      close: async () => {
        socket.destroy();
      },
    };
  };
}

let admin: Redis;
let longLived: RateLimiter;

beforeAll(async () => {
  admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(
      `this test needs Redis at ${url} (start it, or set REDIS_URL): ${(err as Error).message}`,
    );
  }
  longLived = await createRedisLimiter({ url, prefix, logger: silent });
});

afterAll(async () => {
  for (const db of [0, 1]) {
    await admin.select(db);
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
  }
  await admin.quit();
  await longLived?.close();
});

describe('RESP encoding and parsing', () => {
  it('encodes a command as an array of bulk strings, lengths in bytes', () => {
    expect(new TextDecoder().decode(encodeCommand(['EVAL', 'é', 1]))).toBe(
      '*3\r\n$4\r\nEVAL\r\n$2\r\né\r\n$1\r\n1\r\n',
    );
  });

  it('parses every reply kind, and says when a reply is not complete yet', () => {
    const bytes = new TextEncoder().encode('*4\r\n:1\r\n$3\r\nabc\r\n$-1\r\n*1\r\n+OK\r\n-ERR wrong\r\n');
    const first = parseReply(bytes);
    expect(first?.value).toEqual([1, 'abc', null, ['OK']]);
    const second = parseReply(bytes, first?.next);
    expect(second?.value).toBeInstanceOf(RedisReplyError);
    expect(second?.value).toEqual(new RedisReplyError('ERR wrong'));
    expect(second?.next).toBe(bytes.length);
    for (let cut = 0; cut < 30; cut++) expect(parseReply(bytes.subarray(0, cut))).toBeNull();
    expect(() => parseReply(new TextEncoder().encode('?\r\n'))).toThrow(/not a Redis reply/);
  });

  it('reads AUTH and SELECT from the URL, and refuses what is not a Redis URL', () => {
    const text = (t: ReturnType<typeof redisTarget>) => t.preamble.map((c) => new TextDecoder().decode(c));
    expect(redisTarget('redis://127.0.0.1')).toEqual({
      hostname: '127.0.0.1',
      port: 6379,
      tls: false,
      preamble: [],
    });
    const full = redisTarget('rediss://user:p%40ss@cache.example:6380/2');
    expect({ ...full, preamble: text(full) }).toEqual({
      hostname: 'cache.example',
      port: 6380,
      tls: true,
      preamble: ['*3\r\n$4\r\nAUTH\r\n$4\r\nuser\r\n$4\r\np@ss\r\n', '*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n'],
    });
    expect(text(redisTarget('redis://:secret@[::1]:7000'))).toEqual(['*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n']);
    expect(redisTarget('redis://[::1]:7000').hostname).toBe('::1');
    expect(() => redisTarget('http://127.0.0.1')).toThrow('REDIS_URL: expected redis:// or rediss://');
    expect(() => redisTarget('127.0.0.1:6379')).toThrow(/REDIS_URL/);
    expect(() => redisTarget('redis://127.0.0.1/x')).toThrow('REDIS_URL: the path must be a database number');
  });
});

describe('the per-request socket limiter, on the real Redis', () => {
  it('spends a shared bucket atomically, one connection per step', async () => {
    const opened = { count: 0 };
    const limiter = createSocketRedisLimiter({ url, prefix, logger: silent, connect: nodeConnect(opened) });
    const results = await Promise.all(Array.from({ length: 5 }, () => limiter.take('sock:flood', spec)));
    expect(results.filter((r) => r.allowed)).toHaveLength(3);
    for (const r of results.filter((x) => !x.allowed)) {
      expect(r.remaining).toBe(0);
      expect(r.retryAfterMs).toBeGreaterThan(0);
      expect(r.retryAfterMs).toBeLessThanOrEqual(20_000);
    }
    expect(opened.count).toBe(5);
    expect(limiter.store()).toBe('redis');
    const ttl = await admin.pttl(`${prefix}rl:sock:flood`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('shares buckets with the long-lived (ioredis) limiter, both ways', async () => {
    const limiter = createSocketRedisLimiter({ url, prefix, logger: silent, connect: nodeConnect() });
    expect(await limiter.take('sock:mixed', spec)).toEqual({ allowed: true, remaining: 2, retryAfterMs: 0 });
    expect((await longLived.take('sock:mixed', spec)).remaining).toBe(1);
    expect((await limiter.take('sock:mixed', spec)).remaining).toBe(0);
    expect((await longLived.take('sock:mixed', spec)).allowed).toBe(false);
    expect((await limiter.take('sock:mixed', spec)).allowed).toBe(false);
  });

  it('selects the database the URL names', async () => {
    const limiter = createSocketRedisLimiter({
      url: `${url.replace(/\/\d*$/, '')}/1`,
      prefix,
      logger: silent,
      connect: nodeConnect(),
    });
    await limiter.take('sock:db1', spec);
    await admin.select(1);
    const there = await admin.exists(`${prefix}rl:sock:db1`);
    await admin.select(0);
    const here = await admin.exists(`${prefix}rl:sock:db1`);
    expect({ there, here }).toEqual({ there: 1, here: 0 });
  });

  it('counts locally while Redis cannot be reached, logging once each way, and shares again when it answers', async () => {
    const lines: Array<{ code?: string }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    let reachable = false;
    const real = nodeConnect();
    const connect: TcpConnect = (address, options) =>
      real(reachable ? address : { hostname: '127.0.0.1', port: 1 }, options);
    const limiter = createSocketRedisLimiter({ url, prefix, logger, connect });
    const local = [];
    for (let i = 0; i < 4; i++) local.push((await limiter.take('sock:outage', spec)).allowed);
    // Per-process buckets still limit.
    expect(local).toEqual([true, true, true, false]);
    expect(limiter.store()).toBe('local-fallback');
    reachable = true;
    // The shared bucket was never touched: full.
    expect(await limiter.take('sock:outage', spec)).toEqual({ allowed: true, remaining: 2, retryAfterMs: 0 });
    expect(limiter.store()).toBe('redis');
    expect(lines.map((l) => l.code)).toEqual(['rate_limit_store_fallback', 'rate_limit_store_recovered']);
  });

  it('does not wait longer than its timeout on a Redis that accepts but never answers', async () => {
    const sockets = new Set<Socket>();
    const silentServer: Server = createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    await new Promise<void>((resolve) => silentServer.listen(0, '127.0.0.1', resolve));
    const address = silentServer.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const limiter = createSocketRedisLimiter({
        url: `redis://127.0.0.1:${port}`,
        prefix,
        logger: silent,
        connect: nodeConnect(),
        timeoutMs: 150,
      });
      const started = Date.now();
      expect((await limiter.take('sock:hang', spec)).allowed).toBe(true);
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(140);
      expect(took).toBeLessThan(1_000);
      expect(limiter.store()).toBe('local-fallback');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silentServer.close(() => resolve()));
    }
  });

  it('treats an error reply (a wrong password) as Redis unavailable, not as a refusal', async () => {
    const target = new URL(url);
    target.password = 'not-the-password';
    const limiter = createSocketRedisLimiter({
      url: target.toString(),
      prefix,
      logger: silent,
      connect: nodeConnect(),
    });
    expect((await limiter.take('sock:auth', spec)).allowed).toBe(true);
    expect(limiter.store()).toBe('local-fallback');
  });
});
