/**
 * Which protocol revision serves a message, and the rules of the 2026-07-28 revision ("modern era"): no initialize
 * and no session; every request carries its protocol version, client capabilities and client info in
 * `params._meta`, and the Streamable HTTP binding adds `Mcp-Method`/`Mcp-Name` headers that must agree with the
 * body. This module classifies one message as legacy (2025-era) or modern, validates the envelope and the headers,
 * names the methods 2026-07-28 serves, and shapes its results (`resultType`, cache hints, server identity).
 * Transport-independent: the gateway hands in the raw headers.
 */

import { z } from 'zod';
import { cacheHint } from './cache-hints.js';
import type { ClientInfo } from './context.js';
import type { Icon } from './icons.js';
import {
  clip,
  isJsonObject,
  JSONRPC_INVALID_PARAMS,
  type JsonRpcError,
  MODERN_PROTOCOL_VERSION,
} from './protocol.js';

export { MODERN_PROTOCOL_VERSION };
export type ModernProtocolVersion = typeof MODERN_PROTOCOL_VERSION;
/** Newest first; the revisions served without initialize. */
export const SUPPORTED_MODERN_PROTOCOL_VERSIONS: readonly ModernProtocolVersion[] = [MODERN_PROTOCOL_VERSION];

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** Headers disagree with the body, or a required header is missing (HTTP 400). */
export const HEADER_MISMATCH = -32020;
/** The request needs a client capability the envelope did not declare (HTTP 400): the Tasks extension's methods. */
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
/** The envelope names a revision this server does not serve (HTTP 400); `data` lists what it does serve. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** Revision identifiers are dates, so "2026-07-28 or later" is a string comparison (a future revision is modern). */
export function isModernProtocolVersion(value: string): boolean {
  return value >= MODERN_PROTOCOL_VERSION;
}

function isSupportedModern(value: string): value is ModernProtocolVersion {
  return (SUPPORTED_MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(value);
}

/** Raw header values as received (`null` when absent). */
export interface ModernHeaders {
  protocolVersion: string | null;
  method: string | null;
  name: string | null;
}

/** What a valid envelope gives the request. */
export interface ModernEnvelope {
  version: ModernProtocolVersion;
  clientInfo: ClientInfo | null;
  /** Declared per request; kept so a future capability-gated method can check it (none today). */
  clientCapabilities: Record<string, unknown>;
}

export type EraVerdict =
  | { kind: 'legacy' }
  | { kind: 'modern'; envelope: ModernEnvelope | null }
  | { kind: 'reject'; status: 400; error: JsonRpcError };

// Loose: other `_meta` keys (progressToken, reason, extensions) pass through untouched.
const EnvelopeSchema = z.looseObject({
  [META_PROTOCOL_VERSION]: z.string(),
  [META_CLIENT_CAPABILITIES]: z.record(z.string(), z.unknown()),
  [META_CLIENT_INFO]: z
    .looseObject({ name: z.string(), version: z.string(), title: z.string().optional() })
    .optional(),
});

const REQUIRED_META_KEYS = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES] as const;

function metaOf(params: unknown): Record<string, unknown> | undefined {
  if (!isJsonObject(params)) return undefined;
  return isJsonObject(params._meta) ? params._meta : undefined;
}

/** A message claims the modern era when its `_meta` names a protocol version (valid or not). */
export function hasEnvelopeClaim(params: unknown): boolean {
  const meta = metaOf(params);
  return meta !== undefined && META_PROTOCOL_VERSION in meta;
}

export type EnvelopeParse =
  | { ok: true; version: string; clientInfo: ClientInfo | null; clientCapabilities: Record<string, unknown> }
  | { ok: false; missing: string[]; issue: { key: string; problem: string } };

