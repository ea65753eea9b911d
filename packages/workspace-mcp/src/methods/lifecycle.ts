/**
 * What a client learns before it calls anything: `initialize` (2025 revisions), `server/discover` (2026-07-28),
 * `ping`, and the capabilities and instructions both give for the caller's visible set.
 */
import {
  type ClientInfo,
  DEFAULT_SERVER_VERSION,
  type McpRequestContext,
  SERVER_NAME,
  SERVER_TITLE,
} from '../context.js';
import { serverIcons } from '../icons.js';
import { watchesToolList } from '../listen.js';
import { evaluateTool, visibilityKey } from '../policy.js';
import {
  clip,
  isJsonObject,
  isSupportedProtocolVersion,
  JSONRPC_METHOD_NOT_FOUND,
  type JsonRpcError,
  LATEST_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../protocol.js';
import { discoverResult, type ServerIdentity } from '../revision.js';
import type { McpSurface } from '../surface.js';
import { TASKS_CAPABILITY_V1, TASKS_EXTENSION_ID } from '../tasks.js';
import { type MethodHandler, type Params, surfaceOf } from './scope.js';

const WORKSPACE_CAPABILITIES = Object.freeze({ tools: {}, resources: {}, prompts: {} });
const TOOLS_ONLY_CAPABILITIES = Object.freeze({ tools: {} });

/** server/discover sent without the 2026-07-28 envelope: the client is told how to ask either revision. */
export const DISCOVER_ERROR: JsonRpcError = {
  code: JSONRPC_METHOD_NOT_FOUND,
  message: `server/discover is a ${MODERN_PROTOCOL_VERSION} method: send it with the _meta keys io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities, or use initialize with one of ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}.`,
  data: { supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS] },
};

export function serverIdentity(ctx: McpRequestContext): ServerIdentity {
  return { name: SERVER_NAME, title: SERVER_TITLE, version: ctx.serverVersion ?? DEFAULT_SERVER_VERSION };
}

/** Tasks are offered only where the caller can call a run-starting tool (flows.run, policy and narrowing). */
export function tasksAvailable(surface: McpSurface, ctx: McpRequestContext): boolean {
  return surface.tools.some((t) => t.task !== undefined && evaluateTool(t, ctx).visible);
}

function baseCapabilities(surface: McpSurface): Readonly<Record<string, unknown>> {
  return surface.servesResources ? WORKSPACE_CAPABILITIES : TOOLS_ONLY_CAPABILITIES;
}

/** The instructions for the caller's visible set (tools/list names the same tools). */
function instructionsFor(ctx: McpRequestContext): string {
  const surface = surfaceOf(ctx);
  return surface.instructions(ctx.workspaceId, visibilityKey(surface.tools, ctx));
}

/**
 * The answer to `server/discover` (2026-07-28): capabilities with the Tasks extension where tasks are offered,
 * `resources.subscribe` where resources are served and `tools.listChanged` where the tool list is watched
 * (subscriptions/listen delivers both, listen.ts).
 */
export function discover(ctx: McpRequestContext): Record<string, unknown> {
  const surface = surfaceOf(ctx);
  const served: Record<string, unknown> = { ...baseCapabilities(surface) };
  if (surface.servesResources) served.resources = { subscribe: true };
  // The same condition under which subscriptions/listen honours `toolsListChanged`.
  if (watchesToolList(surface, ctx)) served.tools = { listChanged: true };
  const base = served;
  return discoverResult({
    capabilities: tasksAvailable(surface, ctx) ? { ...base, extensions: { [TASKS_EXTENSION_ID]: {} } } : base,
    server: { ...serverIdentity(ctx), icons: serverIcons() },
    instructions: instructionsFor(ctx),
  });
}

/** The client an initialize names, bounded; null when it names none. */
export function clientInfoFrom(value: unknown): ClientInfo | null {
  if (!isJsonObject(value) || typeof value.name !== 'string') return null;
  return {
    name: clip(value.name, 200),
    version: typeof value.version === 'string' ? clip(value.version, 100) : null,
  };
}

/** The 2025 handshake: negotiates the version and tells the client what this endpoint serves it. */
export function initialize(params: Params, ctx: McpRequestContext): unknown {
  const requested = typeof params.protocolVersion === 'string' ? params.protocolVersion : null;
  const negotiated =
    requested !== null && isSupportedProtocolVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
  const clientInfo = clientInfoFrom(params.clientInfo) ?? ctx.clientInfo ?? null;
  try {
    ctx.onInitialize?.({
      clientInfo,
      requestedVersion: requested === null ? null : clip(requested, 40),
      negotiatedVersion: negotiated,
    });
  } catch (error) {
    // A logging hook must not break the handshake.
    ctx.onError?.(error);
  }
  const version = ctx.serverVersion ?? DEFAULT_SERVER_VERSION;
  // Implementation.title arrived with 2025-06-18, Implementation.icons with 2025-11-25.
  const serverInfo =
    negotiated === '2025-03-26'
      ? { name: SERVER_NAME, version }
      : negotiated === '2025-06-18'
        ? { name: SERVER_NAME, title: SERVER_TITLE, version }
        : { name: SERVER_NAME, title: SERVER_TITLE, version, icons: serverIcons() };
  const surface = surfaceOf(ctx);
  const base = baseCapabilities(surface);
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

export const LIFECYCLE_METHODS: ReadonlyArray<readonly [string, MethodHandler]> = [['ping', () => ({})]];
