import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { isSecretKey } from '@flowgate/secrets';
import { RunError } from '../errors.js';
import {
  type AddressPolicy,
  AddressRefusedError,
  checkHost,
  guardedLookup,
  type Resolver,
  urlHost,
} from './net.js';

/**
 * One guarded HTTP exchange for :http and :llm steps, on node:http so the address check can live in the socket's
 * lookup (see net.ts). Redirects are followed by hand — each hop is checked like the first, credentials are
 * dropped when the origin changes — and the response is streamed into a buffer that stops at the size cap
 * (after decompression, so a small compressed body cannot expand past it).
 */
export interface TransportOptions {
  /** Refused destinations: `isBlockedAddress` in production, undefined when private networks are allowed. */
  isBlocked: AddressPolicy;
  resolve: Resolver;
}

export interface OutgoingRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Header names (lower-case) that carry credentials: sent only to the first request's origin. */
  credentialHeaders: ReadonlySet<string>;
  maxResponseBytes: number;
  signal: AbortSignal;
  /** Called before every request that goes out (each redirect hop counts). */
  beforeSend(): void;
}

export interface IncomingResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

/** A failure worth retrying (connection refused or reset, DNS failure, timeout). */
export class NetworkError extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
    this.name = 'NetworkError';
  }
}

export const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Response headers never returned to the flow: they carry session or credential material. */
const DROPPED_RESPONSE_HEADERS = new Set([
  'set-cookie',
  'set-cookie2',
  'cookie',
  'authorization',
  'proxy-authorization',
]);

export function keepResponseHeader(name: string): boolean {
  return !DROPPED_RESPONSE_HEADERS.has(name) && !isSecretKey(name);
}

export async function send(req: OutgoingRequest, options: TransportOptions): Promise<IncomingResponse> {
  const origin = req.url.origin;
  let url = req.url;
  let method = req.method;
  let body = req.body;
  let headers = { ...req.headers };
  for (let hop = 0; ; hop++) {
    const response = await sendOnce(url, method, headers, body, req, options);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.status) || location === undefined) return response;
    if (hop >= MAX_REDIRECTS)
      throw new RunError('http_request_failed', `more than ${MAX_REDIRECTS} redirects`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new RunError('http_request_failed', 'a redirect pointed to an invalid URL');
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new RunError('http_request_failed', 'a redirect pointed to a URL that is not http or https');
    }
    if (
      response.status === 303 ||
      ((response.status === 301 || response.status === 302) && method === 'POST')
    ) {
      if (method !== 'HEAD') method = 'GET';
      body = undefined;
      headers = withoutHeaders(headers, new Set(['content-type', 'content-length']));
    }
    if (next.origin !== origin) headers = withoutHeaders(headers, req.credentialHeaders);
    url = next;
  }
}

function withoutHeaders(headers: Record<string, string>, names: ReadonlySet<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!names.has(k.toLowerCase())) out[k] = v;
  return out;
}

function decoder(encoding: string | undefined): Transform | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return undefined;
  }
}

function sendOnce(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  req: OutgoingRequest,
  options: TransportOptions,
): Promise<IncomingResponse> {
  try {
    checkHost(urlHost(url), options.isBlocked);
  } catch (error) {
    return Promise.reject(refused(error as AddressRefusedError));
  }
  req.beforeSend();
  // Looked up on the module at call time (not bound at import), so instrumentation and test interceptors apply.
  const requestFn = url.protocol === 'https:' ? https.request : http.request;
  return new Promise<IncomingResponse>((resolve, reject) => {
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      reject(classify(error, req.signal));
    };
    let outgoing: http.ClientRequest;
    try {
      outgoing = requestFn(
        url,
        {
          method,
          headers: {
            ...headers,
            'accept-encoding': 'gzip, deflate, br',
            ...(body ? { 'content-length': String(body.length) } : {}),
          },
          lookup: guardedLookup(options.resolve, options.isBlocked),
          signal: req.signal,
          // One connection per exchange: a pooled socket could outlive the check of the address it was opened to.
          agent: false,
        },
        (res: IncomingMessage) => {
          const out: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
          }
          const status = res.statusCode ?? 0;
          if (REDIRECTS.has(status) && out.location !== undefined) {
            res.resume();
            settled = true;
            resolve({ status, headers: out, body: Buffer.alloc(0) });
            return;
          }
          const decode = decoder(out['content-encoding']);
          const stream: Readable = decode ? res.pipe(decode) : res;
          if (decode) {
            res.on('error', (e) => decode.destroy(e));
            delete out['content-encoding'];
            delete out['content-length'];
          }
          const chunks: Buffer[] = [];
          let size = 0;
          stream.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > req.maxResponseBytes) {
              const error = new RunError(
                'http_response_too_large',
                `the response is larger than ${req.maxResponseBytes} bytes`,
              );
              if (!settled) {
                settled = true;
                reject(error);
              }
              res.destroy();
              stream.destroy();
              return;
            }
            chunks.push(chunk);
          });
          stream.on('end', () => {
            if (settled) return;
            settled = true;
            resolve({ status, headers: out, body: Buffer.concat(chunks) });
          });
          stream.on('error', fail);
          res.on('aborted', () => fail(new Error('the response was aborted')));
        },
      );
    } catch {
      // Node refuses some header values (characters outside Latin-1) when the request is built.
      settled = true;
      reject(
        new RunError(
          'step_config_invalid',
          'the request could not be built: a header has an invalid character',
        ),
      );
      return;
    }
    outgoing.on('error', fail);
    if (body) outgoing.end(body);
    else outgoing.end();
  });
}

function refused(error: AddressRefusedError): RunError {
  return new RunError(
    'network_address_refused',
    `refused to connect to ${error.host}: loopback, private, link-local and metadata addresses are not allowed`,
  );
}

function classify(error: unknown, signal: AbortSignal): unknown {
  if (error instanceof RunError) return error;
  if (error instanceof AddressRefusedError) return refused(error);
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof AddressRefusedError) return refused(cause);
  if (signal.aborted) return new NetworkError('the request timed out', true);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return new NetworkError(code ? `network error (${code})` : 'network error', false);
}
