import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { AppEnv } from '../context.js';

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Accepts a well-formed incoming `X-Request-Id` (else makes one), echoes it, and logs one line per request. */
export function requestContext(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const requestId =
      incoming && SAFE_ID.test(incoming) ? incoming : `req_${randomUUID().replaceAll('-', '')}`;
    c.set('requestId', requestId);
    const started = performance.now();
    // Set before the handler runs: Hono merges it into the response as it is built. Setting it afterwards
    // re-creates the Response, which makes @hono/node-server stream the body instead of writing it at once.
    c.header('X-Request-Id', requestId);
    await next();
    // A handler that returned its own Response skipped the prepared headers.
    if (!c.res.headers.has('x-request-id')) c.header('X-Request-Id', requestId);
    // Path only: query strings may carry things we refuse but must not log.
    logger.info(
      {
        requestId,
        method: c.req.method,
        path: c.req.path.slice(0, 200),
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      },
      'request',
    );
  };
}
