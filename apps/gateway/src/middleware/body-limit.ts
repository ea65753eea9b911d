import { AppError } from '@flowgate/core';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../context.js';

/**
 * The request body bound (413). Hono's bodyLimit reads `c.req.raw.body`, which makes @hono/node-server build a full
 * web Request and stream the body through it; with a Content-Length the header alone decides, and the route's
 * `c.req.text()` keeps node-server's direct read. Everything else (chunked bodies, or requests built in-process
 * without a Content-Length) goes through the streaming limit.
 */
export function requestBodyLimit(maxBytes: number): MiddlewareHandler<AppEnv> {
  const tooLarge = () => new AppError('payload_too_large', `request body exceeds ${maxBytes} bytes`);
  const streamingLimit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw tooLarge();
    },
  });
  return (c, next) => {
    const length = c.req.header('content-length');
    if (length === undefined || c.req.header('transfer-encoding') !== undefined)
      return streamingLimit(c, next);
    if (!/^\d+$/.test(length) || Number(length) > maxBytes) throw tooLarge();
    return next();
  };
}
