import { AppError, isAppError } from '@flowgate/core';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from 'pino';
import type { AppEnv } from '../context.js';

/** `{code, message}` with the code's status, plus the headers the error carries (a 401's challenge). */
export function errorResponse(c: Context, error: AppError): Response {
  return c.json(error.toBody(), error.status as 400, { ...error.headers });
}

/** Maps anything thrown by a route or middleware to `{code, message}`; unexpected errors become a generic 500. */
export function createErrorHandler(logger: Logger) {
  return (err: Error, c: Context<AppEnv>): Response => {
    if (isAppError(err)) return errorResponse(c, err);
    if (err instanceof HTTPException && err.status === 413) {
      return errorResponse(c, new AppError('payload_too_large', 'request body is too large'));
    }
    logger.error(
      {
        requestId: c.get('requestId'),
        code: 'internal_error',
        errName: err.name,
        err: err.message.slice(0, 300),
      },
      'unhandled error',
    );
    return errorResponse(
      c,
      new AppError('internal_error', 'internal error; the request id identifies it in the logs'),
    );
  };
}
