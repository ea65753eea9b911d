/**
 * What the transport (the gateway) hands to the MCP handler per request, and the data-access interface it
 * implements. This package never touches the database or HTTP itself.
 */
import type { Capability, WorkspaceAccess } from '@flowgate/auth';
import type { FlowModel } from '@flowgate/flows';
import type { ConnectionCheck, ConnectionSummary, FEEDBACK_AREAS } from './catalog.js';
import type { CursorCodec } from './cursor.js';
import type { Narrowing } from './narrowing.js';
import type { WorkspacePolicy } from './policy.js';
import type { ProtocolVersion } from './protocol.js';
import type { Blocker } from './schemas.js';

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

export type FeedbackArea = (typeof FEEDBACK_AREAS)[number];

/** Feedback as the services store it: already redacted by this package. */
export interface FeedbackInput {
  summary: string;
  details: string;
  area: FeedbackArea;
  resourceUri: string | null;
  runId: string | null;
  flowSlug: string | null;
  context: Record<string, string | number | boolean | null> | null;
}

/** Stored definitions an agent can name (spec 7.3); an explicit version is the other way to pick one. */
export const FLOW_SOURCES = ['draft', 'latest', 'live', 'active'] as const;
export type FlowSource = (typeof FLOW_SOURCES)[number];
export type FlowSelector = { source: FlowSource } | { version: number };

/** An installation of another workspace's public flow into this one (spec 7.4). */
export interface FlowInstallationRecord {
  id: string;
  sourceWorkspaceId: string;
  versionPolicy: 'pinned' | 'track-latest';
  pinnedVersion: number | null;
  /** The released version this installation runs now, resolved from its policy (null when none exists). */
  activeVersion: number | null;
  enabled: boolean;
  /**
   * The installer's opt-in to show the source flow's authored text to models, as it applies to the version the
   * installation runs now: false when the installer reviewed a different version (see `metadataChangedSinceReview`).
   */
  trustMetadata: boolean;
  /** `:requires` slot → a connection id of this workspace. */
  slotBindings: Record<string, string>;
}

/**
 * A flow this workspace can see: its own, or an installed public flow (`installation` set). Authored text
 * (name, description, tags) is raw here; this package decides what reaches a model (spec 7.5).
 */
export interface FlowRecord {
  slug: string;
  installation: FlowInstallationRecord | null;
  name: string | null;
  description: string | null;
  tags: string[];
  hasDraft: boolean;
  draftUpdatedAt: string | null;
  latestVersion: number | null;
  liveVersion: number | null;
  isPublic: boolean;
  /**
   * The owning workspace admin's opt-in for its own flow. Never a trust source for an installation: only the
   * installer decides there (`installation.trustMetadata`), so a source author cannot vouch for itself.
   */
  ownerTrustMetadata: boolean;
  /**
   * An opt-in exists (owner's or installer's) but the definition whose text this record describes is not
   * byte-identical to the one reviewed, so it does not apply (and the trust flags above are false).
   */
  metadataChangedSinceReview?: boolean;
  /** Tool names of the `:mcp` interfaces of the definition flow tools use (live, else the draft). */
  mcpToolNames: string[];
}

/** One stored definition: the draft, or a released version (`version` set). */
export interface FlowDefinitionRecord {
  slug: string;
  installationId: string | null;
  /** `null` for the draft. */
  version: number | null;
  literal: string;
  model: FlowModel;
  updatedAt: string;
  releaseNote: string | null;
}

/** A callable `:mcp` interface as search finds it. Authored title/description are raw; the package shapes them. */
export interface FlowToolHit {
  flowSlug: string;
  toolName: string;
  installationId: string | null;
  /** Which definition declares it: the live version (or an installation's active one), or only the draft. */
  source: 'live' | 'draft';
  title: string | null;
  description: string | null;
  /**
   * Owner admin opt-in (own flows) or installer opt-in (installations), as in FlowRecord/FlowInstallationRecord:
   * true only when it covers the exact definition this row describes (never a draft).
   */
  trustMetadata: boolean;
  /** As in FlowRecord: an opt-in exists but was given for a different definition. */
  metadataChangedSinceReview?: boolean;
}

/** A `:requires` slot binding with what is known about the bound connection (no live check, never secrets). */
export interface SlotBindingRecord {
  slot: string;
  connection: {
    id: string;
    name: string;
    type: 'http-api' | 'llm-provider' | 'secret';
    status: 'active' | 'disabled';
    /** Last stored health check, if any. */
    health: { ok: boolean; checkedAt: string } | null;
  } | null;
}

/**
 * Workspace-scoped data access, implemented by the gateway on top of the database. Every method acts in the
 * request's workspace only. `after`/`nextAfter` are raw positions (e.g. the last id of the page); this package
 * seals them into signed opaque cursors, so implementations need no cursor handling of their own. Expected
 * failures are thrown as `AppError` and become `isError` tool results.
 */
export interface WorkspaceServices {
  workspaceInfo(): Promise<{ id: string; name: string }>;
  /** Newest first; never secrets (config values and credentials stay out). */
  listConnections(input: {
    limit: number;
    after: string | null;
  }): Promise<{ items: ConnectionSummary[]; nextAfter: string | null }>;
  /**
   * Health-checks `connectionIds` (all of them, ignoring limit/after) or, when null, one page of all connections.
   * Ids that do not exist in the workspace come back in `unknownConnectionIds`.
   */
  checkConnections(input: {
    connectionIds: string[] | null;
    limit: number;
    after: string | null;
  }): Promise<{ items: ConnectionCheck[]; unknownConnectionIds: string[]; nextAfter: string | null }>;
  sendFeedback(input: FeedbackInput): Promise<{ feedbackId: string; createdAt: string }>;

