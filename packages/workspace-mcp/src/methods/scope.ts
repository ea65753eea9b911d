/**
 * What every method handler receives: the request's parameters and its scope (the tool context plus what the
 * protocol revision decided for this request), and the shape a handler has.
 */
import { ApprovalGate, approvalStateKey, declaresFormElicitation } from '../approval.js';
import type { SecretArgPaths } from '../audit-preview.js';
import { CATALOG_TOOLS } from '../catalog.js';
import {
  type ClientInfo,
  DEFAULT_PUBLIC_BASE_URL,
  DEFAULT_SERVER_VERSION,
  type McpRequestContext,
  type ToolContext,
} from '../context.js';
import { type CursorCodec, createCursorCodec } from '../cursor.js';
import { type JsonRpcId, MODERN_PROTOCOL_VERSION, type ProtocolVersion } from '../protocol.js';
import type { ModernEnvelope } from '../revision.js';
import { type McpSurface, WORKSPACE_SURFACE } from '../surface.js';
import { declaresTasksExtension, type TaskGeneration, taskCodec } from '../tasks.js';

export type Params = Record<string, unknown>;

export interface Scope extends ToolContext {
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
  /** The user's approval of a tools/call (approval.ts): asked for by the tool, recorded in the call's audit row. */
  readonly approval: ApprovalGate;
  /** The JSON-RPC id of the request served (a listen stream names its subscription by it). */
  readonly requestId?: JsonRpcId | null;
  /** What an audited call concluded, for the usage meter (set by `audited`; untouched by other methods). */
  readonly verdict: { outcome: 'ok' | 'error' | 'blocked'; tool: string | null };
}

/** A method result that is already serialised JSON. */
export class RawJson {
  constructor(
    readonly json: string,
    /** The same JSON as UTF-8 when cached that way. */
    readonly bytes?: Uint8Array,
  ) {}
}

export type MethodHandler = (params: Params, scope: Scope) => Promise<unknown> | unknown;

/** The surface this request is served from (the workspace endpoint unless the gateway says otherwise). */
export function surfaceOf(ctx: McpRequestContext): McpSurface {
  return ctx.surface ?? WORKSPACE_SURFACE;
}

export function makeScope(
  ctx: McpRequestContext,
  version: ProtocolVersion,
  clientInfo: ClientInfo | null = ctx.clientInfo ?? null,
  envelope: ModernEnvelope | null = null,
  requestId: JsonRpcId | null = null,
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
  let approvalKey: Uint8Array | undefined;
  const approval = new ApprovalGate({
    workspaceId: ctx.workspaceId,
    principal: ctx.principal,
    // Multi round-trip requests exist from 2026-07-28 on; a 2025-era client is never asked.
    canElicit: version === MODERN_PROTOCOL_VERSION && declaresFormElicitation(envelope?.clientCapabilities),
    key: () => {
      approvalKey ??= approvalStateKey(ctx.cursorKey);
      return approvalKey;
    },
  });
  return {
    approval,
    requestId,
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
    surface: surfaceOf(ctx),
    protocolVersion: version,
    get cursors() {
      cursors ??= createCursorCodec(ctx.workspaceId, ctx.cursorKey);
      return cursors;
    },
    publicBaseUrl: ctx.publicBaseUrl ?? DEFAULT_PUBLIC_BASE_URL,
    serverVersion: ctx.serverVersion ?? DEFAULT_SERVER_VERSION,
    clientInfo,
    verdict: { outcome: 'ok', tool: null },
  };
}
