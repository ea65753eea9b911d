/**
 * JSON-RPC and MCP wire constants, result shapes and serialisation helpers. Transport-independent: the
 * gateway turns an `McpHttpResult` into a `Response`.
 */
import { utf8Bytes } from '@flowgate/core';

/** Newest first. `initialize` answers with the requested version when it is listed, else with the first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
/** A 2025-era version: negotiated by `initialize`, then named by the `MCP-Protocol-Version` header. */
export type LegacyProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];
/** Served without initialize: each request names it in `params._meta` (see revision.ts). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
/** Every version a request can be served under. */
export type ProtocolVersion = LegacyProtocolVersion | typeof MODERN_PROTOCOL_VERSION;
/** Everything this server speaks, newest first (server card, get_workspace_context, docs). */
export const SERVED_PROTOCOL_VERSIONS: readonly ProtocolVersion[] = [
  MODERN_PROTOCOL_VERSION,
  ...SUPPORTED_PROTOCOL_VERSIONS,
];
export const LATEST_PROTOCOL_VERSION: LegacyProtocolVersion = '2025-11-25';
/** A request after initialize without `MCP-Protocol-Version` is treated as this version (stateless server). */
export const DEFAULT_NEGOTIATED_PROTOCOL_VERSION: LegacyProtocolVersion = '2025-03-26';

export function isSupportedProtocolVersion(value: unknown): value is LegacyProtocolVersion {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly unknown[]).includes(value);
}

export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_METHOD_NOT_FOUND = -32601;
export const JSONRPC_INVALID_PARAMS = -32602;
export const JSONRPC_INTERNAL_ERROR = -32603;

export type JsonRpcId = string | number;

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * What the gateway sends back: the HTTP status and the already serialised JSON body (`null` → empty body,
 * used with 202). Bodies are strings so cached fragments (tools/list) are reused without re-serialising.
 */
export interface McpHttpResult {
  status: 200 | 202 | 400 | 404;
  body: string | null;
  /**
   * The same body as UTF-8 pieces to write in order, when it was assembled from cached bytes (tools/list): a small
   * head, the cached bytes themselves (shared: never copied, never changed) and the close.
   */
  parts?: readonly Uint8Array[];
}

export const ACCEPTED: McpHttpResult = Object.freeze({ status: 202, body: null }) as McpHttpResult;

export function serializeResult(id: JsonRpcId, result: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}`;
}

/** Wraps an already serialised result (e.g. the cached tools list) without parsing it again. */
export function serializeRawResult(id: JsonRpcId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

const CLOSE = utf8Bytes('}');

/**
 * `serializeRawResult` as UTF-8 pieces over the result's cached bytes: nothing of the size of the result is
 * allocated per answer (a fresh copy per request is what made V8 collect the old generation every few hundred
 * answers, as external memory pressure).
 */
export function rawResultParts(id: JsonRpcId, resultBytes: Uint8Array): readonly Uint8Array[] {
  return [resultHead(id), resultBytes, CLOSE];
}

/** Heads for the ids clients send most (0…1023, a counter per session), made once each and shared like the list. */
const SMALL_ID_HEADS: Uint8Array[] = [];
const MAX_SHARED_HEAD_ID = 1023;

function resultHead(id: JsonRpcId): Uint8Array {
  if (typeof id === 'number' && Number.isInteger(id) && id >= 0 && id <= MAX_SHARED_HEAD_ID) {
    let head = SMALL_ID_HEADS[id];
    if (head === undefined) {
      head = utf8Bytes(`{"jsonrpc":"2.0","id":${id},"result":`);
      SMALL_ID_HEADS[id] = head;
    }
    return head;
  }
  return utf8Bytes(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`);
}

export function serializeError(id: JsonRpcId | null, error: JsonRpcError): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error });
}

/** Body that is not JSON at all: the gateway calls this when its own parse fails (HTTP 400, -32700). */
export function parseErrorResult(): McpHttpResult {
  return {
    status: 400,
    body: serializeError(null, { code: JSONRPC_PARSE_ERROR, message: 'Parse error: body is not valid JSON' }),
  };
}

export function errorResult(status: 200 | 400, id: JsonRpcId | null, error: JsonRpcError): McpHttpResult {
  return { status, body: serializeError(id, error) };
}

/** Thrown inside method handlers to answer with a JSON-RPC error instead of a result. */
export class JsonRpcFailure extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'JsonRpcFailure';
    this.code = code;
    this.data = data;
  }

  toError(): JsonRpcError {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export function invalidParams(message: string, data?: unknown): JsonRpcFailure {
  return new JsonRpcFailure(JSONRPC_INVALID_PARAMS, message, data);
}

/** A JSON object (not an array, not null): what params, `_meta` and a message must be. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Client-sent text echoed in an answer is cut to `max` characters. */
export function clip(value: string, max = 100): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

// ---- content blocks -------------------------------------------------------------------------------------

export interface TextContent {
  type: 'text';
  text: string;
}

export interface ResourceLinkContent {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

export interface EmbeddedResourceContent {
  type: 'resource';
  resource: { uri: string; mimeType?: string; text: string };
}

export type ContentBlock = TextContent | ResourceLinkContent | EmbeddedResourceContent;

/**
 * `resource_link` blocks exist from 2025-06-18 on; a 2025-03-26 client would reject or drop them, so they are
 * rewritten as text that still names the URI the agent should read.
 */
export function adaptContentForVersion(
  blocks: readonly ContentBlock[],
  version: ProtocolVersion,
): ContentBlock[] {
  if (version !== '2025-03-26') return blocks.slice();
  return blocks.map((block) => {
    if (block.type !== 'resource_link') return block;
    const label = block.title ?? block.name;
    const about = block.description ? ` — ${block.description}` : '';
    const mime = block.mimeType ? ` (${block.mimeType})` : '';
    return {
      type: 'text',
      text: `Resource: ${label}${mime}${about}. Read it with resources/read uri=${block.uri}`,
    };
  });
}
