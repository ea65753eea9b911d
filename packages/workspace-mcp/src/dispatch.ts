/**
 * Hand-rolled JSON-RPC dispatch over an already parsed body. No SDK server objects: the only per-request
 * work for tools/list is the policy evaluation; the serialised list is cached per visible set.
 */
import { isAppError } from '@flowgate/core';
import { closest } from '@flowgate/flows';
import type { RunRecord } from '@flowgate/workspace';
import { argumentIssues } from './args.js';
import {
  auditPreview,
  auditText,
  maskSecretInputs,
  type SecretArgPaths,
  storableText,
} from './audit-preview.js';
import { CATALOG_TOOLS, hiddenCatalogTools } from './catalog.js';
import {
  type ClientInfo,
  DEFAULT_PUBLIC_BASE_URL,
  DEFAULT_SERVER_VERSION,
  type McpAuditEntry,
  type McpRequestContext,
  SERVER_NAME,
  SERVER_TITLE,
  type ToolContext,
} from './context.js';
import { type CursorCodec, createCursorCodec, paginate } from './cursor.js';
import { guideDescriptions, guideMarkdown, guideProse } from './guidance.js';
import { LIMITS } from './limits.js';
import {
  classifyMessage,
  discoverResult,
  hasEnvelopeClaim,
  type ModernEnvelope,
  modernResult,
  modernResultJson,
} from './modern.js';
import { type Narrowing, parseNarrowingParams } from './narrowing.js';
import { describeBlockers, evaluateTool, visibilityKey } from './policy.js';
import { PROMPT_ARGUMENT_MAX_CHARS, promptDescriptor, visiblePrompts } from './prompts.js';
import {
  ACCEPTED,
  adaptContentForVersion,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  encodeRawResult,
  errorResult,
  invalidParams,
  isSupportedProtocolVersion,
  JSONRPC_INTERNAL_ERROR,
  JSONRPC_INVALID_PARAMS,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_METHOD_NOT_FOUND,
  type JsonRpcError,
  JsonRpcFailure,
  type JsonRpcId,
  LATEST_PROTOCOL_VERSION,
  type McpHttpResult,
  MODERN_PROTOCOL_VERSION,
  type ProtocolVersion,
  SUPPORTED_PROTOCOL_VERSIONS,
  serializeError,
  serializeRawResult,
  serializeResult,
} from './protocol.js';
import { listResources, listResourceTemplates, readResource } from './resources.js';
import {
  type CallToolResult,
  DEFAULT_MAX_RESULT_BYTES,
  successResult,
  errorResult as toolErrorResult,
} from './result.js';
import type { Blocker, ToolErrorContent } from './schemas.js';
import { type McpSurface, WORKSPACE_SURFACE } from './surface.js';
import {
  declaresTasksExtension,
  isExpired,
  isTerminal,
  openTaskId,
  RELATED_TASK_META,
  sealTaskId,
  settlingTool,
  TASK_RESULT_MAX_WAIT_MS,
  TASKS_CAPABILITY_V1,
  TASKS_EXTENSION_ID,
  TASKS_PAGE_SIZE,
  type TaskGeneration,
  taskCodec,
  taskStatusOf,
  taskV1,
  taskV2,
  waitForEnd,
} from './tasks.js';
import { methodInfo, reportToolCall, traceMethod, traceToolExecution } from './telemetry.js';
import { type AnyToolDefinition, InvalidArguments, ToolFailure, type ToolOutcome } from './tool.js';
import { TooManyWaits } from './waits.js';

/** Batches larger than this are refused as a whole (bounded work per HTTP request). */
export const MAX_BATCH_SIZE = 32;

const WORKSPACE_CAPABILITIES = Object.freeze({ tools: {}, resources: {}, prompts: {} });
const TOOLS_ONLY_CAPABILITIES = Object.freeze({ tools: {} });

export { toolsListSerialisationCount } from './surface.js';

type Params = Record<string, unknown>;

interface Scope extends ToolContext {
  readonly clientInfo: ClientInfo | null;
  readonly surface: McpSurface;
  /**
   * The Tasks generation this request speaks (null: none), and whether it asks for tasks on run-starting tools
   * (2026-07-28: the extension declared in the request's envelope; 2025-11-25 asks per call with `params.task`).
   */
  readonly tasks: { generation: TaskGeneration; declared: boolean } | null;
  /** Seals and opens task ids and tasks/list cursors (bound to workspace and principal). */
  readonly taskIds: CursorCodec;
  /** The secret-typed flow inputs in this message's tool arguments, as run starts told them. */
  readonly secretArgs: {
    note(names: readonly string[], under: string | null): void;
    readonly paths: SecretArgPaths[];
  };
}

/** A method result that is already serialised JSON. */
class RawJson {
  constructor(
    readonly json: string,
    /** The same JSON as UTF-8 when cached that way. */
    readonly bytes?: Uint8Array,
  ) {}
}

type MethodHandler = (params: Params, scope: Scope) => Promise<unknown> | unknown;

type Outcome = { status: 200 | 400 | 404; json: string; encoded?: Uint8Array<ArrayBuffer> } | null;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isValidId(id: unknown): id is JsonRpcId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

function truncate(value: string, max: number): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

function elapsed(start: number): number {
  return Math.max(0, Math.round(performance.now() - start));
}

/** Resolves the protocol version of a non-initialize request from `MCP-Protocol-Version`. */
function headerVersion(ctx: McpRequestContext): ProtocolVersion | { unsupported: string } {
  const raw = ctx.protocolVersionHeader?.trim();
  if (!raw) return DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
  return isSupportedProtocolVersion(raw) ? raw : { unsupported: raw };
}

