import type { Principal } from '@flowgate/auth';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import type { BucketSpec, RateLimiter } from '../rate-limit/bucket.js';
import { clientIp } from './ip.js';

const MINUTE_MS = 60_000;
const MCP_PATH = /\/mcp\/?$/;

/** A per-minute figure as a bucket: a full minute's allowance may be spent at once, then it refills evenly. */
export function perMinute(limit: number): BucketSpec {
  return { capacity: limit, windowMs: MINUTE_MS };
}

/**
 * The 429. MCP endpoints answer in JSON-RPC shape (what MCP clients parse, as for the endpoint's other HTTP-level
 * errors); the admin API in its usual `{code, message}` shape. Both carry `Retry-After` in whole seconds.
 */
export function rateLimitedResponse(c: Context, scope: 'key' | 'ip', retryAfterMs: number): Response {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  const message = `Too many requests from this ${scope === 'key' ? 'credential' : 'client address'}; retry after ${retryAfterSeconds} s`;
  const body = MCP_PATH.test(c.req.path)
    ? {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message, data: { code: 'rate_limited', scope, retryAfterSeconds } },
      }
    : { code: 'rate_limited', message, scope, retryAfterSeconds };
  return c.body(JSON.stringify(body), 429, {
    'content-type': 'application/json',
    'retry-after': String(retryAfterSeconds),
  });
}

/**
 * Per client address, before authentication: a flood of made-up tokens is refused here without touching the
 * key store. Skipped when the address is unknown (in-process requests, edge runtimes without it) and when 0.
 */
export function ipRateLimit(options: {
  limiter: RateLimiter;
  perMinute: number;
  trustProxy: number;
}): MiddlewareHandler<AppEnv> {
  const spec = perMinute(options.perMinute);
  return async (c, next) => {
    if (options.perMinute <= 0) return next();
    const ip = clientIp(c, options.trustProxy);
    if (ip === null) return next();
    const taken = await options.limiter.take(`ip:${ip}`, spec);
    if (!taken.allowed) return rateLimitedResponse(c, 'ip', taken.retryAfterMs);
    await next();
  };
}

/** Whose bucket a principal spends from; the operator token has none, so a flood can never lock it out. */
export function bucketOf(principal: Principal): string | null {
  switch (principal.kind) {
    case 'service_account':
      return `key:${principal.keyId}`;
    case 'user':
      return `user:${principal.id}`;
    case 'operator':
      return null;
  }
}

/**
 * Per API key (or JWT subject), after authentication and before any route work. The workspace policy's
 * `rateLimitPerMinute` (set once the workspace guard ran) overrides the deployment default.
 */
export function principalRateLimit(options: {
  limiter: RateLimiter;
  perMinute: number;
}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const limit = c.get('policy')?.rateLimitPerMinute ?? options.perMinute;
    if (limit <= 0) return next();
    const bucket = bucketOf(c.get('principal'));
    if (bucket === null) return next();
    const taken = await options.limiter.take(bucket, perMinute(limit));
    if (!taken.allowed) return rateLimitedResponse(c, 'key', taken.retryAfterMs);
    await next();
  };
}