  /**
   * Flows ranked by relevance to `query` (matching may use authored text), or browsed by slug when `query` is
   * null. Installed public flows are included only when `includeInstalled` (the caller holds installations.read).
   */
  searchFlows(input: {
    query: string | null;
    includeInstalled: boolean;
    limit: number;
    after: string | null;
  }): Promise<{ items: FlowRecord[]; nextAfter: string | null }>;
  /**
   * Callable `:mcp` interfaces: exact `toolName` lookup, text `query` (ranked; may match authored text), or
   * browse when both are null. Own flows contribute their live interfaces, and their draft interfaces too when
   * `includeDraft` (the caller holds flows.manage, which running a draft needs). Same installation rule as
   * searchFlows.
   */
  searchFlowTools(input: {
    query: string | null;
    toolName: string | null;
    includeDraft: boolean;
    includeInstalled: boolean;
    limit: number;
    after: string | null;
  }): Promise<{ items: FlowToolHit[]; nextAfter: string | null }>;
  /**
   * One flow by slug: the workspace's own, or with `installationId` that installation (only when
   * `includeInstalled`). Without `installationId`, an own flow wins; otherwise the oldest installation of a
   * public flow with that slug, if `includeInstalled`. `null` when nothing visible matches.
   */
  getFlow(input: {
    slug: string;
    installationId: string | null;
    includeInstalled: boolean;
  }): Promise<FlowRecord | null>;
  /**
   * One definition of a flow `getFlow` resolves. For installations only released versions the installation may
   * run are reachable (`active`/`live`/`latest` resolve to its active version); never the source's draft.
   */
  getFlowDefinition(input: {
    slug: string;
    installationId: string | null;
    includeInstalled: boolean;
    selector: FlowSelector;
  }): Promise<FlowDefinitionRecord | null>;
  /** Creates or replaces the draft of an own flow from an already validated definition. */
  saveFlowDraft(input: { slug: string; literal: string; model: FlowModel }): Promise<{
    created: boolean;
    flow: FlowRecord;
  }>;
  /**
   * Releases an own flow: with `version` null the draft becomes the next immutable version; with a version,
   * that existing version becomes live. Throws `not_found` for unknown flows/versions.
   */
  releaseFlow(input: {
    slug: string;
    version: number | null;
    releaseNote: string | null;
    /**
     * The `:discover {:public}` visibility the caller checked; the release enforces it atomically (the flow's and
     * the released definition's) and fails with `conflict` when either changed meanwhile.
     */
    expectedPublic?: boolean | undefined;
  }): Promise<{
    version: number;
    /** False when an existing version went live (a rollback, or a draft identical to the latest version). */
    created: boolean;
    previousLiveVersion: number | null;
    releasedAt: string;
    /** The note the released version holds (a note given with a rollback or a reused version is not stored). */
    releaseNote: string | null;
  }>;
  /** The bindings of every slot bound for an own flow's target, or for an installation. */
  flowSlotBindings(input: {
    slug: string;
    installationId: string | null;
    target: 'live' | 'draft';
  }): Promise<SlotBindingRecord[]>;
}

/** One audited operation: every tools/call, resources/read and prompts/get (spec 9). */
export interface McpAuditEntry {
  kind: 'tools/call' | 'resources/read' | 'prompts/get';
  /** Tool name, resource URI or prompt name as requested (bounded). */
  action: string;
  /** Redacted. */
  arguments: unknown;
  outcome: 'ok' | 'error' | 'blocked';
  /** Tool-error or JSON-RPC error code when the outcome is `error`. */
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

export interface McpRequestContext {
  workspaceId: string;
  principal: McpPrincipal;
  /** Expanded capabilities in this workspace (no `workspace.full`). */
  capabilities: ReadonlySet<Capability>;
  /** Parsed from the X-MCP-* headers with `parseNarrowingHeaders` (invalid headers were answered 400 already). */
  narrowing: Narrowing;
  workspacePolicy: WorkspacePolicy;
  services: WorkspaceServices;
  /** Raw `MCP-Protocol-Version` header, if any. */
  protocolVersionHeader?: string | null;
  /** Client name/version the gateway derived from request headers (initialize params take precedence). */
  clientInfo?: ClientInfo | null;
  /** HMAC key for cursors, shared by all replicas; defaults to a per-process random key. */
  cursorKey?: string | Uint8Array;
  /** Public base URL (no trailing slash) for docs snippets and resource text. */
  publicBaseUrl?: string;
  serverVersion?: string;
  /** Extra limits the gateway enforces (e.g. request body bytes), reported by get_workspace_context. */
  limits?: Readonly<Record<string, number>>;
  /** Receives one entry per audited operation; must not throw or block (queue it). */
  audit?: (entry: McpAuditEntry) => void;
  /** Called with the initialize params so the gateway can log the client. */
  onInitialize?: (info: {
    clientInfo: ClientInfo | null;
    requestedVersion: string | null;
    negotiatedVersion: ProtocolVersion;
  }) => void;
  /** Unexpected errors (answered as -32603 without details) for the gateway's log. */
  onError?: (error: unknown) => void;
}

/** What a tool handler sees: the request context plus the negotiated version and a cursor codec. */
export interface ToolContext {
  readonly request: McpRequestContext;
  readonly protocolVersion: ProtocolVersion;
  readonly cursors: CursorCodec;
  readonly publicBaseUrl: string;
  readonly serverVersion: string;
}
