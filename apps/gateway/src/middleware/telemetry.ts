import {
  type Attributes,
  attributeSet,
  extractContext,
  markError,
  recordHttpRequest,
  SpanKind,
  telemetryActive,
  withSpan,
} from '@flowgate/telemetry';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from '../context.js';

/** `http.server.request.duration`'s attributes: one shared set per method, route and status. */
function durationAttributes(method: string, route: string, status: number): Attributes {
  return attributeSet(`http\0${method}\0${status}\0${route}`, () => ({
    'http.request.method': method,
    'http.route': route,
    'http.response.status_code': status,
    ...(status >= 500 ? { 'error.type': String(status) } : {}),
  }));
}

/**
 * The HTTP server span of each request, continuing an incoming `traceparent`, and `http.server.request.duration`.
 * Named by the matched route, never the query string (where a misplaced token would be).
 */
export function requestTelemetry(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!telemetryActive()) return next();
    const start = performance.now();
    const method = c.req.method;
    let route = '';
    await withSpan(
      method,
      {
        kind: SpanKind.SERVER,
        parent: extractContext((name) => c.req.header(name)),
        attributes: { 'http.request.method': method, 'url.path': c.req.path, 'url.scheme': 'http' },
      },
      async (span) => {
        await next();
        // The last route matched (the endpoint's own), also when a guard answered before reaching it.
        route = routePath(c, -1);
        const status = c.res.status;
        span?.updateName(`${method} ${route}`);
        span?.setAttribute('http.route', route);
        span?.setAttribute('http.response.status_code', status);
        if (status >= 500) markError(span, String(status));
      },
    );
    recordHttpRequest(durationAttributes(method, route, c.res.status), (performance.now() - start) / 1000);
  };
}
