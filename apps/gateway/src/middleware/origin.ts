import { AppError } from '@flowgate/core';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';

export interface OriginCheckOptions {
  publicUrl: string;
  /** The deployment's allowed origins; the workspace policy adds its own. */
  allowedOrigins: readonly string[];
}

/**
 * DNS-rebinding guard: a request with an `Origin` must come from the deployment, its allowed origins or the
 * workspace's (403 otherwise). Requests without `Origin` (non-browser clients) pass.
 */
export function originCheck(options: OriginCheckOptions): MiddlewareHandler<AppEnv> {
  const publicOrigin = new URL(options.publicUrl).origin;
  return async (c, next) => {
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      const allowed =
        origin === publicOrigin ||
        options.allowedOrigins.includes(origin) ||
        c.get('policy').allowedOrigins.includes(origin);
      if (!allowed) throw new AppError('origin_not_allowed', 'this Origin is not allowed');
    }
    await next();
  };
}
