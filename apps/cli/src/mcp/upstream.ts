/**
 * One Streamable HTTP exchange with the workspace endpoint, shared by the stdio bridge and the doctor:
 * POST a JSON-RPC body, read a bounded answer, decode JSON or SSE into messages, and describe failures in
 * words a user can act on. Nothing here ever prints or returns the bearer token.
 */
import { scrub } from './credentials.js';

export const STREAMABLE_ACCEPT = 'application/json, text/event-stream';
/** Tool results are bounded by the server; this only stops a misbehaving proxy from exhausting memory. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export interface UpstreamTarget {
  endpoint: string;
  token: string;
  tokenEnvVar: string;
  workspaceId: string;
  /** X-MCP-* narrowing headers. */
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  fetch: typeof fetch;
  userAgent?: string;
}

export interface UpstreamAnswer {
  status: number;
  contentType: string;
  /** The whole body; empty when it was an event stream handed to `onEvent` as it arrived. */
  body: string;
  /** Set when the body was an event stream delivered through `onEvent`: whether every event was JSON. */
  streamed?: { events: number; invalid: boolean };
}

export type FailureKind = 'network' | 'timeout' | 'too_large';

/** The request never produced a complete HTTP answer. */
export class UpstreamFailure extends Error {
  readonly kind: FailureKind;
  constructor(kind: FailureKind, message: string) {
    super(message);
    this.name = 'UpstreamFailure';
    this.kind = kind;
  }
}

/**
 * Posts one body. With `onEvent`, an answer that is an event stream (a waiting call's progress, a
 * `subscriptions/listen` stream) is handed over event by event as it arrives, and `timeoutMs` then bounds the wait for
 * the answer to start and each silence within it (the gateway sends a keep-alive every 15 s), not the whole stream.
 */
