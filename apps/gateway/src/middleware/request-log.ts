import type { MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { AppEnv } from '../context.js';

/** One log line per request, after it is answered. Runs inside `requestIds`, so the id is known. */
export function requestLog(logger: Logger): MiddlewareHandler<AppEnv> {
  const logged: MiddlewareHandler<AppEnv> = async (c, next) => {
    const started = performance.now();
    await next();
    // Path only: query strings may carry things we refuse but must not log.
    logger.info(
      {
        requestId: c.get('requestId'),
        method: c.req.method,
        path: c.req.path.slice(0, 200),
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      },
      'request',
    );
  };
  // Below info (FLOWGATE_LOG_LEVEL=warn) the line is never written: no frame or promise for it.
  return (c, next) => (logger.isLevelEnabled('info') ? logged(c, next) : next());
}
