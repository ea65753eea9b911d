import type { ConnectionType, RunStatus, StepStatus } from '@flowgate/core';
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/**
 * Every table that belongs to a workspace carries `workspace_id`, and its indexes lead with it,
 * so every query is scoped and cheap. Timestamps are `timestamptz`.
 */
const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const createdAt = () => ts('created_at').notNull().defaultNow();

/** The owning workspace: every workspace-owned row has one, and deleting the workspace deletes the row. */
const workspaceRef = () =>
  text('workspace_id')
    .notNull()
    .references(() => workspaces.id, { onDelete: 'cascade' });

export const workspaces = pgTable('workspaces', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: createdAt(),
});

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    name: text('name'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('users_email_uq').on(t.email)],
);

export const memberships = pgTable(
  'memberships',
  {
    workspaceId: workspaceRef(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role').$type<'admin' | 'editor' | 'viewer'>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.userId] }), index('memberships_user_idx').on(t.userId)],
);

export const serviceAccounts = pgTable(
  'service_accounts',
  {
    id: text('id').primaryKey(),
    workspaceId: workspaceRef(),
    name: text('name').notNull(),
    capabilities: jsonb('capabilities').$type<string[]>().notNull(),
    status: text('status').$type<'active' | 'disabled'>().notNull().default('active'),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('service_accounts_ws_idx').on(t.workspaceId, t.createdAt)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    /** The public `keyId` part of `fgk_<keyId>_<secret>`. */
    id: text('id').primaryKey(),
    workspaceId: workspaceRef(),
    serviceAccountId: text('service_account_id')
      .notNull()
      .references(() => serviceAccounts.id, { onDelete: 'cascade' }),
    name: text('name'),
    /** sha256 of the secret part, hex. The secret itself is never stored. */
    secretHash: text('secret_hash').notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at'),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('api_keys_ws_sa_idx').on(t.workspaceId, t.serviceAccountId)],
);

export const connections = pgTable(
  'connections',
  {
    id: text('id').primaryKey(),
    workspaceId: workspaceRef(),
    name: text('name').notNull(),
    type: text('type').$type<ConnectionType>().notNull(),
    baseUrl: text('base_url'),
    authType: text('auth_type').notNull().default('none'),
    /** AES-256-GCM envelope (see @flowgate/secrets); null when the connection has no secret. */
    secretCiphertext: text('secret_ciphertext'),
    /** Non-secret settings only (e.g. header name for api-key auth). */
    config: jsonb('config').$type<Record<string, string>>().notNull().default({}),
    status: text('status').$type<'active' | 'disabled'>().notNull().default('active'),
    health: jsonb('health').$type<{
      ok: boolean;
      checkedAt: string;
      status?: number;
      message?: string;
      /** What an `mcp-server` connection's last check found (tool names bounded; no descriptions). */
      mcp?: {
        protocolVersion: string;
        serverName: string;
        serverVersion?: string;
        toolCount: number;
        tools: string[];
      };
    } | null>(),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('connections_ws_name_uq').on(t.workspaceId, t.name),
    index('connections_ws_idx').on(t.workspaceId, t.createdAt),
  ],
);

export const flows = pgTable(
  'flows',
  {
    id: text('id').primaryKey(),
    workspaceId: workspaceRef(),
    slug: text('slug').notNull(),
    name: text('name'),
    description: text('description'),
    tags: jsonb('tags').$type<string[]>().notNull().default([]),
    /** Current draft EDN text and its parsed model (null when the flow has only released versions). */
    draftLiteral: text('draft_literal'),
    draftModel: jsonb('draft_model'),
    draftUpdatedAt: ts('draft_updated_at'),
    latestVersion: integer('latest_version'),
    liveVersion: integer('live_version'),
    isPublic: boolean('is_public').notNull().default(false),
    /** Workspace admin opt-in: show this flow's authored text to models. */
    trustMetadata: boolean('trust_metadata').notNull().default(false),
    /**
     * `metadataSha256` of the live version the admin reviewed when opting in: the opt-in covers that metadata (names,
     * descriptions, interfaces, schemas), so a release that changes only code keeps it.
     */
    trustedMetadataSha256: text('trusted_metadata_sha256'),
    /** Lowercased slug, name, description and tags of the draft: what `searchFlows` matches. */
    searchText: text('search_text').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('flows_ws_slug_uq').on(t.workspaceId, t.slug),
    index('flows_public_idx').on(t.isPublic).where(sql`${t.isPublic}`),
    // Search walks flows in byte order of the lowercased slug (stable across database collations) and falls back to a
    // trigram index for rare terms; see repos/search.ts.
    index('flows_ws_slug_key_idx').on(
      t.workspaceId,
      sql`(lower("slug") collate "C")`,
      sql`("slug" collate "C")`,
    ),
    index('flows_search_idx')
      .using('gin', t.workspaceId, t.searchText.op('gin_trgm_ops'))
      .with({ fastupdate: false }),
  ],
);

/** One `:mcp` interface of a definition, as search matches and shows it. Flow-authored text is untrusted. */
export interface ToolSummary {
  toolName: string;
  invocation: string;
  title: string | null;
  description: string | null;
  flowName: string | null;
  /** Lowercased tool name, slug, flow name and description, interface text and tags. */
  searchText: string;
}

/** What search reads of a released version instead of its model. */
export interface VersionSummary {
  name: string | null;
  description: string | null;
  tags: string[];
  /** Lowercased slug, name, description, tags and tool names. */
  searchText: string;
  tools: ToolSummary[];
}

/** The flow a row belongs to; removed with the flow. */
const flowRef = () =>
  text('flow_id')
    .notNull()
    .references(() => flows.id, { onDelete: 'cascade' });

export const flowVersions = pgTable(
  'flow_versions',
  {
    workspaceId: workspaceRef(),
    flowId: flowRef(),
    version: integer('version').notNull(),
    literal: text('literal').notNull(),
    model: jsonb('model').notNull(),
    releaseNote: text('release_note'),
    /**
     * The version's own `:discover {:public}`: another workspace may run a version only when it was released public.
     */
    isPublic: boolean('is_public').notNull().default(false),
    /** sha256 (hex) of `literal`'s UTF-8 bytes. */
    literalSha256: text('literal_sha256').notNull(),
    /**
     * `metadataSha256` of the model (repos/flow-digests.ts): what a metadata trust opt-in is compared with, read by search
     * without the model. Null only until `migrate()` backfills it.
     */
    metadataSha256: text('metadata_sha256'),
    /**
     * What search needs of the version without reading the model: authored name, description and tags, its search
     * text and its `:mcp` interfaces (`versionSummary` in repos/search-projection.ts). Null only until `migrate()` backfills it.
     */
    summary: jsonb('summary').$type<VersionSummary>(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.flowId, t.version] }),
    index('flow_versions_ws_idx').on(t.workspaceId, t.flowId),
  ],
);

/** Flow MCP interfaces, denormalised for search (`search_flow_tools`) and exact lookup. */
export const flowTools = pgTable(
  'flow_tools',
  {
    workspaceId: workspaceRef(),
    flowId: flowRef(),
    flowSlug: text('flow_slug').notNull(),
    /** `draft` or `live`: which definition this row describes. */
    source: text('source').$type<'draft' | 'live'>().notNull(),
    toolName: text('tool_name').notNull(),
    invocation: text('invocation').notNull(),
    searchText: text('search_text').notNull(),
    /** The version a `live` row describes; null for `draft`. */
    version: integer('version'),
    /** Flow-authored text, kept for descriptors; untrusted (docs/flows.md, "Metadata safety"). */
    title: text('title'),
    description: text('description'),
    flowName: text('flow_name'),
  },
  (t) => [
    primaryKey({ columns: [t.flowId, t.source, t.toolName] }),
    index('flow_tools_ws_name_idx').on(t.workspaceId, t.toolName),
    // Search order: lowercased tool name, then slug, source and name, all in byte order (see repos/search.ts).
    index('flow_tools_ws_key_idx').on(
      t.workspaceId,
      sql`(lower("tool_name") collate "C")`,
      sql`("flow_slug" collate "C")`,
      t.source,
      sql`("tool_name" collate "C")`,
    ),
    // One trigram index per source: every own flow has a draft row beside its live one, and most searches want only
    // live rows, so one index over both read (and rechecked) twice the candidates. Searches with drafts say
    // `source = 'live' or source = 'draft'`, which the planner answers with both indexes.
    index('flow_tools_live_search_idx')
      .using('gin', t.workspaceId, t.searchText.op('gin_trgm_ops'))
      .with({ fastupdate: false })
      .where(sql`"source" = 'live'`),
    index('flow_tools_draft_search_idx')
      .using('gin', t.workspaceId, t.searchText.op('gin_trgm_ops'))
      .with({ fastupdate: false })
      .where(sql`"source" = 'draft'`),
  ],
);

export const bindings = pgTable(
  'bindings',
  {
    workspaceId: workspaceRef(),
    flowId: flowRef(),
    target: text('target').$type<'live' | 'draft'>().notNull(),
    slot: text('slot').notNull(),
    connectionId: text('connection_id')
      .notNull()
      .references(() => connections.id, { onDelete: 'cascade' }),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.flowId, t.target, t.slot] })],
);

