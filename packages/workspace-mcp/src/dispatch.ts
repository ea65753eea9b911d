/**
 * Hand-rolled JSON-RPC dispatch over an already parsed body. No SDK server objects: the only per-request
 * work for tools/list is the policy evaluation; the serialised list is cached per visible set.
 *
 * A message goes envelope.ts (is it well formed?) → revision.ts (which protocol revision serves it?) → `serve`
 * (the one method filter, span and error answer of both revisions) → the method's family in methods/.
 */
import { listTtlMs } from './cache-hints.js';
import type { ClientInfo, McpRequestContext, McpUsageEntry } from './context.js';
import {
  batchRefusal,
  fail,
  headerVersion,
  type Outcome,
  readMessage,
  unsupportedVersionError,
} from './envelope.js';
import { LISTEN_METHOD, listen } from './listen.js';
import {
  clientInfoFrom,
  DISCOVER_ERROR,
  discover,
  initialize,
  LIFECYCLE_METHODS,
  serverIdentity,
  tasksAvailable,
} from './methods/lifecycle.js';
import { PROMPT_METHODS } from './methods/prompts.js';
import { RESOURCE_METHODS } from './methods/resources.js';
import {
  type MethodHandler,
  makeScope,
  type Params,
  RawJson,
  type Scope,
  surfaceOf,
} from './methods/scope.js';
import { TASK_METHODS } from './methods/tasks.js';
import { TOOL_METHODS } from './methods/tools.js';
import {
  ACCEPTED,
  clip,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  errorResult,
  JSONRPC_INTERNAL_ERROR,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_METHOD_NOT_FOUND,
  type JsonRpcError,
  JsonRpcFailure,
  type JsonRpcId,
  type LegacyProtocolVersion,
  type McpHttpResult,
  MODERN_PROTOCOL_VERSION,
  type ProtocolVersion,
  rawResultParts,
  serializeRawResult,
  serializeResult,
} from './protocol.js';
import {
  classifyMessage,
  MODERN_METHODS,
  type ModernEnvelope,
  modernResult,
  modernResultJson,
} from './revision.js';
import { listenTaskIdsRefusal, tasksMethodRefusal } from './tasks-extension.js';
import { methodInfo, traceMethod } from './telemetry.js';

export { MAX_BATCH_SIZE } from './envelope.js';
export { toolsListSerialisationCount } from './surface.js';

// A Map, not an object: `constructor`, `toString` or `__proto__` must not resolve to anything.
const METHODS: ReadonlyMap<string, MethodHandler> = new Map<string, MethodHandler>([
  ...LIFECYCLE_METHODS,
  ...TOOL_METHODS,
  ...RESOURCE_METHODS,
  ...PROMPT_METHODS,
  ...TASK_METHODS,
  [LISTEN_METHOD, listen],
]);

export const SUPPORTED_METHODS: readonly string[] = Object.freeze(['initialize', ...METHODS.keys()]);

/**
 * Handles one POSTed JSON-RPC message or batch. The gateway has already authenticated the caller, checked
 * Content-Type/Accept/Origin, parsed the body (answering -32700 with `parseErrorResult()` when that failed)
 * and parsed the narrowing headers.
 */
export async function handleMcpMessage(body: unknown, ctx: McpRequestContext): Promise<McpHttpResult> {
  try {
    if (Array.isArray(body)) return await handleBatch(body, ctx);
    const outcome = await handleOne(body, ctx, false);
    if (outcome === null) return ACCEPTED;
    return outcome.parts
      ? { status: outcome.status, body: outcome.json, parts: outcome.parts }
      : { status: outcome.status, body: outcome.json };
  } catch (error) {
    // Method failures are answered per message; this only catches a broken hook or context.
    ctx.onError?.(error);
    return errorResult(200, null, { code: JSONRPC_INTERNAL_ERROR, message: 'Internal error' });
  }
}

async function handleBatch(batch: unknown[], ctx: McpRequestContext): Promise<McpHttpResult> {
  const refusal = batchRefusal(batch, ctx);
  if (refusal) return refusal;
  const parts: string[] = [];
  // Sequential on purpose: bounded concurrency per request, deterministic audit order.
  for (const message of batch) {
    const outcome = await handleOne(message, ctx, true);
    if (outcome !== null) parts.push(outcome.json);
  }
  return parts.length === 0 ? ACCEPTED : { status: 200, body: `[${parts.join(',')}]` };
}

