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
  body: string;
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

export async function postMcp(
  target: UpstreamTarget,
  body: string,
  protocolVersion: string | null,
  extraHeaders: Readonly<Record<string, string>> = {},
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
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, target.timeoutMs);
  try {
    const res = await target.fetch(target.endpoint, {
      method: 'POST',
      headers,
      body,
      signal: controller.signal,
      redirect: 'error',
    });
    const text = await readBounded(res, MAX_RESPONSE_BYTES);
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', body: text };
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
  const messages: unknown[] = [];
  let data: string[] = [];
  const dispatch = (): boolean => {
    if (data.length === 0) return true;
    const payload = data.join('\n');
    data = [];
    if (payload.trim() === '') return true;
    try {
      messages.push(JSON.parse(payload));
      return true;
    } catch {
      return false;
    }
  };
  for (const line of body.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (!dispatch()) return null;
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
  }
  if (!dispatch()) return null;
  return messages;
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
