import { setTimeout as delay } from 'node:timers/promises';
import { deadlineSignal } from '@flowgate/core';
import { STEP_LIMITS } from '@flowgate/flows';
import { z } from 'zod';
import { RunError } from '../errors.js';
import type { StepContext } from '../ports.js';
import { fromJson, Keyword, type Value, VMap } from '../values.js';
import { connectionFor, parseConfig, type ResolvedConnection, type StepPorts } from './common.js';
import { type IncomingResponse, keepResponseHeader, NetworkError, send } from './transport.js';

const L = STEP_LIMITS.http;

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const httpConfigSchema = z.strictObject({
  connection: z.string().optional(),
  url: z.string().max(2048).optional(),
  method: z.enum(['get', 'post', 'put', 'patch', 'delete', 'head', 'options']).default('get'),
  path: z.string().max(2048).optional(),
  query: z.record(z.string(), z.union([scalar, z.array(scalar)])).optional(),
  headers: z.record(z.string(), scalar).optional(),
  json: z.unknown().optional(),
  body: z.string().optional(),
  'response-as': z.enum(['auto', 'json', 'text']).default('auto'),
  'timeout-ms': z.number().int().min(1).max(L.timeoutMsMax).default(L.timeoutMsDefault),
  retry: z
    .strictObject({
      'max-attempts': z.number().int().min(1).max(L.maxAttemptsMax).default(1),
      'backoff-ms': z.number().int().min(0).max(L.backoffMsMax).default(500),
    })
    .optional(),
});

export type HttpConfig = z.infer<typeof httpConfigSchema>;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Set by the engine from the request itself; a flow setting them could desynchronise the exchange. */
const ENGINE_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept-encoding',
]);

function headerValue(v: string | number | boolean): string {
  const s = String(v);
  if (/[\r\n\0]/.test(s)) throw new RunError('step_config_invalid', 'a header value contains a line break');
  return s;
}

/** The request target: the connection's base URL (or :url) plus :path and :query. */
export function buildUrl(config: HttpConfig, connection: ResolvedConnection | undefined): URL {
  const base = connection ? connection.baseUrl : config.url;
  if ((connection ? 1 : 0) + (config.url !== undefined ? 1 : 0) !== 1 || base === undefined) {
    throw new RunError('step_config_invalid', 'an :http step needs exactly one of :connection or :url');
  }
  const path = config.path ?? '';
  if (path !== '' && !path.startsWith('/'))
    throw new RunError('step_config_invalid', ':path must start with "/"');
  let url: URL;
  let baseUrl: URL;
  try {
    baseUrl = new URL(base);
    if (path !== '' && (baseUrl.search || baseUrl.hash)) {
      throw new RunError('step_config_invalid', 'a base URL with a query or fragment cannot take a :path');
    }
    // Appending text (not resolving a reference) keeps the base's origin and any base path such as /v1.
    url = new URL(base.replace(/\/+$/, '') + path);
  } catch (error) {
    if (error instanceof RunError) throw error;
    throw new RunError(
      'step_config_invalid',
      connection ? 'the connection base URL is not a valid URL' : ':url is not a valid URL',
    );
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== baseUrl.origin) {
    throw new RunError(
      'step_config_invalid',
      'the request URL must be an http or https URL on the base URL’s host',
    );
  }
  if (url.username || url.password)
    throw new RunError('step_config_invalid', 'credentials in the URL are not allowed; use a connection');
  for (const [name, value] of Object.entries(config.query ?? {})) {
    for (const v of Array.isArray(value) ? value : [value])
      if (v !== null) url.searchParams.append(name, String(v));
  }
  return url;
}

function requestHeaders(
  config: HttpConfig,
  connection: ResolvedConnection | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.headers ?? {})) {
    if (!HEADER_NAME.test(name))
      throw new RunError('step_config_invalid', `"${name}" is not a valid header name`);
    if (ENGINE_HEADERS.has(name.toLowerCase())) {
      throw new RunError('step_config_invalid', `the ${name.toLowerCase()} header is set by the engine`);
    }
    if (value !== null) headers[name.toLowerCase()] = headerValue(value);
  }
  // The connection's credentials win over a header of the same name written in the flow.
  for (const [name, value] of Object.entries(connection?.headers ?? {}))
    headers[name.toLowerCase()] = headerValue(value);
  return headers;
}