/** A method name as usage records it: only names this server knows, so a caller cannot invent rows. */
function meteredMethod(method: string): string {
  return method === 'initialize' || method === 'server/discover' || METHODS.has(method)
    ? method
    : '(unknown)';
}

/** Tells the usage meter about one answered request; never lets the meter fail the request. */
function meter(
  ctx: McpRequestContext,
  started: number,
  entry: Omit<McpUsageEntry, 'durationMs' | 'clientName'>,
  client: ClientInfo | null | undefined = ctx.clientInfo,
): void {
  if (!ctx.meter) return;
  try {
    ctx.meter({ ...entry, durationMs: performance.now() - started, clientName: client?.name ?? null });
  } catch (error) {
    ctx.onError?.(error);
  }
}

/** An answer the dispatcher gave itself (no handler ran): a refusal unless said otherwise. */
function meterAnswer(
  ctx: McpRequestContext,
  started: number,
  method: string,
  outcome: Outcome,
  verdict: McpUsageEntry['outcome'] = 'error',
): Outcome {
  if (outcome !== null) meter(ctx, started, { method: meteredMethod(method), tool: null, outcome: verdict });
  return outcome;
}

async function handleOne(message: unknown, ctx: McpRequestContext, inBatch: boolean): Promise<Outcome> {
  const started = performance.now();
  const read = readMessage(message);
  if ('answer' in read) {
    if (read.answer !== null) meter(ctx, started, { method: '(invalid)', tool: null, outcome: 'error' });
    return read.answer;
  }
  const { id, method, params } = read;
  const era = classifyMessage(method, params, id !== null, {
    protocolVersion: ctx.protocolVersionHeader ?? null,
    method: ctx.mcpMethodHeader ?? null,
    name: ctx.mcpNameHeader ?? null,
  });
  if (era.kind === 'reject') return meterAnswer(ctx, started, method, fail(era.status, id, era.error));
  if (era.kind === 'modern') {
    if (id === null) return null;
    // server/discover opens no span: it only says what the endpoint serves.
    if (method === 'server/discover')
      return meterAnswer(
        ctx,
        started,
        method,
        modernRevision(ctx, era.envelope).answer(id, method, discover(ctx), inBatch),
        'ok',
      );
    return serve(method, params, id, modernRevision(ctx, era.envelope), ctx, inBatch);
  }

  if (method === 'server/discover') return meterAnswer(ctx, started, method, fail(400, id, DISCOVER_ERROR));
  if (method === 'initialize') {
    if (id === null) return null;
    if (inBatch)
      return meterAnswer(
        ctx,
        started,
        method,
        fail(200, id, {
          code: JSONRPC_INVALID_REQUEST,
          message: 'initialize must not be part of a JSON-RPC batch',
        }),
      );
    const info = {
      method,
      target: null,
      protocolVersion: null,
      requestId: id,
      resourceUri: null,
      single: true,
    };
    const result = await traceMethod(
      () => info,
      () => initialize(params, ctx),
      ctx.traceContext,
    );
    // The name the client gives now is the one its session carries from here on.
    meter(
      ctx,
      started,
      { method, tool: null, outcome: 'ok' },
      clientInfoFrom(params.clientInfo) ?? ctx.clientInfo,
    );
    return { status: 200, json: serializeResult(id, result) };
  }

  let version: LegacyProtocolVersion;
  if (inBatch) version = DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
  else {
    const v = headerVersion(ctx);
    if (typeof v !== 'string')
      return meterAnswer(ctx, started, method, fail(400, id, unsupportedVersionError(v.unsupported)));
    version = v;
  }
  // Notifications (no id) need no answer; nothing the client can notify changes server state.
  if (id === null) return null;
  return serve(method, params, id, legacyRevision(ctx, version), ctx, inBatch);
}

/** How one protocol revision serves a request: what it knows, how it says "not found", how it shapes a result. */
interface Revision {
  version: ProtocolVersion;
  knows(method: string): boolean;
  /** Whether this revision has Tasks (2025-11-25 experimental, 2026-07-28 extension). */
  speaksTasks: boolean;
  notFoundStatus: 200 | 404;
  /** A served method this request may not call (a client capability it did not declare): HTTP 400. */
  refusal(method: string, params: Params): JsonRpcError | null;
  scope(id: JsonRpcId): Scope;
  answer(id: JsonRpcId, method: string, result: unknown, inBatch: boolean): Outcome;
}

