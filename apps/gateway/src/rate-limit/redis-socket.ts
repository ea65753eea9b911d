import type { Logger } from 'pino';
import type { RateLimiter } from './bucket.js';
import { sharedLimiter, TAKE_SCRIPT, takeResultOf } from './shared.js';

/**
 * Rate-limit buckets in Redis from a Cloudflare Worker. A Worker may not use a socket opened by another request, so
 * each bucket step opens its own TCP connection (`cloudflare:sockets`), sends AUTH/SELECT when the URL asks for
 * them and the bucket script in one write, reads the replies and closes. This is the whole Redis protocol (RESP2)
 * the gateway needs, so no Node client (and no Node socket emulation) is bundled. Same script, keys and fallback
 * as the ioredis limiter of the long-lived runtimes, so both kinds of replica share one bucket.
 */

/** The part of a `cloudflare:sockets` Socket this client uses (a Node adapter stands in for it in tests). */
export interface TcpSocket {
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<Uint8Array>;
  close(): Promise<void>;
}

/** `connect` of `cloudflare:sockets`. */
export type TcpConnect = (
  address: { hostname: string; port: number },
  options: { secureTransport: 'on' | 'off'; allowHalfOpen: boolean },
) => TcpSocket;

export interface SocketRedisLimiterOptions {
  /** redis://[user[:password]@]host[:port][/db], or rediss:// for TLS. */
  url: string;
  prefix: string;
  logger: Pick<Logger, 'info' | 'warn'>;
  connect: TcpConnect;
  /**
   * How long connecting and the bucket script together may take before this request is counted locally instead
   * (default 500 ms: a connection is opened per step, unlike the long-lived client's 250 ms per command).
   */
  timeoutMs?: number;
}

interface Target {
  hostname: string;
  port: number;
  tls: boolean;
  /** AUTH and SELECT, already encoded; empty when the URL asks for neither. */
  preamble: Uint8Array[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One command as a RESP array of bulk strings. */
export function encodeCommand(args: ReadonlyArray<string | number>): Uint8Array {
  let out = `*${args.length}\r\n`;
  for (const arg of args) {
    const text = String(arg);
    out += `$${encoder.encode(text).length}\r\n${text}\r\n`;
  }
  return encoder.encode(out);
}

/** A Redis error reply (`-ERR …`). */
export class RedisReplyError extends Error {}

export type RespValue = string | number | null | RedisReplyError | RespValue[];

/**
 * The reply starting at `at`, and where the next one starts; null when `buf` does not hold all of it yet.
 */
export function parseReply(buf: Uint8Array, at = 0): { value: RespValue; next: number } | null {
  let eol = at;
  while (eol + 1 < buf.length && !(buf[eol] === 13 && buf[eol + 1] === 10)) eol++;
  if (eol + 1 >= buf.length) return null;
  const kind = String.fromCharCode(buf[at] as number);
  const line = decoder.decode(buf.subarray(at + 1, eol));
  const after = eol + 2;
  switch (kind) {
    case '+':
      return { value: line, next: after };
    case '-':
      return { value: new RedisReplyError(line), next: after };
    case ':':
      return { value: Number(line), next: after };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, next: after };
      if (buf.length < after + length + 2) return null;
      return { value: decoder.decode(buf.subarray(after, after + length)), next: after + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, next: after };
      const items: RespValue[] = [];
      let next = after;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buf, next);
        if (!item) return null;
        items.push(item.value);
        next = item.next;
      }
      return { value: items, next };
    }
    default:
      throw new Error(`not a Redis reply (starts with ${JSON.stringify(kind)})`);
  }
}

/** Where REDIS_URL points and what to send before the script; throws on a URL that is not Redis's. */
export function redisTarget(url: string): Target {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('REDIS_URL: not a URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')
    throw new Error('REDIS_URL: expected redis:// or rediss://');
  const preamble: Uint8Array[] = [];
  const password = decodeURIComponent(parsed.password);
  const username = decodeURIComponent(parsed.username);
  if (password) preamble.push(encodeCommand(username ? ['AUTH', username, password] : ['AUTH', password]));
  const db = parsed.pathname.replace(/^\//, '');
  if (db && db !== '0') {
    if (!/^\d+$/.test(db)) throw new Error('REDIS_URL: the path must be a database number');
    preamble.push(encodeCommand(['SELECT', db]));
  }
  return {
    hostname: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : 6379,
    tls: parsed.protocol === 'rediss:',
    preamble,
  };
}

/** Sends `commands` in one write and reads exactly one reply per command; the socket is closed either way. */
async function exchange(
  connect: TcpConnect,
  target: Target,
  commands: Uint8Array[],
  timeoutMs: number,
): Promise<RespValue[]> {
  const socket = connect(
    { hostname: target.hostname, port: target.port },
    { secureTransport: target.tls ? 'on' : 'off', allowHalfOpen: false },
  );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  const talk = async () => {
    const writer = socket.writable.getWriter();
    const total = commands.reduce((n, c) => n + c.length, 0);
    const request = new Uint8Array(total);
    let offset = 0;
    for (const c of commands) {
      request.set(c, offset);
      offset += c.length;
    }
    await writer.write(request);
    writer.releaseLock();
    const reader = socket.readable.getReader();
    let buf = new Uint8Array(0);
    const replies: RespValue[] = [];
    let at = 0;
    while (replies.length < commands.length) {
      const reply = parseReply(buf, at);
      if (reply) {
        replies.push(reply.value);
        at = reply.next;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('Redis closed the connection');
      const grown = new Uint8Array(buf.length - at + value.length);
      grown.set(buf.subarray(at));
      grown.set(value, buf.length - at);
      buf = grown;
      at = 0;
    }
    reader.releaseLock();
    return replies;
  };
  try {
    return await Promise.race([talk(), timedOut]);
  } finally {
    clearTimeout(timer);
    await socket.close().catch(() => {});
  }
}

/**
 * Buckets shared through Redis, one connection per step. The URL is checked here (a wrong one is a configuration
 * error); Redis being unreachable is not, as with the long-lived limiter once started: those steps count locally.
 */
export function createSocketRedisLimiter(options: SocketRedisLimiterOptions): RateLimiter {
  const target = redisTarget(options.url);
  const timeoutMs = options.timeoutMs ?? 500;
  return sharedLimiter(
    async (key, spec) => {
      const script = encodeCommand([
        'EVAL',
        TAKE_SCRIPT,
        1,
        `${options.prefix}rl:${key}`,
        spec.capacity,
        spec.windowMs,
      ]);
      const replies = await exchange(options.connect, target, [...target.preamble, script], timeoutMs);
      const failed = replies.find((r): r is RedisReplyError => r instanceof RedisReplyError);
      if (failed) throw failed;
      return takeResultOf(replies.at(-1));
    },
    options.logger,
    async () => {},
  );
}