/** Validates a `_meta` object as the 2026-07-28 request envelope; missing keys are reported before bad ones. */
export function parseEnvelope(meta: Record<string, unknown>): EnvelopeParse {
  const missing = REQUIRED_META_KEYS.filter((key) => !(key in meta));
  if (missing.length > 0)
    return { ok: false, missing, issue: { key: missing[0] as string, problem: 'missing' } };
  const parsed = EnvelopeSchema.safeParse(meta);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const key = first && first.path.length > 0 ? first.path.map(String).join('.') : '_meta';
    return { ok: false, missing: [], issue: { key, problem: first?.message ?? 'invalid' } };
  }
  const info = parsed.data[META_CLIENT_INFO];
  return {
    ok: true,
    version: parsed.data[META_PROTOCOL_VERSION],
    // Self-reported and for display/audit only; bounded like the initialize clientInfo.
    clientInfo: info ? { name: info.name.slice(0, 200), version: info.version.slice(0, 100) } : null,
    clientCapabilities: parsed.data[META_CLIENT_CAPABILITIES],
  };
}

/** Methods whose `Mcp-Name` header must mirror a body field. */
const MCP_NAME_SOURCE: ReadonlyMap<string, string> = new Map([
  ['tools/call', 'name'],
  ['prompts/get', 'name'],
  ['resources/read', 'uri'],
  // The Tasks extension routes task requests by their id.
  ['tasks/get', 'taskId'],
  ['tasks/cancel', 'taskId'],
  ['tasks/update', 'taskId'],
]);

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Header values that are not plain ASCII (or would lose surrounding spaces) are sent as `=?base64?…?=` of the
 * UTF-8 bytes. Returns `undefined` for a sentinel whose payload is not canonical Base64 of valid UTF-8.
 */
export function decodeHeaderValue(value: string): string | undefined {
  if (!(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX))) return value;
  const b64 = value.slice(BASE64_PREFIX.length, value.length - BASE64_SUFFIX.length);
  if (!CANONICAL_BASE64.test(b64)) return undefined;
  try {
    const binary = atob(b64);
    const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Plain printable ASCII without surrounding spaces passes as is; anything else needs the Base64 sentinel. */
export function encodeHeaderValue(value: string): string {
  const plain =
    value.length > 0 &&
    value === value.trim() &&
    /^[\x20-\x7e\t]*$/.test(value) &&
    !(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX));
  if (plain) return value;
  let binary = '';
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `${BASE64_PREFIX}${btoa(binary)}${BASE64_SUFFIX}`;
}

/**
 * For a forwarder that relays JSON-RPC bodies over HTTP (the CLI's stdio bridge): the headers a 2026-07-28 request
 * must carry, derived from its body, or `null` for anything that is not an enveloped request (2025-era traffic,
 * notifications, batches), which keeps its old headers.
 */
export function modernRequestHeaders(message: unknown): Record<string, string> | null {
  if (!isJsonObject(message) || typeof message.method !== 'string' || !('id' in message)) return null;
  const version = metaOf(message.params)?.[META_PROTOCOL_VERSION];
  if (typeof version !== 'string') return null;
  const headers: Record<string, string> = { 'mcp-protocol-version': version, 'mcp-method': message.method };
  const field = MCP_NAME_SOURCE.get(message.method);
  const value = field === undefined ? undefined : (message.params as Record<string, unknown>)[field];
  if (typeof value === 'string') headers['mcp-name'] = encodeHeaderValue(value);
  return headers;
}

/** HTTP optional whitespace (space, tab) is not part of a field value. */
function stripOws(value: string | null): string | null {
  if (value === null || value === '') return value;
  // Almost every value has none: three header values per request need no regex replace.
  const first = value.charCodeAt(0);
  const last = value.charCodeAt(value.length - 1);
  if (first !== 32 && first !== 9 && last !== 32 && last !== 9) return value;
  return value.replace(/^[ \t]+|[ \t]+$/g, '');
}

function reject(error: JsonRpcError): EraVerdict {
  return { kind: 'reject', status: 400, error };
}

function mismatch(header: string, body: string): EraVerdict {
  return reject({
    code: HEADER_MISMATCH,
    message: `Bad Request: the request headers and body disagree: ${body}`,
    data: { mismatch: { header: clip(header), body } },
  });
}

