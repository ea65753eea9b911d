import { RunError } from '../errors.js';
import { NetworkError, send, type TransportOptions } from './transport.js';

/**
 * A WHATWG `fetch` for code that wants one (the MCP SDK's client) while every request still goes through `send()`:
 * the address policy in the socket lookup, redirects checked hop by hop, credentials dropped when the origin
 * changes, and the response buffered up to a byte cap. The response is returned whole, so a stream that never ends
 * (a server-sent event stream left open) ends only at the cap, the caller's signal or its timeout.
 */
export interface GuardedFetchOptions {
  transport: TransportOptions;
  /** Larger responses (after decompression) reject with `http_response_too_large`. */
  maxResponseBytes: number;
  /** Called before every request that goes out, redirect hops included; throwing stops the request. */
  beforeSend?: () => void;
  /** Header names sent only to the first request's origin, besides authorization, cookie and proxy-authorization. */
  credentialHeaders?: Iterable<string>;
  /** Aborts every request made through this fetch, besides each request's own signal. */
  signal?: AbortSignal;
}

const DEFAULT_CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
/** Statuses whose response must have a null body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export function guardedFetch(options: GuardedFetchOptions): typeof fetch {
  const credentialHeaders = new Set(DEFAULT_CREDENTIAL_HEADERS);
  for (const name of options.credentialHeaders ?? []) credentialHeaders.add(name.toLowerCase());
  const beforeSend = options.beforeSend ?? (() => undefined);

  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new RunError('http_request_failed', 'only http and https URLs can be fetched');
    }
    if (url.username || url.password) {
      throw new RunError('step_config_invalid', 'credentials in the URL are not allowed; use a connection');
    }
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    const signal = options.signal ? AbortSignal.any([options.signal, request.signal]) : request.signal;
    let response: Awaited<ReturnType<typeof send>>;
    try {
      response = await send(
        {
          url,
          method: request.method,
          headers,
          body,
          credentialHeaders,
          maxResponseBytes: options.maxResponseBytes,
          signal,
          beforeSend,
        },
        options.transport,
      );
    } catch (error) {
      // An abort rejects the way fetch's does, with the signal's reason, so callers that check for it still can.
      if (signal.aborted) throw signal.reason ?? new DOMException('the request was aborted', 'AbortError');
      if (error instanceof NetworkError) {
        throw error.timedOut
          ? new RunError('http_timeout', error.message)
          : new RunError('http_request_failed', error.message);
      }
      throw error;
    }
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(response.headers)) responseHeaders.append(name, value);
    const nullBody = NULL_BODY_STATUSES.has(response.status) || request.method === 'HEAD';
    return new Response(nullBody ? null : new Uint8Array(response.body), {
      status: response.status,
      headers: responseHeaders,
    });
  };
}
