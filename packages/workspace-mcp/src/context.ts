/**
 * What the transport (the gateway) hands to the MCP handler per request. This package never touches the database
 * or HTTP itself: workspace data comes from the `Workspace` use cases the gateway opens for the caller.
 */
import type { Capability, WorkspaceAccess } from '@flowgate/auth';
import type { TraceContext } from '@flowgate/telemetry';
import type { Workspace } from '@flowgate/workspace';
import type { ApprovalGate } from './approval.js';
import type { CursorCodec } from './cursor.js';
import type { ListenHub } from './listen.js';
import type { Narrowing } from './narrowing.js';
import type { WorkspacePolicy } from './policy.js';
import type { CallProgress } from './progress.js';
import type { ProtocolVersion } from './protocol.js';
import type { Blocker } from './schemas.js';
import type { McpSurface } from './surface.js';
import type { AnyToolDefinition } from './tool.js';
import type { WaitGate } from './waits.js';

export const SERVER_NAME = 'flowgate-workspace-mcp';
export const SERVER_TITLE = 'Flowgate workspace MCP';
export const DEFAULT_SERVER_VERSION = '0.1.0';
/** Base URL used in docs snippets when the gateway does not know its public URL (the `flowgate dev` default). */
export const DEFAULT_PUBLIC_BASE_URL = 'http://127.0.0.1:8787';

/** Who is calling, as the MCP surface shows it: never a secret, never a key. */
export interface McpPrincipal {
  kind: 'service_account' | 'user' | 'operator';
  id: string;
  name: string | null;
  keyId: string | null;
}

export function principalFromAccess(access: WorkspaceAccess): McpPrincipal {
  const p = access.principal;
  if (p.kind === 'service_account') return { kind: p.kind, id: p.id, name: p.name, keyId: p.keyId };
  return { kind: p.kind, id: p.id, name: null, keyId: access.keyId };
}

export interface ClientInfo {
  name: string;
  version: string | null;
}

/**
 * One audited operation: every tools/call, resources/read and prompts/get; a task-augmented tools/call is recorded as
 * `tasks/create` and a `tasks/cancel` as such, both with the run.
 */
export interface McpAuditEntry {
  kind: 'tools/call' | 'tasks/create' | 'tasks/cancel' | 'resources/read' | 'prompts/get';
  /** Tool name, resource URI or prompt name as requested (bounded). */
  action: string;
  /** Redacted. */
  arguments: unknown;
  outcome: 'ok' | 'error' | 'blocked';
  /** Tool-error or JSON-RPC error code when the outcome is not `ok`. */
  errorCode: string | null;
  blockers: Blocker[] | null;
  /** `params._meta.reason`, redacted and bounded. */
  reason: string | null;
  durationMs: number;
  resourceUris: string[];
  runId: string | null;
  clientName: string | null;
  clientVersion: string | null;
  protocolVersion: ProtocolVersion;
}

/**
 * One JSON-RPC request as usage sees it (the gateway's usage meter): every request with an id, audited or not. A
 * method this endpoint does not serve is `(unknown)` and an unreadable message `(invalid)`, so a caller cannot make
 * up names that become rows.
 */
export interface McpUsageEntry {
  method: string;
  /** The tool of a `tools/call` (a task-augmented one included), once its parameters named a known tool. */
  tool: string | null;
  /** `error`: a JSON-RPC error or a tool error result; `blocked`: refused by policy, capability or approval. */
  outcome: 'ok' | 'error' | 'blocked';
  durationMs: number;
  /** The client as the audit names it: from initialize (the session), the request envelope, or the User-Agent. */
  clientName: string | null;
}

/** One request's answer as an SSE stream (progress.ts): notifications go out first, the final response ends it. */
export interface McpResponseStream {
  /** Writes one serialised JSON-RPC notification; false once the client has gone (then nothing more is sent). */
  send(json: string): boolean;
}