export function unsupportedModernVersion(requested: string): JsonRpcError {
  return {
    code: UNSUPPORTED_PROTOCOL_VERSION,
    message: `Unsupported protocol version: ${clip(requested, 40)}`,
    // The same list server/discover gives (clients and the conformance suite compare them); 2025 versions are
    // reached through initialize, not through the envelope.
    data: { supported: [...SUPPORTED_MODERN_PROTOCOL_VERSIONS], requested: clip(requested, 40) },
  };
}

/**
 * Decides how one JSON-RPC message is served. The body decides the era (a proxy that strips headers must not
 * change it); headers are cross-checked. Order follows the reference implementation so a request failing several
 * checks gets the same answer: envelope shape, header/body version and method agreement, supported revision, then
 * presence of the required headers and the `Mcp-Name` check (requests only; notifications need no headers).
 */
export function classifyMessage(
  method: string,
  params: Record<string, unknown>,
  isRequest: boolean,
  rawHeaders: ModernHeaders,
): EraVerdict {
  const headerVersion = stripOws(rawHeaders.protocolVersion) || null;
  const methodHeader = stripOws(rawHeaders.method) || null;
  const nameHeader = stripOws(rawHeaders.name);
  const headerNamesModern = headerVersion !== null && isModernProtocolVersion(headerVersion);
  const meta = metaOf(params);

  // initialize stays the 2025 handshake unless it carries a complete modern envelope (then it is an unknown method).
  if (method === 'initialize' && !carriesValidModernClaim(meta)) {
    if (!headerNamesModern) return { kind: 'legacy' };
    return mismatch(
      headerVersion,
      'an initialize request (2025-era handshake) was sent with a 2026-era MCP-Protocol-Version header',
    );
  }
  if (!hasEnvelopeClaim(params)) {
    if (!headerNamesModern) return { kind: 'legacy' };
    if (!isRequest) return { kind: 'modern', envelope: null };
    const missing = meta ? parseEnvelopeMissing(meta) : ['_meta'];
    return reject({
      code: JSONRPC_INVALID_PARAMS,
      message: `Invalid params: the MCP-Protocol-Version header names ${clip(headerVersion, 40)} but the request lacks the _meta key(s) ${missing.join(', ')}`,
      data: { envelope: { missing } },
    });
  }

  const envelope = parseEnvelope(meta as Record<string, unknown>);
  if (!envelope.ok) {
    // A notification needs no answer; only its version claim matters and there is nothing to serve.
    if (!isRequest) return { kind: 'modern', envelope: null };
    return reject({
      code: JSONRPC_INVALID_PARAMS,
      message: `Invalid _meta envelope for protocol revision ${MODERN_PROTOCOL_VERSION}: ${envelope.issue.key}: ${envelope.issue.problem}`,
      data: { envelope: envelope.issue },
    });
  }
  const claimed = envelope.version;
  if (headerVersion !== null && headerVersion !== claimed)
    return mismatch(
      headerVersion,
      `the body envelope names protocol version ${clip(claimed, 40)} but the MCP-Protocol-Version header names ${clip(headerVersion, 40)}`,
    );
  if (methodHeader !== null && methodHeader !== method)
    return mismatch(
      methodHeader,
      `the body names method ${clip(method)} but the Mcp-Method header names ${clip(methodHeader)}`,
    );
  if (!isSupportedModern(claimed)) return reject(unsupportedModernVersion(claimed));
  const served: ModernEnvelope = {
    version: claimed,
    clientInfo: envelope.clientInfo,
    clientCapabilities: envelope.clientCapabilities,
  };
  if (!isRequest) return { kind: 'modern', envelope: served };

  if (headerVersion === null)
    return mismatch(
      '(missing)',
      `the body envelope names protocol version ${claimed} but the required MCP-Protocol-Version header is absent`,
    );
  if (methodHeader === null)
    return mismatch(
      '(missing)',
      `the body names method ${clip(method)} but the required Mcp-Method header is absent`,
    );
  const field = MCP_NAME_SOURCE.get(method);
  const bodyValue = field === undefined ? undefined : params[field];
  if (field !== undefined && typeof bodyValue === 'string') {
    if (nameHeader === null || nameHeader === '')
      return mismatch(
        '(missing)',
        `the body carries params.${field}="${clip(bodyValue)}" but the required Mcp-Name header is absent`,
      );
    const decoded = decodeHeaderValue(nameHeader);
    if (decoded === undefined)
      return mismatch(nameHeader, 'the Mcp-Name header carries an invalid Base64 sentinel value');
    if (decoded !== bodyValue)
      return mismatch(
        nameHeader,
        `the body carries params.${field}="${clip(bodyValue)}" but the Mcp-Name header names "${clip(decoded)}"`,
      );
  }
  return { kind: 'modern', envelope: served };
}