export async function postMcp(
  target: UpstreamTarget,
  body: string,
  protocolVersion: string | null,
  extraHeaders: Readonly<Record<string, string>> = {},
  onEvent?: (message: unknown) => void,
): Promise<UpstreamAnswer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${target.token}`,
    'content-type': 'application/json',
    accept: STREAMABLE_ACCEPT,
    ...target.headers,
  };
  if (protocolVersion) headers['mcp-protocol-version'] = protocolVersion;
  Object.assign(headers, extraHeaders);
  if (target.userAgent) headers['user-agent'] = target.userAgent;
  const controller = new AbortController();
  let timedOut = false;
  const expire = () => {
    timedOut = true;
    controller.abort();
  };
  let timer = setTimeout(expire, target.timeoutMs);
  try {
    const res = await target.fetch(target.endpoint, {
      method: 'POST',
      headers,
      body,
      signal: controller.signal,
      redirect: 'error',
    });
    const contentType = res.headers.get('content-type') ?? '';
    if (onEvent && contentType.toLowerCase().startsWith('text/event-stream')) {
      const streamed = await readEvents(res, MAX_RESPONSE_BYTES, onEvent, () => {
        clearTimeout(timer);
        timer = setTimeout(expire, target.timeoutMs);
      });
      return { status: res.status, contentType, body: '', streamed };
    }
    const text = await readBounded(res, MAX_RESPONSE_BYTES);
    return { status: res.status, contentType, body: text };
  } catch (error) {
    if (error instanceof UpstreamFailure) throw error;
    if (timedOut) {
      throw new UpstreamFailure(
        'timeout',
        `no answer from ${originOf(target.endpoint)} within ${target.timeoutMs} ms (--timeout)`,
      );
    }
    throw new UpstreamFailure('network', networkMessage(error, target.endpoint));
  } finally {
    clearTimeout(timer);
  }
}

async function readBounded(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new UpstreamFailure('too_large', `the answer exceeded ${Math.round(max / 1024 / 1024)} MiB`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads an event stream, handing each event's JSON to `onEvent` as it completes; `onChunk` marks progress. */
async function readEvents(
  res: Response,
  max: number,
  onEvent: (message: unknown) => void,
  onChunk: () => void,
): Promise<{ events: number; invalid: boolean }> {
  const decoder = new SseDecoder();
  const text = new TextDecoder();
  let events = 0;
  let size = 0;
  const deliver = (messages: unknown[] | null): boolean => {
    if (messages === null) return false;
    for (const message of messages) {
      events++;
      onEvent(message);
    }
    return true;
  };
  if (!res.body) return { events: 0, invalid: false };
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    onChunk();
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new UpstreamFailure('too_large', `the answer exceeded ${Math.round(max / 1024 / 1024)} MiB`);
    }
    if (!deliver(decoder.push(text.decode(value, { stream: true })))) {
      // An event that is not JSON: the stream cannot be trusted any further.
      await reader.cancel().catch(() => undefined);
      return { events, invalid: true };
    }
  }
  const rest = decoder.push(text.decode());
  const last = rest === null ? null : decoder.end();
  if (rest === null || last === null) return { events, invalid: true };
  deliver([...rest, ...last]);
  return { events, invalid: false };
}

function originOf(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return 'the server';
  }
}

function networkMessage(error: unknown, endpoint: string): string {
  // fetch wraps the socket error in `cause`; its code (ECONNREFUSED, ENOTFOUND…) is the useful part.
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : null;
  const detail = code ?? (error instanceof Error ? error.message : 'network error');
  return `cannot reach the Flowgate API at ${originOf(endpoint)} (${detail.slice(0, 120)}): is the server running and --api-url right?`;
}

/**
 * Messages of an answer: a JSON body (object or batch array) or every `data:` event of an SSE stream.
 * `null` when the body is neither (HTML error pages, truncated JSON).
 */
export function decodeMessages(answer: UpstreamAnswer): unknown[] | null {
  const type = answer.contentType.toLowerCase();
  if (type.startsWith('text/event-stream')) return decodeSse(answer.body);
  if (answer.body.trim() === '') return [];
  try {
    return [JSON.parse(answer.body)];
  } catch {
    return null;
  }
}

/** SSE per the HTML spec: `data:` lines joined by `\n`, dispatched on a blank line; other fields ignored. */
export function decodeSse(body: string): unknown[] | null {
  const decoder = new SseDecoder();
  const messages = decoder.push(body);
  const last = decoder.end();
  return messages === null || last === null ? null : [...messages, ...last];
}

/**
 * An event stream decoded as it arrives: `push` gives the events its text completes (their JSON), `end` the one a
 * stream without a final blank line leaves; either gives null once an event is not JSON.
 */
export class SseDecoder {
  private data: string[] = [];
  private pending = '';

  push(chunk: string): unknown[] | null {
    this.pending += chunk;
    const messages: unknown[] = [];
    for (;;) {
      const at = this.pending.search(/\r\n|\r|\n/);
      if (at === -1) break;
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (this.pending[at] === '\r' && at === this.pending.length - 1) break;
      const line = this.pending.slice(0, at);
      this.pending = this.pending.slice(this.pending.startsWith('\r\n', at) ? at + 2 : at + 1);
      if (!this.line(line, messages)) return null;
    }
    return messages;
  }

  end(): unknown[] | null {
    const messages: unknown[] = [];
    if (this.pending !== '' && !this.line(this.pending.replace(/\r$/, ''), messages)) return null;
    this.pending = '';
    return this.dispatch(messages) ? messages : null;
  }

  private line(line: string, messages: unknown[]): boolean {
    if (line === '') return this.dispatch(messages);
    if (line.startsWith(':')) return true;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    return true;
  }

  private dispatch(messages: unknown[]): boolean {
    if (this.data.length === 0) return true;
    const payload = this.data.join('\n');
    this.data = [];
    if (payload.trim() === '') return true;
    try {
      messages.push(JSON.parse(payload));
      return true;
    } catch {
      return false;
    }
  }
}

export interface HttpFailure {
  status: number;
  /** The server's stable error code (`invalid_token`, `forbidden`…) when its body carried one. */
  upstreamCode: string | null;
  /** What the server said, shortened and scrubbed. */
  detail: string;
  hint: string;
  /** `upstream answered 401: invalid_token: …` */
  summary: string;
  /** The summary and the hint: `upstream answered 401: invalid_token: … — check the key in $VAR` */
  message: string;
}

/** Describes an HTTP answer that is not a usable JSON-RPC answer. */
export function describeHttpFailure(answer: UpstreamAnswer, target: UpstreamTarget): HttpFailure {
  const { code, detail } = summariseBody(answer, target.token);
  const hint = hintFor(answer.status, code, target);
  const said = [code, detail].filter((s) => s && s.length > 0).join(': ');
  const summary = `upstream answered ${answer.status}${said ? `: ${said}` : ''}`;
  return {
    status: answer.status,
    upstreamCode: code,
    detail,
    hint,
    summary,
    message: `${summary} — ${hint}`,
  };
}

function summariseBody(answer: UpstreamAnswer, token: string): { code: string | null; detail: string } {
  const type = answer.contentType.toLowerCase();
  if (type.includes('json')) {
    try {
      const parsed = JSON.parse(answer.body) as Record<string, unknown>;
      const code = typeof parsed.code === 'string' ? parsed.code : null;
      const rpcError = parsed.error as { message?: unknown } | undefined;
      const message =
        typeof parsed.message === 'string'
          ? parsed.message
          : typeof rpcError?.message === 'string'
            ? rpcError.message
            : '';
      return {
        code: code ? shorten(scrub(code, token), 60) : null,
        detail: shorten(scrub(message, token), 300),
      };
    } catch {
      // fall through: a body that claims JSON but is not
    }
  }
  let text = answer.body;
  if (type.includes('html') || /^\s*</.test(text)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
    text =
      title ??
      text.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/gi, ' ').replace(/<[^>]*>/g, ' ');
    text = text.replace(/&[a-z]+;|&#\d+;/gi, ' ');
  }
  return { code: null, detail: shorten(scrub(text, token), 160) };
}

function shorten(text: string, max: number): string {
  // Control characters from a hostile body must not reach a terminal.
  const flat = text
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function hintFor(status: number, code: string | null, target: UpstreamTarget): string {
  const ws = target.workspaceId;
  switch (status) {
    case 400:
      return code === 'invalid_narrowing'
        ? 'the server refused the narrowing flags; use the names it lists as valid'
        : 'the server refused the request as malformed';
    case 401:
      return `check the key in $${target.tokenEnvVar}: it is unknown, expired or revoked, or was copied incompletely`;
    case 403:
      return `the key does not grant access to workspace ${ws}: a key of another workspace, a disabled service account, or an IP allowlist / Origin rule`;
    case 404:
      return `no MCP endpoint at ${target.endpoint}: check --api-url and --workspace`;
    case 405:
      return `something other than a Flowgate MCP endpoint answered at ${target.endpoint}: check --api-url`;
    case 406:
    case 415:
      return 'the server refused the media types; a proxy between here and the gateway may rewrite headers';
    case 413:
      return 'the request is larger than the server accepts';
    case 429:
      return 'the server is rate limiting; retry later';
    default:
      if (status >= 500) {
        return `the gateway or a proxy in front of it failed (HTTP ${status}); retry, and check the server logs`;
      }
      return `unexpected HTTP status ${status}`;
  }
}