function backoff(config: HttpConfig, attempt: number, response: IncomingResponse | undefined): number {
  const base = config.retry?.['backoff-ms'] ?? 500;
  let ms = Math.min(L.backoffMsMax, base * 2 ** (attempt - 1));
  const retryAfter = Number(response?.headers['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter > 0)
    ms = Math.min(L.backoffMsMax, Math.max(ms, retryAfter * 1000));
  return ms;
}

function isJsonType(contentType: string | undefined): boolean {
  return (
    contentType !== undefined &&
    /^application\/([a-z0-9.+-]*\+)?json\b|^text\/json\b/i.test(contentType.trim())
  );
}

function responseBody(
  config: HttpConfig,
  method: string,
  response: IncomingResponse,
  ctx: StepContext,
): Value {
  if (method === 'HEAD' || response.status === 204 || response.status === 304 || response.body.length === 0) {
    return null;
  }
  const text = response.body.toString('utf8');
  ctx.meter.string(text.length);
  const as = config['response-as'];
  if (as === 'text' || (as === 'auto' && !isJsonType(response.headers['content-type']))) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    if (as === 'auto') return text;
    throw new RunError('http_response_invalid', `the response (status ${response.status}) is not valid JSON`);
  }
  return fromJson(parsed, ctx.meter);
}

function resultOf(config: HttpConfig, method: string, response: IncomingResponse, ctx: StepContext): Value {
  const headers: [Keyword, Value][] = [];
  for (const [name, value] of Object.entries(response.headers)) {
    if (keepResponseHeader(name)) headers.push([new Keyword(name), value]);
  }
  return VMap.of({
    status: response.status,
    headers: VMap.from(headers),
    body: responseBody(config, method, response, ctx),
  });
}

/** Runs an :http step: network errors, timeouts, 429 and 5xx are retried; any other status is the result. */
export async function runHttpStep(rawConfig: unknown, ctx: StepContext, ports: StepPorts): Promise<Value> {
  const config = parseConfig(httpConfigSchema, rawConfig, ':http');
  if (config.json !== undefined && config.body !== undefined) {
    throw new RunError('step_config_invalid', 'an :http step takes only one of :json or :body');
  }
  const connection = config.connection
    ? await connectionFor(ports, config.connection, 'http', ctx)
    : undefined;
  const url = buildUrl(config, connection);
  const headers = { ...ports.outboundHeaders?.(), ...requestHeaders(config, connection) };
  let body: Buffer | undefined;
  if (config.json !== undefined) {
    body = Buffer.from(JSON.stringify(config.json), 'utf8');
    headers['content-type'] ??= 'application/json';
  } else if (config.body !== undefined) body = Buffer.from(config.body, 'utf8');
  const method = config.method.toUpperCase();
  const credentialHeaders = new Set(['authorization', 'cookie', 'proxy-authorization']);
  for (const name of Object.keys(connection?.headers ?? {})) credentialHeaders.add(name.toLowerCase());
  const maxAttempts = config.retry?.['max-attempts'] ?? 1;

  for (let attempt = 1; ; attempt++) {
    let response: IncomingResponse | undefined;
    let failure: NetworkError | undefined;
    const attemptDeadline = deadlineSignal(ctx.signal, config['timeout-ms']);
    try {
      response = await send(
        {
          url,
          method,
          headers,
          body,
          credentialHeaders,
          maxResponseBytes: L.responseBytesMax,
          signal: attemptDeadline.signal,
          beforeSend: () => ctx.usage.countHttpCall(),
        },
        ports.transport,
      );
    } catch (error) {
      if (!(error instanceof NetworkError)) throw error;
      failure = error;
    } finally {
      attemptDeadline.clear();
    }
    if (ctx.signal.aborted) throw new RunError('http_request_failed', 'the request was stopped');
    const retryable =
      failure !== undefined ||
      (response !== undefined && (response.status >= 500 || response.status === 429));
    if (retryable && attempt < maxAttempts) {
      const delayMs = backoff(config, attempt, response);
      await ctx.retrying({
        attempt,
        delayMs,
        reason: failure ? failure.message : `status ${response?.status}`,
      });
      await delay(delayMs, undefined, { signal: ctx.signal }).catch(() => undefined);
      if (ctx.signal.aborted) throw new RunError('http_request_failed', 'the request was stopped');
      continue;
    }
    if (failure) {
      const attempts = `${attempt} attempt${attempt === 1 ? '' : 's'}`;
      throw failure.timedOut
        ? new RunError('http_timeout', `the request timed out after ${config['timeout-ms']} ms (${attempts})`)
        : new RunError('http_request_failed', `${failure.message} (${attempts})`);
    }
    return resultOf(config, method, response as IncomingResponse, ctx);
  }
}
