/**
 * The JSON-RPC envelope: whether one posted message is a well-formed request, notification or response, and
 * whether a batch may be served at all. What a message asks for is dispatch's business (dispatch.ts).
 */
import type { McpRequestContext } from './context.js';
import {
  clip,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  errorResult,
  isJsonObject,
  isSupportedProtocolVersion,
  JSONRPC_INVALID_PARAMS,
  JSONRPC_INVALID_REQUEST,
  type JsonRpcError,
  type JsonRpcId,
  type LegacyProtocolVersion,
  type McpHttpResult,
  MODERN_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  serializeError,
} from './protocol.js';
import { hasEnvelopeClaim } from './revision.js';

/** Batches larger than this are refused as a whole (bounded work per HTTP request). */
export const MAX_BATCH_SIZE = 32;

/** The answer to one message (`null`: none, a notification or a posted response). */
export type Outcome = { status: 200 | 400 | 404; json: string; parts?: readonly Uint8Array[] } | null;

export function fail(status: 200 | 400 | 404, id: JsonRpcId | null, error: JsonRpcError): Outcome {
  return { status, json: serializeError(id, error) };
}

/** A well-formed request (`id` set) or notification (`id` null). */
export interface JsonRpcMessage {
  id: JsonRpcId | null;
  method: string;
  params: Record<string, unknown>;
}

function isValidId(id: unknown): id is JsonRpcId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

function invalid(id: JsonRpcId | null, message: string): { answer: Outcome } {
  return { answer: fail(400, id, { code: JSONRPC_INVALID_REQUEST, message: `Invalid Request: ${message}` }) };
}

/** Checks one message's envelope; anything that is not a servable message comes back as its answer. */
export function readMessage(message: unknown): JsonRpcMessage | { answer: Outcome } {
  if (!isJsonObject(message)) return invalid(null, 'expected a JSON-RPC object');
  const hasId = 'id' in message && message.id !== undefined;
  const id = hasId && isValidId(message.id) ? message.id : null;
  if (message.jsonrpc !== '2.0') return invalid(id, 'jsonrpc must be "2.0"');
  if (hasId && id === null) return invalid(null, 'id must be a string or a number');
  if (!('method' in message)) {
    // A response posted by the client (we never send requests, but accepting it is what the protocol asks).
    if (hasId && ('result' in message || 'error' in message)) return { answer: null };
    return invalid(id, 'method is missing');
  }
  const method = message.method;
  if (typeof method !== 'string' || method.length === 0)
    return invalid(id, 'method must be a non-empty string');
  const params = message.params;
  if (params !== undefined && !isJsonObject(params)) {
    if (!hasId) return { answer: null };
    return {
      answer: fail(200, id, {
        code: JSONRPC_INVALID_PARAMS,
        message: 'Invalid params: params must be an object',
      }),
    };
  }
  return { id, method, params: params ?? {} };
}

/** Resolves the protocol version of a non-initialize request from `MCP-Protocol-Version`. */
export function headerVersion(ctx: McpRequestContext): LegacyProtocolVersion | { unsupported: string } {
  const raw = ctx.protocolVersionHeader?.trim();
  if (!raw) return DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
  return isSupportedProtocolVersion(raw) ? raw : { unsupported: raw };
}

export function unsupportedVersionError(value: string): JsonRpcError {
  return {
    code: JSONRPC_INVALID_REQUEST,
    message: `Unsupported MCP-Protocol-Version ${JSON.stringify(clip(value, 40))}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
    data: { supported: [...SUPPORTED_PROTOCOL_VERSIONS] },
  };
}

function invalidBatch(message: string): McpHttpResult {
  return errorResult(400, null, { code: JSONRPC_INVALID_REQUEST, message });
}

/** Why a batch is refused as a whole, or null when its messages may be served one by one. */
export function batchRefusal(batch: readonly unknown[], ctx: McpRequestContext): McpHttpResult | null {
  // 2026-07-28 has no batches; one modern element makes the whole batch invalid rather than half-served.
  if (batch.some((m) => isJsonObject(m) && hasEnvelopeClaim(m.params)))
    return invalidBatch(`JSON-RPC batches may not contain ${MODERN_PROTOCOL_VERSION} requests`);
  const version = headerVersion(ctx);
  if (typeof version !== 'string')
    return errorResult(400, null, unsupportedVersionError(version.unsupported));
  if (version !== '2025-03-26')
    return invalidBatch(
      `JSON-RPC batches are not supported in protocol version ${version} (only 2025-03-26)`,
    );
  if (batch.length === 0) return invalidBatch('Empty JSON-RPC batch');
  if (batch.length > MAX_BATCH_SIZE)
    return invalidBatch(`JSON-RPC batch too large (at most ${MAX_BATCH_SIZE} messages)`);
  return null;
}