function carriesValidModernClaim(meta: Record<string, unknown> | undefined): boolean {
  if (meta === undefined || !(META_PROTOCOL_VERSION in meta)) return false;
  const parsed = parseEnvelope(meta);
  return parsed.ok && isModernProtocolVersion(parsed.version);
}

function parseEnvelopeMissing(meta: Record<string, unknown>): string[] {
  const missing = REQUIRED_META_KEYS.filter((key) => !(key in meta));
  return missing.length > 0 ? missing : [META_PROTOCOL_VERSION];
}

/** Methods of the 2026-07-28 registry we serve; `initialize` and `ping` no longer exist there. */
export const MODERN_METHODS: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  // The Tasks extension's methods (tasks/list and tasks/result are not part of it: results come with tasks/get).
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
  'subscriptions/listen',
]);

// ---- results --------------------------------------------------------------------------------------------

export interface ServerIdentity {
  name: string;
  title?: string;
  version: string;
  /** Only where the identity is given once (server/discover, initialize), never in every result's `_meta`. */
  icons?: Icon[];
}

/**
 * The fields a 2026-07-28 result carries in front of the method's own: the discriminator and cache hints
 * (cache-hints.ts; `listTtlMs` is how long this endpoint's lists stay valid for the caller, 0 when unknown).
 */
function envelopeFields(method: string, listTtlMs: number): Record<string, unknown> {
  const hint = cacheHint(method, listTtlMs);
  return hint ? { resultType: 'complete', ...hint } : { resultType: 'complete' };
}

/** Shapes a method result for 2026-07-28: `resultType`, cache hints where required, server identity in `_meta`. */
export function modernResult(
  method: string,
  result: Record<string, unknown>,
  server: ServerIdentity,
  listTtlMs = 0,
): Record<string, unknown> {
  const meta = isJsonObject(result._meta) ? result._meta : {};
  return { ...envelopeFields(method, listTtlMs), ...result, _meta: { ...meta, [META_SERVER_INFO]: server } };
}

/**
 * The same for an already serialised result object (the cached tools list), without parsing it. The cached
 * lists never carry `_meta`, so prefixing the fields cannot produce a duplicate key.
 */
export function modernResultJson(
  method: string,
  json: string,
  server: ServerIdentity,
  listTtlMs = 0,
): string {
  const head = JSON.stringify({
    ...envelopeFields(method, listTtlMs),
    _meta: { [META_SERVER_INFO]: server },
  });
  const body = json.trim().slice(1, -1).trim();
  return body ? `${head.slice(0, -1)},${body}}` : head;
}

/** The answer to `server/discover`: what this endpoint serves, with no session to open. */
export function discoverResult(options: {
  capabilities: Record<string, unknown>;
  server: ServerIdentity;
  instructions: string;
}): Record<string, unknown> {
  return {
    supportedVersions: [...SUPPORTED_MODERN_PROTOCOL_VERSIONS],
    capabilities: options.capabilities,
    serverInfo: options.server,
    instructions: options.instructions,
  };
}