/** 2025 revisions: negotiated by initialize, named by the header; cached lists are written as cached bytes. */
function legacyRevision(ctx: McpRequestContext, version: LegacyProtocolVersion): Revision {
  return {
    version,
    knows: () => true,
    speaksTasks: version === '2025-11-25',
    notFoundStatus: 200,
    refusal: () => null,
    scope: (id) => makeScope(ctx, version, undefined, null, id),
    answer(id, _method, result, inBatch) {
      if (!(result instanceof RawJson)) return { status: 200, json: serializeResult(id, result) };
      const json = serializeRawResult(id, result.json);
      return result.bytes && !inBatch
        ? { status: 200, json, parts: rawResultParts(id, result.bytes) }
        : { status: 200, json };
    },
  };
}

/**
 * 2026-07-28: the envelope (already validated with the headers) gives the client; the same handlers answer, and
 * the result gets the fields that revision requires. An unknown (or removed: initialize, ping) method is HTTP 404.
 */
function modernRevision(ctx: McpRequestContext, envelope: ModernEnvelope | null): Revision {
  const server = serverIdentity(ctx);
  const listTtl = listTtlMs(surfaceOf(ctx), ctx);
  const clientInfo = envelope?.clientInfo ?? ctx.clientInfo ?? null;
  return {
    version: MODERN_PROTOCOL_VERSION,
    knows: (method) => MODERN_METHODS.has(method),
    speaksTasks: true,
    notFoundStatus: 404,
    // The Tasks extension's methods, and `taskIds` on a listen, need the extension declared on this very request.
    refusal: (method, params) =>
      tasksMethodRefusal(method, envelope?.clientCapabilities) ??
      (method === LISTEN_METHOD ? listenTaskIdsRefusal(params, envelope?.clientCapabilities) : null),
    scope: (id) => makeScope(ctx, MODERN_PROTOCOL_VERSION, clientInfo, envelope, id),
    answer: (id, method, result) => ({
      status: 200,
      json:
        result instanceof RawJson
          ? serializeRawResult(id, modernResultJson(method, result.json, server, listTtl))
          : serializeResult(id, modernResult(method, result as Params, server, listTtl)),
    }),
  };
}

/** The handler serving `method` for this caller under this revision, if it is served here at all. */
function servedHandler(
  method: string,
  revision: Revision,
  ctx: McpRequestContext,
): MethodHandler | undefined {
  const surface = surfaceOf(ctx);
  const served =
    revision.knows(method) &&
    (surface.servesResources || !method.startsWith('resources/')) &&
    (surface.servesPrompts || !method.startsWith('prompts/')) &&
    // Tasks exist only where the revision has them and the capability is advertised.
    (!method.startsWith('tasks/') || (revision.speaksTasks && tasksAvailable(surface, ctx))) &&
    // subscriptions/listen is 2026-07-28 only (2025 revisions had the GET stream and resources/subscribe).
    (method !== LISTEN_METHOD || revision.version === MODERN_PROTOCOL_VERSION);
  return served ? METHODS.get(method) : undefined;
}

/** The one path every method takes under either revision: the method filter, its span, and the error answer. */
async function serve(
  method: string,
  params: Params,
  id: JsonRpcId,
  revision: Revision,
  ctx: McpRequestContext,
  inBatch: boolean,
): Promise<Outcome> {
  const started = performance.now();
  const handler = servedHandler(method, revision, ctx);
  if (!handler)
    return meterAnswer(
      ctx,
      started,
      method,
      fail(revision.notFoundStatus, id, {
        code: JSONRPC_METHOD_NOT_FOUND,
        message: `Method not found: ${clip(method, 100)}`,
      }),
    );
  const refusal = revision.refusal(method, params);
  if (refusal) return meterAnswer(ctx, started, method, fail(400, id, refusal));
  const scope = revision.scope(id);
  let failed = false;
  try {
    const result = await traceMethod(
      () => methodInfo(method, params, surfaceOf(ctx), revision.version, id, !inBatch),
      () => handler(params, scope),
      ctx.traceContext,
    );
    return revision.answer(id, method, result, inBatch);
  } catch (error) {
    failed = true;
    if (error instanceof JsonRpcFailure) return fail(200, id, error.toError());
    ctx.onError?.(error);
    return fail(200, id, { code: JSONRPC_INTERNAL_ERROR, message: 'Internal error' });
  } finally {
    // An audited call's verdict (a tool error result, a block) when it has one; a thrown failure is an error.
    meter(
      ctx,
      started,
      { method, tool: scope.verdict.tool, outcome: failed ? 'error' : scope.verdict.outcome },
      scope.clientInfo,
    );
  }
}
