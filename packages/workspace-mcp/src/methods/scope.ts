/**
 * What every method handler receives: the request's parameters and its scope (the tool context plus what the
 * protocol revision decided for this request), and the shape a handler has.
 */

import type { Workspace } from '@flowgate/workspace';
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
  return new RequestScope(ctx, version, clientInfo, envelope, requestId);
}

/**
 * A class, not an object literal, for what is opened on first use (the use cases, the codecs): a literal's own
 * getter is an accessor pair V8 allocates in the old generation, and once the request is done that dead pair keeps
 * what its getter closes over (the request's whole context) alive through every young-generation collection until
 * the next full one. A getter on the prototype is made once.
 */
class RequestScope implements Scope {
  readonly approval: ApprovalGate;
  readonly tasks: Scope['tasks'];
  readonly secretArgs: Scope['secretArgs'];
  readonly catalog = CATALOG_TOOLS;
  readonly surface: McpSurface;
  readonly publicBaseUrl: string;
  readonly serverVersion: string;
  readonly verdict: Scope['verdict'] = { outcome: 'ok', tool: null };
  // The use cases and codecs are built on first use: list calls and ping need none of them.
  private taskCodec: CursorCodec | undefined;
  private cursorCodec: CursorCodec | undefined;

  constructor(
    readonly request: McpRequestContext,
    readonly protocolVersion: ProtocolVersion,
    readonly clientInfo: ClientInfo | null,
    envelope: ModernEnvelope | null,
    readonly requestId: JsonRpcId | null,
  ) {
    // Experimental Tasks arrived with 2025-11-25; 2026-07-28 carries them as an extension.
    this.tasks =
      protocolVersion === MODERN_PROTOCOL_VERSION
        ? { generation: 'v2', declared: declaresTasksExtension(envelope?.clientCapabilities) }
        : protocolVersion === '2025-11-25'
          ? { generation: 'v1', declared: false }
          : null;
    const secretPaths: SecretArgPaths[] = [];
    this.secretArgs = { note: (names, under) => secretPaths.push({ under, names }), paths: secretPaths };
    let approvalKey: Uint8Array | undefined;
    this.approval = new ApprovalGate({
      workspaceId: request.workspaceId,
      principal: request.principal,
      // Multi round-trip requests exist from 2026-07-28 on; a 2025-era client is never asked.
      canElicit:
        protocolVersion === MODERN_PROTOCOL_VERSION && declaresFormElicitation(envelope?.clientCapabilities),
      key: () => {
        approvalKey ??= approvalStateKey(request.cursorKey);
        return approvalKey;
      },
    });
    this.surface = surfaceOf(request);
    this.publicBaseUrl = request.publicBaseUrl ?? DEFAULT_PUBLIC_BASE_URL;
    this.serverVersion = request.serverVersion ?? DEFAULT_SERVER_VERSION;
  }

  get workspace(): Workspace {
    return this.request.workspace();
  }

  get taskIds(): CursorCodec {
    this.taskCodec ??= taskCodec(this.request.workspaceId, this.request.principal, this.request.cursorKey);
    return this.taskCodec;
  }

  get cursors(): CursorCodec {
    this.cursorCodec ??= createCursorCodec(this.request.workspaceId, this.request.cursorKey);
    return this.cursorCodec;
  }
}