function unsupportedVersionError(value: string): JsonRpcError {
  return {
    code: JSONRPC_INVALID_REQUEST,
    message: `Unsupported MCP-Protocol-Version ${JSON.stringify(truncate(value, 40))}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
    data: { supported: [...SUPPORTED_PROTOCOL_VERSIONS] },
  };
}

const DISCOVER_ERROR: JsonRpcError = {
  code: JSONRPC_METHOD_NOT_FOUND,
  message: `server/discover is a ${MODERN_PROTOCOL_VERSION} method: send it with the _meta keys io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities, or use initialize with one of ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}.`,
  data: { supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS] },
};

function makeScope(
  ctx: McpRequestContext,
  version: ProtocolVersion,
  clientInfo: ClientInfo | null = ctx.clientInfo ?? null,
  envelope: ModernEnvelope | null = null,
): Scope {
  // Experimental Tasks arrived with 2025-11-25; 2026-07-28 carries them as an extension.
  const tasks =
    version === MODERN_PROTOCOL_VERSION
      ? { generation: 'v2' as const, declared: declaresTasksExtension(envelope?.clientCapabilities) }
      : version === '2025-11-25'
        ? { generation: 'v1' as const, declared: false }
        : null;
  // The use cases and codecs are built on first use: list calls and ping need none of them.
  let taskIds: CursorCodec | undefined;
  let cursors: CursorCodec | undefined;
  const secretPaths: SecretArgPaths[] = [];
  return {
    tasks,
    secretArgs: { note: (names, under) => secretPaths.push({ under, names }), paths: secretPaths },
    get taskIds() {
      taskIds ??= taskCodec(ctx.workspaceId, ctx.principal, ctx.cursorKey);
      return taskIds;
    },
    request: ctx,
    get workspace() {
      return ctx.workspace;
    },
    catalog: CATALOG_TOOLS,
    surface: ctx.surface ?? WORKSPACE_SURFACE,
    protocolVersion: version,
    get cursors() {
      cursors ??= createCursorCodec(ctx.workspaceId, ctx.cursorKey);
      return cursors;
    },
    publicBaseUrl: ctx.publicBaseUrl ?? DEFAULT_PUBLIC_BASE_URL,
    serverVersion: ctx.serverVersion ?? DEFAULT_SERVER_VERSION,
    clientInfo,
  };
}

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
    return outcome.encoded
      ? { status: outcome.status, body: outcome.json, encoded: outcome.encoded }
      : { status: outcome.status, body: outcome.json };
  } catch (error) {
    // Method failures are answered per message; this only catches a broken hook or context.
    ctx.onError?.(error);
    return errorResult(200, null, { code: JSONRPC_INTERNAL_ERROR, message: 'Internal error' });
  }
}

async function handleBatch(batch: unknown[], ctx: McpRequestContext): Promise<McpHttpResult> {
  // 2026-07-28 has no batches; one modern element makes the whole batch invalid rather than half-served.
  if (batch.some((m) => isPlainObject(m) && hasEnvelopeClaim(m.params)))
    return errorResult(400, null, {
      code: JSONRPC_INVALID_REQUEST,
      message: `JSON-RPC batches may not contain ${MODERN_PROTOCOL_VERSION} requests`,
    });
  const version = headerVersion(ctx);
  if (typeof version !== 'string')
    return errorResult(400, null, unsupportedVersionError(version.unsupported));
  if (version !== '2025-03-26') {
    return errorResult(400, null, {
      code: JSONRPC_INVALID_REQUEST,
      message: `JSON-RPC batches are not supported in protocol version ${version} (only 2025-03-26)`,
    });
  }
  if (batch.length === 0)
    return errorResult(400, null, { code: JSONRPC_INVALID_REQUEST, message: 'Empty JSON-RPC batch' });
  if (batch.length > MAX_BATCH_SIZE) {
    return errorResult(400, null, {
      code: JSONRPC_INVALID_REQUEST,
      message: `JSON-RPC batch too large (at most ${MAX_BATCH_SIZE} messages)`,
    });
  }
  const parts: string[] = [];
  // Sequential on purpose: bounded concurrency per request, deterministic audit order.
  for (const message of batch) {
    const outcome = await handleOne(message, ctx, true);
    if (outcome !== null) parts.push(outcome.json);
  }
  return parts.length === 0 ? ACCEPTED : { status: 200, body: `[${parts.join(',')}]` };
}

function fail(status: 200 | 400, id: JsonRpcId | null, error: JsonRpcError): Outcome {
  return { status, json: serializeError(id, error) };
}

async function handleOne(message: unknown, ctx: McpRequestContext, inBatch: boolean): Promise<Outcome> {
  if (!isPlainObject(message))
    return fail(400, null, {
      code: JSONRPC_INVALID_REQUEST,
      message: 'Invalid Request: expected a JSON-RPC object',
    });
  const hasId = 'id' in message && message.id !== undefined;
  const id = hasId && isValidId(message.id) ? message.id : null;
  if (message.jsonrpc !== '2.0')
    return fail(400, id, {
      code: JSONRPC_INVALID_REQUEST,
      message: 'Invalid Request: jsonrpc must be "2.0"',
    });
  if (hasId && id === null) {
    return fail(400, null, {
      code: JSONRPC_INVALID_REQUEST,
      message: 'Invalid Request: id must be a string or a number',
    });
  }
  if (!('method' in message)) {
    // A response posted by the client (we never send requests, but accepting it is what the protocol asks).
    if (hasId && ('result' in message || 'error' in message)) return null;
    return fail(400, id, { code: JSONRPC_INVALID_REQUEST, message: 'Invalid Request: method is missing' });
  }
  const method = message.method;
  if (typeof method !== 'string' || method.length === 0) {
    return fail(400, id, {
      code: JSONRPC_INVALID_REQUEST,
      message: 'Invalid Request: method must be a non-empty string',
    });
  }
  const rawParams = message.params;
  if (rawParams !== undefined && !isPlainObject(rawParams)) {
    if (!hasId) return null;
    return fail(200, id, {
      code: JSONRPC_INVALID_PARAMS,
      message: 'Invalid params: params must be an object',
    });
  }
  const params: Params = rawParams ?? {};

  const era = classifyMessage(method, params, hasId, {
    protocolVersion: ctx.protocolVersionHeader ?? null,
    method: ctx.mcpMethodHeader ?? null,
    name: ctx.mcpNameHeader ?? null,
  });
  if (era.kind === 'reject') return fail(era.status, id, era.error);
  if (era.kind === 'modern')
    return hasId ? handleModern(method, params, id as JsonRpcId, era.envelope, ctx, inBatch) : null;

  if (method === 'server/discover') return fail(400, id, DISCOVER_ERROR);

  if (method === 'initialize') {
    if (!hasId) return null;
    if (inBatch)
      return fail(200, id, {
        code: JSONRPC_INVALID_REQUEST,
        message: 'initialize must not be part of a JSON-RPC batch',
      });
    const result = await traceMethod(
      {
        method,
        target: null,
        protocolVersion: null,
        requestId: id as JsonRpcId,
        resourceUri: null,
        single: true,
      },
      async () => initialize(params, ctx),
    );
    return { status: 200, json: serializeResult(id as JsonRpcId, result) };
  }

  let version: ProtocolVersion;
  if (inBatch) version = DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
  else {
    const v = headerVersion(ctx);
    if (typeof v !== 'string') return fail(400, id, unsupportedVersionError(v.unsupported));
    version = v;
  }

  // Notifications (no id) need no answer; nothing the client can notify changes server state.
  if (!hasId) return null;
  const requestId = id as JsonRpcId;

  // A Map, not an object: `constructor`, `toString` or `__proto__` must not resolve to anything.
  const surface = ctx.surface ?? WORKSPACE_SURFACE;
  const served =
    (surface.servesResources || !method.startsWith('resources/')) &&
    (surface.servesPrompts || !method.startsWith('prompts/')) &&
    // Tasks exist from 2025-11-25 on, and only where the capability is advertised.
    (!method.startsWith('tasks/') || (version === '2025-11-25' && tasksAvailable(surface, ctx)));
  const handler = served ? METHODS.get(method) : undefined;
  if (!handler)
    return fail(200, requestId, {
      code: JSONRPC_METHOD_NOT_FOUND,
      message: `Method not found: ${truncate(method, 100)}`,
    });
  try {
    const result = await traceMethod(
      methodInfo(method, params, surface, version, requestId, !inBatch),
      async () => handler(params, makeScope(ctx, version)),
    );
    if (result instanceof RawJson) {
      const json = serializeRawResult(requestId, result.json);
      return result.bytes && !inBatch
        ? { status: 200, json, encoded: encodeRawResult(requestId, result.bytes) }
        : { status: 200, json };
    }
    return { status: 200, json: serializeResult(requestId, result) };
  } catch (error) {
    if (error instanceof JsonRpcFailure) return fail(200, requestId, error.toError());
    ctx.onError?.(error);
    return fail(200, requestId, { code: JSONRPC_INTERNAL_ERROR, message: 'Internal error' });
  }
}

// ---- 2026-07-28 -----------------------------------------------------------------------------------------

/** Methods of the 2026-07-28 registry we serve; `initialize` and `ping` no longer exist there. */
const MODERN_METHODS: ReadonlySet<string> = new Set([
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
  'tasks/cancel',
]);

function serverIdentity(ctx: McpRequestContext) {
  return { name: SERVER_NAME, title: SERVER_TITLE, version: ctx.serverVersion ?? DEFAULT_SERVER_VERSION };
}

function capabilitiesOf(ctx: McpRequestContext): Record<string, unknown> {
  const surface = ctx.surface ?? WORKSPACE_SURFACE;
  const base = surface.servesResources ? WORKSPACE_CAPABILITIES : TOOLS_ONLY_CAPABILITIES;
  return tasksAvailable(surface, ctx) ? { ...base, extensions: { [TASKS_EXTENSION_ID]: {} } } : base;
}

/** Tasks are offered only where the caller can call a run-starting tool (flows.run, policy and narrowing). */
function tasksAvailable(surface: McpSurface, ctx: McpRequestContext): boolean {
  return surface.tools.some((t) => t.task !== undefined && evaluateTool(t, ctx).visible);
}

/**
 * One request under 2026-07-28: the envelope (already validated with the headers) gives the version and the
 * client; the same handlers answer, and the result gets the fields that revision requires.
 */
async function handleModern(
  method: string,
  params: Params,
  requestId: JsonRpcId,
  envelope: ModernEnvelope | null,
  ctx: McpRequestContext,
  inBatch: boolean,
): Promise<Outcome> {
  const server = serverIdentity(ctx);
  if (method === 'server/discover') {
    const result = discoverResult({
      capabilities: capabilitiesOf(ctx),
      server,
      instructions: instructionsFor(ctx),
    });
    return { status: 200, json: serializeResult(requestId, modernResult(method, result, server)) };
  }
  const surface = ctx.surface ?? WORKSPACE_SURFACE;
  const served =
    MODERN_METHODS.has(method) &&
    (surface.servesResources || !method.startsWith('resources/')) &&
    (surface.servesPrompts || !method.startsWith('prompts/')) &&
    (!method.startsWith('tasks/') || tasksAvailable(surface, ctx));
  const handler = served ? METHODS.get(method) : undefined;
  // 2026-07-28 answers an unknown (or removed: initialize, ping) method with HTTP 404; 2025 keeps 200.
  if (!handler)
    return {
      status: 404,
      json: serializeError(requestId, {
        code: JSONRPC_METHOD_NOT_FOUND,
        message: `Method not found: ${truncate(method, 100)}`,
      }),
    };
  const clientInfo = envelope?.clientInfo ?? ctx.clientInfo ?? null;
  try {
    const result = await traceMethod(
      methodInfo(method, params, surface, MODERN_PROTOCOL_VERSION, requestId, !inBatch),
      async () => handler(params, makeScope(ctx, MODERN_PROTOCOL_VERSION, clientInfo, envelope)),
    );
    return {
      status: 200,
      json:
        result instanceof RawJson
          ? serializeRawResult(requestId, modernResultJson(method, result.json, server))
          : serializeResult(requestId, modernResult(method, result as Record<string, unknown>, server)),
    };
  } catch (error) {
    if (error instanceof JsonRpcFailure) return fail(200, requestId, error.toError());
    ctx.onError?.(error);
    return fail(200, requestId, { code: JSONRPC_INTERNAL_ERROR, message: 'Internal error' });
  }
}

// ---- initialize ---------------------------------------------------------------------------------------

/** The instructions for the caller's visible set (tools/list names the same tools). */
function instructionsFor(ctx: McpRequestContext): string {
  const surface = ctx.surface ?? WORKSPACE_SURFACE;
  return surface.instructions(ctx.workspaceId, visibilityKey(surface.tools, ctx));
}

function clientInfoFrom(value: unknown): ClientInfo | null {
  if (!isPlainObject(value) || typeof value.name !== 'string') return null;
  return {
    name: truncate(value.name, 200),
    version: typeof value.version === 'string' ? truncate(value.version, 100) : null,
  };
}

function initialize(params: Params, ctx: McpRequestContext): unknown {
  const requested = typeof params.protocolVersion === 'string' ? params.protocolVersion : null;
  const negotiated =
    requested !== null && isSupportedProtocolVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
  const clientInfo = clientInfoFrom(params.clientInfo) ?? ctx.clientInfo ?? null;
  try {
    ctx.onInitialize?.({
      clientInfo,
      requestedVersion: requested === null ? null : truncate(requested, 40),
      negotiatedVersion: negotiated,
    });
  } catch (error) {
    // A logging hook must not break the handshake.
    ctx.onError?.(error);
  }
  const version = ctx.serverVersion ?? DEFAULT_SERVER_VERSION;
  // Implementation.title arrived with 2025-06-18.
  const serverInfo =
    negotiated === '2025-03-26'
      ? { name: SERVER_NAME, version }
      : { name: SERVER_NAME, title: SERVER_TITLE, version };
  const surface = ctx.surface ?? WORKSPACE_SURFACE;
  const base = surface.servesResources ? WORKSPACE_CAPABILITIES : TOOLS_ONLY_CAPABILITIES;
  return {
    protocolVersion: negotiated,
    capabilities:
      negotiated === '2025-11-25' && tasksAvailable(surface, ctx)
        ? { ...base, tasks: TASKS_CAPABILITY_V1 }
        : base,
    serverInfo,
    instructions: instructionsFor(ctx),
  };
}

// ---- tools --------------------------------------------------------------------------------------------

function narrowingFromParams(params: Params, surface: McpSurface): Narrowing | null {
  const parsed = parseNarrowingParams(params, surface.toolNames);
  if (parsed === null) return null;
  if (!parsed.ok)
    throw invalidParams(parsed.error.message, { unknown: parsed.error.unknown, valid: parsed.error.valid });
  return parsed.narrowing;
}

function listTools(params: Params, scope: Scope): RawJson | unknown {
  const surface = scope.surface;
  const extra = narrowingFromParams(params, surface);
  const key = visibilityKey(surface.tools, scope.request, extra);
  if (params.cursor === undefined) {
    const { json, bytes } = surface.toolsList(key);
    return new RawJson(json, bytes);
  }
  // Every list fits one page, so no cursor is ever issued; a cursor is checked anyway and refused when bad.
  const hidden = surface.hiddenFor(key);
  const descriptors = surface.tools
    .filter((_, i) => key[i] === '1')
    .map((t) => guideDescriptions(t.descriptor, hidden));
  const page = paginate(descriptors, scope.cursors, 'tools/list', params.cursor, 100);
  if (!page) throw invalidParams('Invalid cursor');
  return page.nextCursor ? { tools: page.items, nextCursor: page.nextCursor } : { tools: page.items };
}

function reasonFrom(params: Params): string | null {
  const meta = params._meta;
  if (!isPlainObject(meta) || typeof meta.reason !== 'string') return null;
  const reason = meta.reason.trim();
  return reason ? auditText(reason, LIMITS.reasonMaxChars) || null : null;
}

/** Most resource URIs one audit entry keeps (a tool reports a handful; more is a bug or noise). */
const AUDIT_MAX_RESOURCE_URIS = 20;

function audit(
  scope: Scope,
  entry: Omit<McpAuditEntry, 'clientName' | 'clientVersion' | 'protocolVersion'>,
): void {
  const sink = scope.request.audit;
  if (!sink) return;
  const client = scope.clientInfo;
  try {
    // Every client-influenced string is bounded, redacted and storable here, whatever the call site did.
    sink({
      ...entry,
      action: auditText(entry.action, LIMITS.resourceUriMaxChars),
      errorCode: entry.errorCode === null ? null : storableText(entry.errorCode),
      resourceUris: entry.resourceUris
        .slice(0, AUDIT_MAX_RESOURCE_URIS)
        .map((uri) => auditText(uri, LIMITS.resourceUriMaxChars)),
      clientName: client ? auditText(client.name, 200) : null,
      clientVersion: client?.version ? auditText(client.version, 100) : null,
      protocolVersion: scope.protocolVersion,
    });
  } catch (error) {
    // Auditing must never turn a served call into a failure; the gateway's sink reports its own trouble.
    scope.request.onError?.(error);
  }
}

/** The cap on each side of one tools/call result, in bytes (the gateway's `FLOWGATE_MCP_MAX_RESULT_BYTES`). */
function maxResultBytes(scope: Scope): number {
  return scope.request.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
}

function toolError(content: ToolErrorContent, maxBytes = DEFAULT_MAX_RESULT_BYTES): CallToolResult {
  return toolErrorResult(content, maxBytes);
}

export function blockedResult(tool: string, blockers: Blocker[]): CallToolResult {
  const message = describeBlockers(tool, blockers);
  return toolError({ error: { code: 'tool_blocked', message }, details: { tool, blockers } });
}

function invalidArgumentsResult(tool: string, issues: { path: string; message: string }[]): CallToolResult {
  const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  return toolError({
    error: { code: 'invalid_arguments', message: `Invalid arguments for ${tool}: ${summary}` },
    details: { issues },
  });
}

/** The verdict of one call: what the client gets, and what the audit records. */
interface CallVerdict {
  /** A CallToolResult, or for a task-augmented call the created task. */
  result: CallToolResult | Record<string, unknown>;
  outcome: McpAuditEntry['outcome'];
  errorCode: string | null;
  blockers: Blocker[] | null;
  runId: string | null;
  resourceUris: string[];
}

function failed(result: CallToolResult, errorCode: string): CallVerdict {
  return { result, outcome: 'error', errorCode, blockers: null, runId: null, resourceUris: [] };
}

/**
 * Runs a visible tool's handler and turns every expected failure into an `isError` result. With `task`, the tool's
 * task support starts the run and the answer is the task; failures before the start are answered as without it.
 */
async function runTool(
  tool: AnyToolDefinition,
  args: unknown,
  scope: Scope,
  asTask = false,
): Promise<CallVerdict> {
  const parsed = tool.input.safeParse(args);
  if (!parsed.success)
    return failed(
      invalidArgumentsResult(tool.name, argumentIssues(tool.input, parsed.error)),
      'invalid_arguments',
    );
  let outcome: ToolOutcome<unknown>;
  try {
    if (asTask && tool.task) return await createTask(tool, parsed.data, scope);
    outcome = await tool.handler(parsed.data, scope);
  } catch (error) {
    if (error instanceof InvalidArguments) {
      return failed(invalidArgumentsResult(tool.name, error.issues), 'invalid_arguments');
    }
    if (isAppError(error) && error.code === 'invalid_cursor') {
      return failed(
        invalidArgumentsResult(tool.name, [{ path: 'cursor', message: error.message }]),
        'invalid_arguments',
      );
    }
    if (error instanceof TooManyWaits) {
      return failed(
        toolError(
          {
            error: { code: error.code, message: error.message },
            details: { bound: error.scope, limit: error.limit },
          },
          maxResultBytes(scope),
        ),
        error.code,
      );
    }
    if (error instanceof ToolFailure) {
      return failed(
        toolError(
          { error: { code: error.code, message: error.message }, details: error.details },
          maxResultBytes(scope),
        ),
        error.code,
      );
    }
    if (isAppError(error)) {
      const content: ToolErrorContent = error.issues
        ? { error: { code: error.code, message: error.message }, details: { issues: error.issues } }
        : { error: { code: error.code, message: error.message } };
      return failed(toolError(content, maxResultBytes(scope)), error.code);
    }
    throw error;
  }
  return finishOutcome(tool, outcome, scope);
}

/** Turns a handler's outcome into the bounded CallToolResult (result.ts): the one path every tool answer takes. */
function finishOutcome(tool: AnyToolDefinition, outcome: ToolOutcome<unknown>, scope: Scope): CallVerdict {
  // Clients validate structuredContent against the advertised schema; never send what would fail there.
  const checked = tool.output.safeParse(outcome.output);
  if (!checked.success) {
    throw new Error(`${tool.name} produced output that does not match its schema: ${checked.error.message}`);
  }
  const extra = outcome.content ? adaptContentForVersion(outcome.content, scope.protocolVersion) : [];
  const bound = outcome.bound;
  const result = successResult({
    tool: tool.name,
    output: outcome.output as Record<string, unknown>,
    resourceUri: outcome.resultUri ?? null,
    extra,
    maxBytes: maxResultBytes(scope),
    bound: bound ? (budget) => bound(budget) as Record<string, unknown> | null : undefined,
    valid: (output) => tool.output.safeParse(output).success,
  });
  // The tool ran (a mutating one did its work) but its answer was withheld: audited as that error.
  const withheld = result.isError === true;
  return {
    result,
    outcome: withheld ? 'error' : 'ok',
    errorCode: withheld ? 'result_too_large' : null,
    blockers: null,
    runId: outcome.runId ?? null,
    resourceUris: outcome.resourceUris ?? [],
  };
}

/**
 * Whether this call asks for a task: 2025-11-25 per call (`params.task`; its `ttl` is overridden by TASK_TTL_MS, as
 * the receiver may), 2026-07-28 by the declared extension.
 */
function wantsTask(params: Params, scope: Scope): boolean {
  if (scope.tasks === null) return false;
  if (scope.tasks.generation === 'v2') return scope.tasks.declared;
  return isPlainObject(params.task);
}

async function createTask(tool: AnyToolDefinition, args: unknown, scope: Scope): Promise<CallVerdict> {
  const support = tool.task;
  if (!support) throw new Error(`${tool.name} has no task support`);
  const { run } = await support.start(args, scope);
  const taskId = sealTaskId(scope.taskIds, run.id);
  const result =
    scope.tasks?.generation === 'v2'
      ? { ...taskV2(taskId, run), resultType: 'task' }
      : { task: taskV1(taskId, run) };
  return { result, outcome: 'ok', errorCode: null, blockers: null, runId: run.id, resourceUris: [] };
}

async function callTool(params: Params, scope: Scope): Promise<CallToolResult | Record<string, unknown>> {
  const start = performance.now();
  const name = params.name;
  if (typeof name !== 'string' || name.length === 0) throw invalidParams('params.name must be a tool name');
  const args = params.arguments === undefined || params.arguments === null ? {} : params.arguments;
  // Every call is audited exactly once, here, whatever happens below.
  let verdict: CallVerdict | null = null;
  let errorCode = 'internal_error';
  const task = wantsTask(params, scope);
  let asTask = false;
  try {
    const tool = scope.surface.find(name);
    if (!tool) {
      errorCode = 'unknown_tool';
      const near = closest(
        name,
        scope.surface.tools.map((t) => t.name),
      );
      throw invalidParams(
        `Unknown tool: ${truncate(name, 128)}${near === undefined ? '' : `; did you mean ${near}?`}`,
        near === undefined ? { tool: truncate(name, 128) } : { tool: truncate(name, 128), didYouMean: near },
      );
    }
    const evaluation = evaluateTool(tool, scope.request);
    // A tool without task support is answered as usual (it never advertised `execution.taskSupport`).
    asTask = task && tool.task !== undefined;
    verdict = evaluation.visible
      ? await traceToolExecution(tool.name, () => runTool(tool, args, scope, asTask))
      : {
          result: blockedResult(tool.name, evaluation.blockers),
          outcome: 'blocked',
          errorCode: 'tool_blocked',
          blockers: evaluation.blockers,
          runId: null,
          resourceUris: [],
        };
    return verdict.result;
  } finally {
    reportToolCall(
      verdict ? name : null,
      verdict?.outcome ?? 'error',
      verdict ? verdict.errorCode : errorCode,
      verdict?.blockers?.map((b) => b.reason) ?? [],
    );
    audit(scope, {
      // A task-augmented call is the task's creation: its own kind, with the run it started.
      kind: asTask ? 'tasks/create' : 'tools/call',
      action: auditText(name, 128),
      // Bounded before anything else touches the unvalidated arguments (redaction is not linear on hostile text).
      // Secret-typed flow inputs go first, whatever their names: key-name redaction alone would keep `pw`.
      arguments: auditArguments(args, scope.secretArgs.paths),
      reason: reasonFrom(params),
      outcome: verdict?.outcome ?? 'error',
      errorCode: verdict ? verdict.errorCode : errorCode,
      blockers: verdict?.blockers ?? null,
      resourceUris: verdict?.resourceUris ?? [],
      runId: verdict?.runId ?? null,
      durationMs: elapsed(start),
    });
  }
}

function auditArguments(args: unknown, secretPaths: readonly SecretArgPaths[]): unknown {
  const masked = maskSecretInputs(args, secretPaths);
  return auditPreview(masked.args, masked.knownSecrets);
}

// ---- tasks (tasks.ts) -----------------------------------------------------------------------------------

interface LoadedTask {
  taskId: string;
  run: RunRecord;
  tool: AnyToolDefinition;
}

function taskNotFound(taskId: unknown): JsonRpcFailure {
  return invalidParams(
    'Task not found',
    typeof taskId === 'string' ? { taskId: truncate(taskId, 300) } : undefined,
  );
}

/** The task a request names; expired, foreign, forged and unknown ids all answer the same "not found". */
async function loadTask(params: Params, scope: Scope): Promise<LoadedTask> {
  const taskId = params.taskId;
  if (typeof taskId !== 'string' || taskId.length === 0)
    throw invalidParams('params.taskId must be a task id');
  const runId = openTaskId(scope.taskIds, taskId);
  if (!runId) throw taskNotFound(taskId);
  const run = await scope.workspace.runs.get(runId);
  if (!run || isExpired(run, Date.now())) throw taskNotFound(taskId);
  const tool = settlingTool(scope.surface, run);
  if (!tool) throw taskNotFound(taskId);
  return { taskId, run, tool };
}

/** The final answer of a task: the bounded CallToolResult its tool gives for the run as it is now. */
async function settledResult(
  task: LoadedTask,
  scope: Scope,
): Promise<CallToolResult | Record<string, unknown>> {
  const support = task.tool.task;
  if (!support) throw new Error(`${task.tool.name} has no task support`);
  return finishOutcome(task.tool, await support.settle(task.run, scope), scope).result;
}

async function getTask(params: Params, scope: Scope): Promise<unknown> {
  const task = await loadTask(params, scope);
  if (scope.tasks?.generation !== 'v2') return taskV1(task.taskId, task.run);
  // 2026-07-28: the outcome comes with the task once it is final (there is no tasks/result).
  const base = taskV2(task.taskId, task.run);
  const status = taskStatusOf(task.run.status);
  if (status === 'completed')
    return { ...base, result: { resultType: 'complete', ...(await settledResult(task, scope)) } };
  if (status === 'failed') {
    const error = task.run.error ?? { code: task.run.status, message: `run ${task.run.status}` };
    return {
      ...base,
      error: {
        code: JSONRPC_INTERNAL_ERROR,
        message: `Run ${task.run.id} ${task.run.status}: ${error.message}`,
        data: { runId: task.run.id, status: task.run.status, error },
      },
    };
  }
  return base;
}

/** 2025-11-25 tasks/result: waits (bounded) for the end, then the tool's own result for the run. */
async function taskResult(params: Params, scope: Scope): Promise<unknown> {
  const task = await loadTask(params, scope);
  let run: RunRecord;
  try {
    run = await waitForEnd(scope, task.run, TASK_RESULT_MAX_WAIT_MS);
  } catch (error) {
    if (!(error instanceof TooManyWaits)) throw error;
    throw new JsonRpcFailure(JSONRPC_INVALID_REQUEST, error.message, {
      code: error.code,
      bound: error.scope,
      limit: error.limit,
      taskId: task.taskId,
    });
  }
  if (!isTerminal(taskStatusOf(run.status)))
    // Never held past the bound: the client polls tasks/get and asks again.
    throw new JsonRpcFailure(JSONRPC_INVALID_REQUEST, 'Task is still working; poll tasks/get and ask again', {
      taskId: task.taskId,
      status: 'working',
    });
  const result = await settledResult({ ...task, run }, scope);
  return { ...result, _meta: { [RELATED_TASK_META]: { taskId: task.taskId } } };
}

const TASKS_LIST_KIND = 'tasks/list';

/** The caller's own runs in this workspace (this flow's, on a per-flow endpoint), newest first, unexpired. */
async function listTasks(params: Params, scope: Scope): Promise<unknown> {
  let after: string | null = null;
  if (params.cursor !== undefined) {
    const position = scope.taskIds.open(TASKS_LIST_KIND, params.cursor);
    if (typeof position !== 'string') throw invalidParams('Invalid cursor');
    after = position;
  }
  let page: Awaited<ReturnType<typeof scope.workspace.runs.list>>;
  try {
    page = await scope.workspace.runs.list({
      limit: TASKS_PAGE_SIZE,
      after,
      status: null,
      flowSlug: scope.surface.flowSlug,
      mine: true,
    });
  } catch (error) {
    if (isAppError(error) && error.code === 'invalid_cursor') throw invalidParams('Invalid cursor');
    throw error;
  }
  const now = Date.now();
  // Newest first: the first expired run ends the list (every later one is older).
  const live = page.items.filter((run) => !isExpired(run, now));
  const tasks = live
    .filter((run) => settlingTool(scope.surface, run) !== null)
    .map((run) => taskV1(sealTaskId(scope.taskIds, run.id), run));
  const more = page.nextAfter !== null && live.length === page.items.length;
  return more
    ? { tasks, nextCursor: scope.taskIds.seal(TASKS_LIST_KIND, page.nextAfter as string) }
    : { tasks };
}

async function cancelTask(params: Params, scope: Scope): Promise<unknown> {
  const start = performance.now();
  let runId: string | null = null;
  let errorCode: string | null = 'internal_error';
  try {
    const task = await loadTask(params, scope).catch((error: unknown) => {
      errorCode = 'not_found';
      throw error;
    });
    runId = task.run.id;
    const status = taskStatusOf(task.run.status);
    if (isTerminal(status)) {
      errorCode = 'task_terminal';
      throw invalidParams(`Cannot cancel a task that is already ${status}`, { taskId: task.taskId, status });
    }
    const run = (await scope.workspace.runs.cancel(task.run.id)) ?? task.run;
    errorCode = null;
    return scope.tasks?.generation === 'v2' ? {} : taskV1(task.taskId, run);
  } finally {
    audit(scope, {
      kind: 'tasks/cancel',
      action: 'tasks/cancel',
      arguments: auditPreview({ runId }),
      reason: reasonFrom(params),
      outcome: errorCode === null ? 'ok' : 'error',
      errorCode,
      blockers: null,
      resourceUris: [],
      runId,
      durationMs: elapsed(start),
    });
  }
}

// ---- resources and prompts -------------------------------------------------------------------------------

function pageOf<T>(
  items: readonly T[],
  scope: Scope,
  kind: string,
  cursor: unknown,
): { items: T[]; nextCursor: string | null } {
  const page = paginate(items, scope.cursors, kind, cursor, LIMITS.listPageSize);
  if (!page) throw invalidParams('Invalid cursor');
  return page;
}

function withCursor<K extends string, T>(
  key: K,
  page: { items: T[]; nextCursor: string | null },
): Record<string, unknown> {
  return page.nextCursor ? { [key]: page.items, nextCursor: page.nextCursor } : { [key]: page.items };
}

/** The run a `flowgate://runs/{id}…` read is about, for the audit row. */
function runIdOf(uri: string): string | null {
  const match = /^flowgate:\/\/runs\/([A-Za-z0-9_-]+)(?:[/?#]|$)/.exec(uri);
  return match ? boundedRunId(match[1]) : null;
}

function boundedRunId(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 && value.length <= LIMITS.runIdMaxChars ? value : null;
}

async function readResourceMethod(params: Params, scope: Scope): Promise<unknown> {
  const start = performance.now();
  const uri = params.uri;
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > LIMITS.resourceUriMaxChars) {
    throw invalidParams(
      `params.uri must be a resource URI of at most ${LIMITS.resourceUriMaxChars} characters`,
    );
  }
  const base = {
    kind: 'resources/read' as const,
    action: uri,
    arguments: auditPreview({ uri }),
    reason: reasonFrom(params),
    resourceUris: [uri],
    runId: runIdOf(uri),
  };
  let contents: Awaited<ReturnType<typeof readResource>>;
  try {
    contents = await readResource(uri, scope);
  } catch (error) {
    audit(scope, {
      ...base,
      outcome: 'error',
      errorCode: isAppError(error) ? error.code : 'internal_error',
      blockers: null,
      durationMs: elapsed(start),
    });
    if (isAppError(error) && error.code === 'not_found') throw invalidParams('Resource not found', { uri });
    throw error;
  }
  if (contents === null) {
    audit(scope, {
      ...base,
      outcome: 'error',
      errorCode: 'not_found',
      blockers: null,
      durationMs: elapsed(start),
    });
    throw invalidParams('Resource not found', { uri });
  }
  audit(scope, { ...base, outcome: 'ok', errorCode: null, blockers: null, durationMs: elapsed(start) });
  return { contents: [contents] };
}

function getPrompt(params: Params, scope: Scope): unknown {
  const start = performance.now();
  const name = params.name;
  if (typeof name !== 'string' || name.length === 0) throw invalidParams('params.name must be a prompt name');
  const rawArgs = params.arguments ?? {};
  const base = {
    kind: 'prompts/get' as const,
    action: auditText(name, 128),
    arguments: auditPreview(rawArgs),
    reason: reasonFrom(params),
    resourceUris: [],
    runId: boundedRunId((rawArgs as Record<string, unknown>).run_id),
  };
  const failWith = (message: string, data?: unknown): never => {
    audit(scope, {
      ...base,
      outcome: 'error',
      errorCode: 'invalid_params',
      blockers: null,
      durationMs: elapsed(start),
    });
    throw invalidParams(message, data);
  };
  // Hidden prompts are indistinguishable from unknown ones.
  const prompt = visiblePrompts(scope.request).find((p) => p.name === name);
  if (!prompt) return failWith(`Unknown prompt: ${truncate(name, 128)}`);
  if (!isPlainObject(rawArgs)) return failWith('params.arguments must be an object of strings');
  const valid = prompt.arguments.map((a) => a.name);
  const args: Record<string, string> = {};
  for (const [key, value] of Object.entries(rawArgs)) {
    if (!valid.includes(key))
      return failWith(`Unknown argument ${JSON.stringify(truncate(key, 64))} for prompt ${prompt.name}`, {
        valid,
      });
    if (typeof value !== 'string' || value.length > PROMPT_ARGUMENT_MAX_CHARS) {
      return failWith(`Argument ${key} must be a string of at most ${PROMPT_ARGUMENT_MAX_CHARS} characters`);
    }
    if (value.trim()) args[key] = value.trim();
  }
  const missing = prompt.arguments.filter((a) => a.required && args[a.name] === undefined).map((a) => a.name);
  if (missing.length)
    return failWith(`Missing required argument(s) for prompt ${prompt.name}: ${missing.join(', ')}`, {
      missing,
    });
  audit(scope, { ...base, outcome: 'ok', errorCode: null, blockers: null, durationMs: elapsed(start) });
  // A step naming a tool the caller cannot see (e.g. lacking its capability) is left out, not sent as a dead end.
  const hidden = hiddenCatalogTools(scope.request);
  return {
    description: guideProse(prompt.description, hidden),
    messages: [{ role: 'user', content: { type: 'text', text: guideMarkdown(prompt.render(args), hidden) } }],
  };
}

const METHODS: ReadonlyMap<string, MethodHandler> = new Map<string, MethodHandler>([
  ['ping', () => ({})],
  ['tools/list', listTools],
  ['tools/call', callTool],
  [
    'resources/list',
    (p: Params, s: Scope) => withCursor('resources', pageOf(listResources(s), s, 'resources/list', p.cursor)),
  ],
  [
    'resources/templates/list',
    (p: Params, s: Scope) =>
      withCursor(
        'resourceTemplates',
        pageOf(listResourceTemplates(s), s, 'resources/templates/list', p.cursor),
      ),
  ],
  ['resources/read', readResourceMethod],
  [
    'prompts/list',
    (p: Params, s: Scope) =>
      withCursor(
        'prompts',
        pageOf(
          visiblePrompts(s.request).map((prompt) => promptDescriptor(prompt, hiddenCatalogTools(s.request))),
          s,
          'prompts/list',
          p.cursor,
        ),
      ),
  ],
  ['prompts/get', getPrompt],
  ['tasks/get', getTask],
  ['tasks/result', taskResult],
  ['tasks/list', listTasks],
  ['tasks/cancel', cancelTask],
]);

export const SUPPORTED_METHODS: readonly string[] = Object.freeze(['initialize', ...METHODS.keys()]);
