import { randomUuid } from '@flowgate/core';
import type { MiddlewareHandler } from 'hono';
import { requestId } from 'hono/request-id';
import type { AppEnv } from '../context.js';

/**
 * Accepts a well-formed incoming `X-Request-Id` (Hono's rule: letters, digits, `_`, `-`, `=`; here at most 64
 * characters), else makes a `req_…` one, and echoes it on every response.
 */
export function requestIds(): MiddlewareHandler<AppEnv> {
  // Hono sets the header before the handler runs, so it is merged into the response as it is built. Setting it
  // afterwards re-creates the Response, which makes @hono/node-server stream the body instead of writing it at once.
  const assign = requestId({
    limitLength: 64,
    generator: () => `req_${randomUuid().replaceAll('-', '')}`,
  });
  return (c, next) =>
    assign(c, async () => {
      await next();
      // A handler that returned its own Response skipped the prepared headers.
      if (!c.res.headers.has('x-request-id')) c.header('X-Request-Id', c.get('requestId'));
    });
}