export const installations = pgTable(
  'installations',
  {
    id: text('id').primaryKey(),
    /** The installing workspace: the installation belongs to it. */
    workspaceId: workspaceRef(),
    sourceWorkspaceId: text('source_workspace_id')
      .notNull()
      .references(() => workspaces.id, { onDelete: 'cascade' }),
    sourceFlowId: text('source_flow_id')
      .notNull()
      .references(() => flows.id, { onDelete: 'cascade' }),
    sourceFlowSlug: text('source_flow_slug').notNull(),
    versionPolicy: text('version_policy').$type<'pinned' | 'track-latest'>().notNull(),
    pinnedVersion: integer('pinned_version'),
    enabled: boolean('enabled').notNull().default(false),
    trustMetadata: boolean('trust_metadata').notNull().default(false),
    /** `metadataSha256` of the version the installer reviewed when opting in: the opt-in covers that metadata only. */
    trustedMetadataSha256: text('trusted_metadata_sha256'),
    slotBindings: jsonb('slot_bindings').$type<Record<string, string>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('installations_ws_idx').on(t.workspaceId, t.sourceFlowSlug)],
);

export const runs = pgTable(
  'runs',
  {
    id: text('id').primaryKey(),
    workspaceId: workspaceRef(),
    flowId: text('flow_id').notNull(),
    flowSlug: text('flow_slug').notNull(),
    /** Whose flow runs: this workspace's own, or for an installation the source workspace. */
    definitionWorkspaceId: text('definition_workspace_id').notNull(),
    installationId: text('installation_id'),
    /** The released version that runs; null for a draft run (its text is in `draftLiteral`). */
    version: integer('version'),
    target: text('target').$type<'live' | 'draft'>().notNull(),
    /** The draft as it was when the run started: drafts change, a run must not. */
    draftLiteral: text('draft_literal'),
    toolName: text('tool_name'),
    invocation: text('invocation').notNull(),
    status: text('status').$type<RunStatus>().notNull(),
    input: jsonb('input').notNull(),
    /** Names of the invocation's secret-typed inputs: never shown, redacted from everything the run lets out. */
    secretInputs: jsonb('secret_inputs').$type<string[]>().notNull().default([]),
    result: jsonb('result'),
    resultMime: text('result_mime'),
    error: jsonb('error').$type<{ code: string; message: string; stepId?: string } | null>(),
    /** `:concurrency`: runs sharing a key run one at a time (see `run_slots`). */
    concurrencyKey: text('concurrency_key'),
    principalType: text('principal_type'),
    principalId: text('principal_id'),
    /** A caller's retry key: starting a run again with the same key returns the same run. */
    idempotencyKey: text('idempotency_key'),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: ts('lease_expires_at'),
    wakeAt: ts('wake_at'),
    /** Set to stop a running run; the worker holding it sees it at its next lease renewal or notification. */
    cancelRequested: boolean('cancel_requested').notNull().default(false),
    /** The run's whole-life wall-time bound. */
    deadlineAt: ts('deadline_at'),
    /** Usage counters carried across attempts (steps, HTTP calls, LLM tokens). */
    usage: jsonb('usage').$type<Record<string, number>>().notNull().default({}),
    attempts: integer('attempts').notNull().default(0),
    /** W3C `traceparent` of the request that started the run: its execution continues that trace. */
    traceContext: text('trace_context'),
    createdAt: createdAt(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('runs_ws_created_idx').on(t.workspaceId, t.createdAt),
    index('runs_ws_flow_created_idx').on(t.workspaceId, t.flowSlug, t.createdAt),
    uniqueIndex('runs_ws_idempotency_uq')
      .on(t.workspaceId, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} is not null`),
    // What workers claim: the oldest queued runs, sleeps that are due, and running runs whose lease expired.
    index('runs_queued_idx').on(t.createdAt).where(sql`${t.status} = 'queued'`),
    index('runs_waiting_idx').on(t.wakeAt).where(sql`${t.status} = 'waiting'`),
    index('runs_leased_idx').on(t.leaseExpiresAt).where(sql`${t.status} = 'running'`),
  ],
);

/**
 * One row per `:concurrency` key in use: the run holding it is the one allowed to run (or sleep) under that key. A
 * claim inserts the row; the key's unique constraint makes two claims of the same key wait for each other.
 */
export const runSlots = pgTable(
  'run_slots',
  {
    workspaceId: workspaceRef(),
    concurrencyKey: text('concurrency_key').notNull(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.concurrencyKey] }), index('run_slots_run_idx').on(t.runId)],
);

/**
 * A run's steps: the journal replay reads (completed results, stored losslessly and unredacted except for known
 * secrets; durable waits with their wake time), and failed steps for inspection (never replayed).
 */
export const runSteps = pgTable(
  'run_steps',
  {
    workspaceId: workspaceRef(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    stepId: text('step_id').notNull(),
    type: text('type').notNull(),
    status: text('status').$type<StepStatus>().notNull(),
    result: jsonb('result'),
    error: jsonb('error').$type<{ code: string; message: string; stepId?: string } | null>(),
    wakeAt: ts('wake_at'),
    attempts: integer('attempts').notNull().default(0),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [primaryKey({ columns: [t.runId, t.stepId] }), index('run_steps_ws_idx').on(t.workspaceId, t.runId)],
);

export const runEvents = pgTable(
  'run_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workspaceId: workspaceRef(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    stepId: text('step_id'),
    stepType: text('step_type'),
    status: text('status'),
    detail: jsonb('detail'),
    at: ts('at').notNull().defaultNow(),
  },
  (t) => [index('run_events_ws_run_idx').on(t.workspaceId, t.runId, t.id)],
);

export const feedback = pgTable(
  'feedback',
  {
    id: text('id').primaryKey(),
    workspaceId: workspaceRef(),
    principalType: text('principal_type').notNull(),
    principalId: text('principal_id').notNull(),
    area: text('area').notNull(),
    summary: text('summary').notNull(),
    details: text('details'),
    resourceUri: text('resource_uri'),
    runId: text('run_id'),
    flowSlug: text('flow_slug'),
    context: jsonb('context'),
    createdAt: createdAt(),
  },
  (t) => [index('feedback_ws_idx').on(t.workspaceId, t.createdAt)],
);

export const auditEntries = pgTable(
  'audit_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    workspaceId: text('workspace_id').notNull(),
    at: ts('at').notNull().defaultNow(),
    requestId: text('request_id'),
    principalType: text('principal_type').notNull(),
    principalId: text('principal_id').notNull(),
    keyId: text('key_id'),
    /** `tools/call`, `resources/read`, `prompts/get` or `admin`. */
    kind: text('kind').notNull(),
    /** Tool name, resource URI or admin action name. */
    action: text('action').notNull(),
    arguments: jsonb('arguments'),
    outcome: text('outcome').$type<'ok' | 'error' | 'blocked' | 'denied'>().notNull(),
    /** The tool-error, JSON-RPC or admin error code when the outcome is not `ok`. */
    errorCode: text('error_code'),
    blockers: jsonb('blockers'),
    runId: text('run_id'),
    resourceUris: jsonb('resource_uris').$type<string[]>(),
    reason: text('reason'),
    clientName: text('client_name'),
    clientVersion: text('client_version'),
    /** The MCP protocol version the call was served under; null for admin actions. */
    protocolVersion: text('protocol_version'),
    durationMs: integer('duration_ms'),
    /** Identical refused calls from one caller within a short window share one row; this is how many. */
    count: integer('count').notNull().default(1),
  },
  (t) => [index('audit_ws_id_idx').on(t.workspaceId, t.id), index('audit_at_idx').on(t.at)],
);

export const workspaceMcpPolicies = pgTable('workspace_mcp_policies', {
  workspaceId: text('workspace_id')
    .primaryKey()
    .references(() => workspaces.id, { onDelete: 'cascade' }),
  readOnly: boolean('read_only').notNull().default(false),
  disabledTools: jsonb('disabled_tools').$type<string[]>().notNull().default([]),
  allowedOrigins: jsonb('allowed_origins').$type<string[]>().notNull().default([]),
  allowedIps: jsonb('allowed_ips').$type<string[]>().notNull().default([]),
  /** Requests a minute per key or user in this workspace; null: the deployment's FLOWGATE_RATE_LIMIT_KEY_PER_MIN. */
  rateLimitPerMinute: integer('rate_limit_per_minute'),
  /** Quotas (null: none): run starts per UTC month, LLM tokens per UTC month, MCP tool calls per UTC day. */
  quotaRunsPerMonth: integer('quota_runs_per_month'),
  quotaLlmTokensPerMonth: bigint('quota_llm_tokens_per_month', { mode: 'number' }),
  quotaToolCallsPerDay: integer('quota_tool_calls_per_day'),
  updatedAt: ts('updated_at').notNull().defaultNow(),
});

/**
 * What a workspace used of each quota in one period (a UTC day or month, by its start). Enforcement reads and bumps
 * these rows in the statement that admits the work, never the usage rollups (batched, so behind). Only periods a
 * quota was set in have a row; the last two periods of each quota are kept.
 */
export const workspaceQuotaCounters = pgTable(
  'workspace_quota_counters',
  {
    workspaceId: workspaceRef(),
    quota: text('quota').$type<'runsPerMonth' | 'llmTokensPerMonth' | 'toolCallsPerDay'>().notNull(),
    periodStart: ts('period_start').notNull(),
    used: bigint('used', { mode: 'number' }).notNull().default(0),
  },
  // Pruned per workspace and quota when a period's first row is written (repos/quotas.ts): the key serves that too.
  (t) => [primaryKey({ columns: [t.workspaceId, t.quota, t.periodStart] })],
);

export const kvEntries = pgTable(
  'kv_entries',
  {
    workspaceId: workspaceRef(),
    key: text('key').notNull(),
    value: jsonb('value'),
    expiresAt: ts('expires_at'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.key] })],
);

/**
 * Admin console sign-ins. `kind` is `session` (a browser's cookie) or `code` (a one-time sign-in link, traded for a
 * session once). Only a SHA-256 of the secret is stored, so a database read never yields a usable cookie or link.
 * `principal` is what the console acts as (the operator, or a user with workspace roles), `workspaces` the ids it
 * may open (`*` for the operator).
 */
export const consoleSessions = pgTable(
  'console_sessions',
  {
    idHash: text('id_hash').primaryKey(),
    kind: text('kind').$type<'session' | 'code'>().notNull(),
    principal: jsonb('principal').notNull(),
    workspaces: jsonb('workspaces').$type<string[]>().notNull(),
    createdAt: createdAt(),
    expiresAt: ts('expires_at').notNull(),
    /** Sign-out, or the moment a code was used. */
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('console_sessions_expires_idx').on(t.expiresAt)],
);

/**
 * Approvals by elicitation that released something (workspace-mcp approval.ts): the SHA-256 of each accepted sealed
 * `requestState`, written in the release's own transaction, so a state releases once across every replica — a replay
 * or a concurrent second retry finds the row and releases nothing. Kept until the state expires (then it cannot be
 * opened anyway); later releases delete the expired rows of their workspace.
 */
export const approvalUses = pgTable(
  'approval_uses',
  {
    workspaceId: workspaceRef(),
    stateSha256: text('state_sha256').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.stateSha256] }),
    index('approval_uses_expires_idx').on(t.workspaceId, t.expiresAt),
  ],
);

/**
 * Backfills a database has had (`runBackfills` in maintenance.ts): one row per named backfill, written when it
 * completed, so starting a process does not scan tables for rows older versions wrote once it is done.
 */
export const backfills = pgTable('backfills', {
  name: text('name').primaryKey(),
  /** Rows the completing run filled. */
  rowsFilled: integer('rows_filled').notNull(),
  completedAt: ts('completed_at').notNull().defaultNow(),
});

/**
 * Upper bounds (ms) of the fixed duration buckets of `usage_calls` (`d0`..`d11`): roughly log-spaced, the last one
 * open-ended. Fixed buckets merge by addition, so any set of rows (hours, keys, replicas) sums to one histogram.
 */
export const USAGE_DURATION_BOUNDS_MS = [
  5,
  10,
  25,
  50,
  100,
  250,
  500,
  1_000,
  2_500,
  5_000,
  10_000,
  null,
] as const;

const durationBuckets = () => ({
  d0: integer('d0').notNull().default(0),
  d1: integer('d1').notNull().default(0),
  d2: integer('d2').notNull().default(0),
  d3: integer('d3').notNull().default(0),
  d4: integer('d4').notNull().default(0),
  d5: integer('d5').notNull().default(0),
  d6: integer('d6').notNull().default(0),
  d7: integer('d7').notNull().default(0),
  d8: integer('d8').notNull().default(0),
  d9: integer('d9').notNull().default(0),
  d10: integer('d10').notNull().default(0),
  d11: integer('d11').notNull().default(0),
});

/**
 * MCP requests per workspace × hour × dimensions, written in batches by the gateway's usage meter (upserts add).
 * Dimensions are never null (`''` when absent) so they can form the key. Not a foreign key to `workspaces`: like the
 * audit log, usage of a workspace deleted meanwhile is dropped by retention, and an upsert never fails on it.
 */
export const usageCalls = pgTable(
  'usage_calls',
  {
    workspaceId: text('workspace_id').notNull(),
    /** Start of the UTC hour. */
    hour: ts('hour').notNull(),
    /** The JSON-RPC method (`tools/call`, `tools/list`, `initialize`, ...). */
    method: text('method').notNull(),
    /** The tool name for `tools/call`, else `''`. */
    tool: text('tool').notNull(),
    /** The API key id, `jwt:<sub>` for a token's subject, or the principal id otherwise. */
    principal: text('principal').notNull(),
    /** The client's name from `initialize` (`''` when unknown). */
    client: text('client').notNull(),
    outcome: text('outcome').$type<'ok' | 'error' | 'blocked' | 'rate_limited'>().notNull(),
    count: integer('count').notNull(),
    ...durationBuckets(),
  },
  (t) => [
    primaryKey({
      columns: [t.workspaceId, t.hour, t.method, t.tool, t.principal, t.client, t.outcome],
    }),
    index('usage_calls_hour_idx').on(t.hour),
  ],
);

/** Runs per workspace × hour × flow: starts counted when started, the rest when the run settled. */
export const usageRuns = pgTable(
  'usage_runs',
  {
    workspaceId: text('workspace_id').notNull(),
    hour: ts('hour').notNull(),
    flow: text('flow').notNull(),
    started: integer('started').notNull().default(0),
    completed: integer('completed').notNull().default(0),
    failed: integer('failed').notNull().default(0),
    cancelled: integer('cancelled').notNull().default(0),
    steps: integer('steps').notNull().default(0),
    httpCalls: integer('http_calls').notNull().default(0),
    llmTokens: bigint('llm_tokens', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.hour, t.flow] }), index('usage_runs_hour_idx').on(t.hour)],
);

/**
 * Usage batches already applied, written in the batch's own transaction: a batch retried after its acknowledgement
 * was lost finds its id here and adds nothing again. Kept for days (retries come within seconds), then pruned.
 */
export const usageBatches = pgTable(
  'usage_batches',
  {
    id: text('id').primaryKey(),
    appliedAt: ts('applied_at').notNull().defaultNow(),
  },
  (t) => [index('usage_batches_applied_idx').on(t.appliedAt)],
);
