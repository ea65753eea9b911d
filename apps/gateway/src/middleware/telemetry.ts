import {
  type Attributes,
  attributeSet,
  contextWithSpan,
  errorType,
  extractContext,
  type HeaderSource,
  markError,
  recordHttpRequest,
  type Span,
  SpanKind,
  startDetachedSpan,
  type TraceContext,
  telemetryActive,
  withSpan,
} from '@flowgate/telemetry';
import type { Context, MiddlewareHandler, Next } from 'hono';
import { routePath } from 'hono/route';
import type { AppEnv } from '../context.js';

type DurationKey = readonly ['http', string, number, string];

function buildDurationAttributes([, route, status, method]: DurationKey): Attributes {
  return {
    'http.request.method': method,
    'http.route': route,
    'http.response.status_code': status,
    ...(status >= 500 ? { 'error.type': String(status) } : {}),
  };
}

/** `http.server.request.duration`'s attributes: one shared set per method, route and status. */
function durationAttributes(method: string, route: string, status: number): Attributes {
  return attributeSet(['http', route, status, method] as const, buildDurationAttributes);
}

/**
 * `{method} {route}`, the server span's name, kept per route and method: built per request it is a new string the
 * span encoder hashes again each time. Bounded, as a client chooses the method.
 */
const spanNames = new Map<string, Map<string, string>>();
let spanNameCount = 0;

function spanName(method: string, route: string): string {
  let byMethod = spanNames.get(route);
  const known = byMethod?.get(method);
  if (known !== undefined) return known;
  const name = `${method} ${route}`;
  if (spanNameCount >= 256) return name;
  if (!byMethod) {
    byMethod = new Map();
    spanNames.set(route, byMethod);
  }
  byMethod.set(method, name);
  spanNameCount++;
  return name;
}

const NO_HEADERS: HeaderSource = { header: () => undefined };

/**
 * Whether the request may carry a `traceparent` or `baggage` header (what `extractContext` looks for): on Node, one
 * pass over the names as received instead of two lookups in the request's `Headers` for the usual request that has
 * neither; elsewhere the lookups decide.
 */
function carriesTraceContext(c: Context<AppEnv>): boolean {
  const raw = c.env?.incoming?.rawHeaders;
  if (!raw) return true;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length !== 11 && name.length !== 7) continue;
    const lower = name.toLowerCase();
    if (lower === 'traceparent' || lower === 'baggage') return true;
  }
  return false;
}

export interface RequestTelemetryOptions {
  /**
   * Routes whose handlers take the request's context from `c.get('traceContext')` and open their spans under it
   * explicitly (the MCP endpoints): their request span is not made the active context, so a request that opens no
   * span of its own (a tools/list) enables no async-context propagation (telemetry's context-manager.ts).
   */
  explicitRoutes?: ReadonlySet<string>;
}

/**
 * The HTTP server span of each request, continuing an incoming `traceparent`, and `http.server.request.duration`.
 * Named by the matched route, never the query string (where a misplaced token would be).
 */
export function requestTelemetry(options: RequestTelemetryOptions = {}): MiddlewareHandler<AppEnv> {
  const explicitRoutes = options.explicitRoutes ?? new Set<string>();
  // Not async, and no closures but the two that end the span: this runs for every traced request.
  const traced: MiddlewareHandler<AppEnv> = (c, next) => {
    const start = performance.now();
    const method = c.req.method;
    const parent = extractContext(carriesTraceContext(c) ? c.req : NO_HEADERS);
    // Hono matched every route up front: the last one is the endpoint's own (app.ts registers it last), also when a
    // guard answers before reaching it.
    const route = routePath(c, -1);
    const attributes = { 'http.request.method': method, 'url.path': c.req.path, 'url.scheme': 'http' };
    if (!explicitRoutes.has(route)) return tracedActive(c, next, start, method, route, parent, attributes);
    // Handed to the handlers explicitly, so no async wrapper and no active context: the request's own span only.
    const span = startDetachedSpan(method, { kind: SpanKind.SERVER, parent, attributes });
    if (span) c.set('traceContext', contextWithSpan(parent, span));
    return next().then(
      () => {
        finish(c, span, method, route);
        span?.end();
        recordDuration(c, method, route, start);
      },
      (error: unknown) => {
        markError(span, errorType(error));
        span?.end();
        throw error;
      },
    );
  };
  // Not itself async: without telemetry a request gets no frame or promise of this middleware's.
  return (c, next) => (telemetryActive() ? traced(c, next) : next());
}

/** A route whose handlers read the active context: the request's span is made active for everything it awaits. */
async function tracedActive(
  c: Context<AppEnv>,
  next: Next,
  start: number,
  method: string,
  route: string,
  parent: TraceContext,
  attributes: Attributes,
): Promise<void> {
  await withSpan(method, { kind: SpanKind.SERVER, parent, attributes }, async (span) => {
    if (span) c.set('traceContext', contextWithSpan(parent, span));
    await next();
    finish(c, span, method, route);
  });
  recordDuration(c, method, route, start);
}

/** The server span's name and its answer's attributes, once the request is answered. */
function finish(c: Context<AppEnv>, span: Span | null, method: string, route: string): void {
  if (!span) return;
  const status = c.res.status;
  span.updateName(spanName(method, route));
  span.setAttribute('http.route', route);
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) markError(span, String(status));
}

function recordDuration(c: Context<AppEnv>, method: string, route: string, start: number): void {
  recordHttpRequest(durationAttributes(method, route, c.res.status), (performance.now() - start) / 1000);
}