export interface McpRequestContext {
  workspaceId: string;
  principal: McpPrincipal;
  /** Expanded capabilities in this workspace (no `workspace.full`). */
  capabilities: ReadonlySet<Capability>;
  /** Parsed from the X-MCP-* headers with `parseNarrowingHeaders` (invalid headers were answered 400 already). */
  narrowing: Narrowing;
  workspacePolicy: WorkspacePolicy;
  /**
   * The workspace's use cases, opened for this caller on first call (list calls and ping never need them). A
   * function, not a getter: a getter on a per-request object literal is an accessor pair V8 keeps in the old
   * generation, which holds the whole request alive through young-generation collections (methods/scope.ts).
   */
  workspace: () => Workspace;
  /** What this endpoint serves; the workspace endpoint (the catalog, resources, prompts) when absent. */
  surface?: McpSurface;
  /** Raw `MCP-Protocol-Version` header, if any. */
  protocolVersionHeader?: string | null;
  /** Raw `Mcp-Method` and `Mcp-Name` headers (2026-07-28 requests must send them; checked against the body). */
  mcpMethodHeader?: string | null;
  mcpNameHeader?: string | null;
  /** Client name/version the gateway derived from request headers (initialize params take precedence). */
  clientInfo?: ClientInfo | null;
  /** HMAC key for cursors, shared by all replicas; defaults to a per-process random key. */
  cursorKey?: string | Uint8Array;
  /** Public base URL (no trailing slash) for docs snippets and resource text. */
  publicBaseUrl?: string;
  /**
   * How long the gateway may itself serve a key's view unchanged (the shorter of its auth and policy cache
   * lifetimes), in ms: the 2026-07-28 `ttlMs` of the workspace endpoint's lists (cache-hints.ts). Absent: 0.
   */
  listCacheTtlMs?: number;
  serverVersion?: string;
  /** Cap on one tools/call result in bytes (result.ts); `DEFAULT_MAX_RESULT_BYTES` when absent. */
  maxResultBytes?: number;
  /** Extra limits the gateway enforces (e.g. request body bytes), reported by get_workspace_context. */
  limits?: Readonly<Record<string, number>>;
  /** Receives one entry per audited operation; must not throw or block (queue it). */
  audit?: (entry: McpAuditEntry) => void;
  /** Receives one entry per JSON-RPC request (notifications excluded); must not throw or block. */
  meter?: (entry: McpUsageEntry) => void;
  /** Called with the initialize params so the gateway can log the client. */
  onInitialize?: (info: {
    clientInfo: ClientInfo | null;
    requestedVersion: string | null;
    negotiatedVersion: ProtocolVersion;
  }) => void;
  /** Bounds parked waits (waits.ts) per key and per process; one per process, shared by every request. */
  waits?: WaitGate;
  /** Bounds and ends subscriptions/listen streams (listen.ts); one per process, shared by every request. */
  listens?: ListenHub;
  /**
   * The caller's access as it is now (its token verified again, the workspace policy read again), or null when it no
   * longer may enter the workspace: a long-lived listen stream ends then, and tells a changed tool list. Absent, a
   * listen honours no `toolsListChanged`.
   */
  recheck?: () => Promise<{ capabilities: ReadonlySet<Capability>; workspacePolicy: WorkspacePolicy } | null>;
  /**
   * Aborts when the client goes away: a parked wait then ends at once and releases what it held. A function: the
   * signal may cost the HTTP layer something to make, so it is made only for a request that waits.
   */
  signal?: () => AbortSignal;
  /**
   * Opens this request's answer as an SSE stream; the final response then goes out as its last event. Given by the
   * transport only for a single request (never a batch) whose Accept allows `text/event-stream`; absent, every answer
   * is JSON. Only a tools/call that waits on a run with a progress token opens it.
   */
  openStream?: () => McpResponseStream;
  /** Unexpected errors (answered as -32603 without details) for the gateway's log. */
  onError?: (error: unknown) => void;
  /**
   * The request span's context, when the transport carries it explicitly rather than active: methods open their
   * spans under it (telemetry.ts). Absent, the active context is their parent.
   */
  traceContext?: TraceContext | undefined;
}

/** What a tool handler sees: the request context plus the negotiated version, a cursor codec and the catalog. */
export interface ToolContext {
  readonly request: McpRequestContext;
  readonly workspace: Workspace;
  readonly protocolVersion: ProtocolVersion;
  readonly cursors: CursorCodec;
  readonly publicBaseUrl: string;
  readonly serverVersion: string;
  /** Every tool of the catalog, in listing order (handed in so no tool module imports the catalog). */
  readonly catalog: readonly AnyToolDefinition[];
  /**
   * Told which arguments hold secret-typed flow inputs (`under` the named argument, or top level when null), so the
   * call's audit row never keeps their values. Absent outside a tools/call.
   */
  readonly secretArgs?: { note(names: readonly string[], under: string | null): void };
  /** A tools/call's progress token and stream opener, when it has both (progress.ts); absent otherwise. */
  readonly progress?: CallProgress;
  /** Asks the user to approve what the tool is about to do, where the client can be asked; absent outside tools/call. */
  readonly approval?: ApprovalGate;
}

/** Whether the caller may see installed public flows. */
export function includeInstalled(ctx: ToolContext): boolean {
  return ctx.request.capabilities.has('installations.read');
}
