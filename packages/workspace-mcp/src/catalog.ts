/**
 * The tool catalog: the single source of truth for every tool the workspace MCP endpoint lists, the server
 * card publishes and the docs tabulate. A tool is one `defineTool` entry plus its handler in `tools/`.
 *
 * Only tools whose behaviour exists are listed. The rest of the spec's 16-tool catalog (search_flows,
 * search_flow_tools, inspect_flow_tool, call_flow_tool, get_run_status, inspect_run_step,
 * check_flow_readiness, get_step_reference, validate_flow_definition, get_flow_definition,
 * create_flow_draft, release_flow) joins as one entry each when flows and runs are served; until then
 * their names are unknown to narrowing and to tools/call.
 *
 * JSON Schemas are computed once, here, at module load: converting zod schemas per request is what makes
 * SDK servers slow (notes/performance.md).
 */
import type { Capability } from '@flowgate/auth';
import { FLOW_SLUG_PATTERN } from '@flowgate/core';
import { z } from 'zod';
import { LIMITS } from './limits.js';
import { blockerSchema, capabilityNameSchema, TOOLSETS, type Toolset, toolErrorSchema } from './schemas.js';

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** A JSON Schema object as sent to clients (root `type: "object"`, no `$schema`). */
export type JsonSchemaObject = { type: 'object' } & Record<string, unknown>;

/** The entry `tools/list` and the server card publish for a tool. Built once per tool. */
export interface ToolDescriptor {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchemaObject;
  outputSchema: JsonSchemaObject;
  annotations: ToolAnnotations;
}

export interface ToolSpec<N extends string, I extends z.ZodType, O extends z.ZodType> {
  name: N;
  title: string;
  /** Fixed, server-authored text written for agents. */
  description: string;
  toolsets: readonly Toolset[];
  /** Every listed capability is required (after `workspace.full` expansion). */
  capabilities: readonly Capability[];
  /** Runs flows, writes drafts, releases or otherwise writes: hidden under X-MCP-Readonly / workspace read-only. */
  mutating: boolean;
  /** A mutating tool that read-only sessions keep anyway (only send_feedback: support sessions must report friction). */
  readOnlyExempt?: boolean;
  /** Strict object of snake_case arguments with bounded sizes. */
  input: I;
  /** Strict object of the success `structuredContent`. */
  output: O;
  annotations: Omit<ToolAnnotations, 'title'>;
}

export interface ToolDefinition<
  N extends string = string,
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
> extends Readonly<ToolSpec<N, I, O>> {
  readonly readOnlyExempt: boolean;
  readonly annotations: ToolAnnotations;
  /** JSON Schema of the arguments (input view: defaults are not required). */
  readonly inputSchema: JsonSchemaObject;
  /** JSON Schema of `structuredContent`: the success shape or the tool-error shape. */
  readonly outputSchema: JsonSchemaObject;
  readonly descriptor: ToolDescriptor;
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return rest;
}

const TOOL_ERROR_JSON_SCHEMA = jsonSchemaOf(toolErrorSchema, 'output');

export function defineTool<const N extends string, I extends z.ZodType, O extends z.ZodType>(
  spec: ToolSpec<N, I, O>,
): ToolDefinition<N, I, O> {
  const inputSchema = jsonSchemaOf(spec.input, 'input');
  if (inputSchema.type !== 'object') throw new Error(`${spec.name}: input schema must be an object`);
  const success = jsonSchemaOf(spec.output, 'output');
  if (success.type !== 'object') throw new Error(`${spec.name}: output schema must be an object`);
  // Error results carry structuredContent too (spec 4); SDK v1 clients validate it against this schema even
  // when isError is set, so both shapes are declared. The root stays `type: "object"` as MCP requires.
  const outputSchema: JsonSchemaObject = { type: 'object', anyOf: [success, TOOL_ERROR_JSON_SCHEMA] };
  const annotations: ToolAnnotations = { title: spec.title, ...spec.annotations };
  const descriptor: ToolDescriptor = Object.freeze({
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: inputSchema as JsonSchemaObject,
    outputSchema,
    annotations,
  });
  return Object.freeze({
    ...spec,
    readOnlyExempt: spec.readOnlyExempt ?? false,
    toolsets: Object.freeze([...spec.toolsets]),
    capabilities: Object.freeze([...spec.capabilities]),
    annotations,
    inputSchema: inputSchema as JsonSchemaObject,
    outputSchema,
    descriptor,
  });
}

// ---- shared output pieces ---------------------------------------------------------------------------------

const cursorArg = z
  .string()
  .min(1)
  .max(LIMITS.cursorMaxChars)
  .describe('Opaque cursor from a previous page (nextCursor). Omit for the first page.');

const connectionTypeSchema = z.enum(['http-api', 'llm-provider', 'secret']);

export const connectionSummarySchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  type: connectionTypeSchema,
  baseUrl: z.string().nullable(),
  authType: z.string(),
  status: z.enum(['active', 'disabled']),
  health: z
    .strictObject({
      ok: z.boolean(),
      checkedAt: z.string(),
      httpStatus: z.number().int().nullable(),
      message: z.string().nullable(),
    })
    .nullable(),
  /** Names of the non-secret config entries; values are never returned. */
  configKeys: z.array(z.string()),
  boundSlots: z.array(z.strictObject({ flowSlug: z.string(), slot: z.string(), target: z.string() })),
  createdAt: z.string(),
});
export type ConnectionSummary = z.infer<typeof connectionSummarySchema>;

export const connectionCheckSchema = z.strictObject({
  connectionId: z.string(),
  name: z.string(),
  type: connectionTypeSchema,
  ok: z.boolean(),
  status: z.enum(['healthy', 'unhealthy', 'disabled']),
  httpStatus: z.number().int().nullable(),
  latencyMs: z.number().nullable(),
  message: z.string().nullable(),
  checkedAt: z.string(),
});
export type ConnectionCheck = z.infer<typeof connectionCheckSchema>;

export const FEEDBACK_AREAS = ['mcp', 'docs', 'runtime', 'flow-interface', 'setup', 'other'] as const;

const narrowingOutputSchema = z.strictObject({
  toolsets: z.array(z.enum(TOOLSETS)).nullable(),
  tools: z.array(z.string()).nullable(),
  excludeTools: z.array(z.string()),
  readOnly: z.boolean(),
});

// ---- the tools --------------------------------------------------------------------------------------------

export const getWorkspaceContextTool = defineTool({
  name: 'get_workspace_context',
  title: 'Get workspace context',
  description:
    'Describe this Flowgate workspace MCP connection: the workspace, the principal you are authenticated as, ' +
    'its granted capabilities, the active and available toolsets, which capability groups are satisfied, the ' +
    'effective narrowing (X-MCP-* headers and workspace policy), which tools are hidden and the blockers that ' +
    'hide them, size limits, the MCP docs resources, and the protocol and server versions. Call it first in a ' +
    'new session or whenever a tool you expected is missing. Takes no arguments and changes nothing.',
  toolsets: ['context', 'read'],
  capabilities: [],
  mutating: false,
  input: z.strictObject({}),
  output: z.strictObject({
    workspace: z.strictObject({ id: z.string(), name: z.string() }),
    principal: z.strictObject({
      kind: z.enum(['service_account', 'user', 'operator']),
      id: z.string(),
      name: z.string().nullable(),
    }),
    capabilities: z.array(capabilityNameSchema),
    toolsets: z.strictObject({
      active: z.array(z.enum(TOOLSETS)),
      available: z.array(
        z.strictObject({ name: z.enum(TOOLSETS), description: z.string(), tools: z.array(z.string()) }),
      ),
    }),
    capabilityGroups: z.array(
      z.strictObject({
        id: z.string(),
        title: z.string(),
        capabilities: z.array(capabilityNameSchema),
        satisfied: z.boolean(),
        missingCapabilities: z.array(capabilityNameSchema),
        use: z.string(),
      }),
    ),
    narrowing: narrowingOutputSchema,
    workspacePolicy: z.strictObject({ readOnly: z.boolean(), disabledTools: z.array(z.string()) }),
    tools: z.strictObject({
      visible: z.array(z.string()),
      hidden: z.array(z.strictObject({ tool: z.string(), blockers: z.array(blockerSchema) })),
    }),
    limits: z.record(z.string(), z.number()),
    docs: z.array(z.strictObject({ uri: z.string(), title: z.string() })),
    protocol: z.strictObject({ version: z.string(), supportedVersions: z.array(z.string()) }),
    server: z.strictObject({ name: z.string(), title: z.string(), version: z.string() }),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
});

export const listConnectionsTool = defineTool({
  name: 'list_connections',
  title: 'List connections',
  description:
    "List the workspace's connections to outside systems (HTTP APIs, LLM providers, stored secrets), newest " +
    'first, one bounded page at a time. Each entry has id, name, type, base URL, auth kind, status, last known ' +
    'health, the names (never the values) of its non-secret config keys, and the flow slots it is bound to. ' +
    'Credentials are never returned. Pass nextCursor back as cursor for the next page. Use it before building ' +
    'or debugging a flow that calls an outside system, then check_connections on the ones that matter.',
  toolsets: ['read', 'setup'],
  capabilities: ['connections.read'],
  mutating: false,
  input: z.strictObject({
    limit: z
      .number()
      .int()
      .min(1)
      .max(LIMITS.listConnectionsMaxLimit)
      .default(LIMITS.listConnectionsDefaultLimit)
      .describe(`Page size, 1–${LIMITS.listConnectionsMaxLimit}.`),
    cursor: cursorArg.optional(),
  }),
  output: z.strictObject({
    connections: z.array(connectionSummarySchema),
    nextCursor: z.string().nullable(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
});

export const checkConnectionsTool = defineTool({
  name: 'check_connections',
  title: 'Check connections',
  description:
    `Health-check connections now: the ones named in connection_ids (up to ${LIMITS.checkConnectionsMaxIds}), or ` +
    'one bounded page of all connections (limit, cursor) when connection_ids is omitted. Each check is a small ' +
    'request defined by the connection type; per connection you get ok, status (healthy, unhealthy, disabled), ' +
    'the HTTP status and latency when a request was made, and a short redacted message. Ids that do not exist ' +
    'are listed in unknownConnectionIds instead of failing the call. Never exposes credentials. It makes ' +
    'outbound requests to the connected systems, so call it when setup matters, not in a loop.',
  toolsets: ['read', 'setup'],
  capabilities: ['connections.read'],
  mutating: false,
  input: z
    .strictObject({
      connection_ids: z
        .array(z.string().min(1).max(LIMITS.connectionIdMaxChars))
        .min(1)
        .max(LIMITS.checkConnectionsMaxIds)
        .optional()
        .describe('Connection ids from list_connections. Omit to check a page of all connections.'),
      limit: z
        .number()
        .int()
        .min(1)
        .max(LIMITS.checkConnectionsMaxLimit)
        .default(LIMITS.checkConnectionsDefaultLimit)
        .describe(`Page size when connection_ids is omitted, 1–${LIMITS.checkConnectionsMaxLimit}.`),
      cursor: cursorArg.optional(),
    })
    .refine((a) => !(a.connection_ids && a.cursor), {
      message: 'cursor pages through all connections; it cannot be combined with connection_ids',
      path: ['cursor'],
    }),
  output: z.strictObject({
    checks: z.array(connectionCheckSchema),
    unknownConnectionIds: z.array(z.string()),
    summary: z.strictObject({
      checked: z.number().int(),
      healthy: z.number().int(),
      unhealthy: z.number().int(),
      disabled: z.number().int(),
    }),
    nextCursor: z.string().nullable(),
  }),
  // Read-only for the workspace, but it reaches outside systems.
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
});

const feedbackContextValue = z.union([
  z.string().max(LIMITS.feedbackContextValueMaxChars),
  z.number(),
  z.boolean(),
  z.null(),
]);

export const sendFeedbackTool = defineTool({
  name: 'send_feedback',
  title: 'Send feedback',
  description:
    "Report friction with this MCP server to the workspace's operators: unclear docs, setup problems, runtime " +
    'errors or a confusing flow interface. Give a one-line summary, the details (what you did, what happened, ' +
    'what you expected) and an area (mcp, docs, runtime, flow-interface, setup, other); link the resource_uri, ' +
    'run_id or flow_slug it concerns instead of pasting payloads, and add small key/value context if useful. ' +
    'Secrets are redacted before storing, but never include tokens, API keys or private data. Available in ' +
    'read-only sessions too.',
  toolsets: ['feedback'],
  capabilities: ['feedback.send'],
  mutating: true,
  readOnlyExempt: true,
  input: z.strictObject({
    summary: z.string().trim().min(1).max(LIMITS.feedbackSummaryMaxChars).describe('Short issue title.'),
    details: z
      .string()
      .trim()
      .min(1)
      .max(LIMITS.feedbackDetailsMaxChars)
      .describe('What happened and what you expected.'),
    area: z.enum(FEEDBACK_AREAS).describe('Which part of the product the feedback is about.'),
    resource_uri: z
      .string()
      .min(1)
      .max(LIMITS.resourceUriMaxChars)
      .optional()
      .describe('A flowgate:// URI it concerns.'),
    run_id: z.string().min(1).max(128).optional(),
    flow_slug: z.string().regex(FLOW_SLUG_PATTERN).optional(),
    context: z
      .record(z.string().min(1).max(LIMITS.feedbackContextKeyMaxChars), feedbackContextValue)
      .refine((o) => Object.keys(o).length <= LIMITS.feedbackContextMaxKeys, {
        message: `at most ${LIMITS.feedbackContextMaxKeys} context entries`,
      })
      .meta({ maxProperties: LIMITS.feedbackContextMaxKeys })
      .optional()
      .describe('Small, redacted key/value context (no raw headers, tokens or payloads).'),
  }),
  output: z.strictObject({
    feedbackId: z.string(),
    receivedAt: z.string(),
    /** True when secret-looking values were removed before storing. */
    redacted: z.boolean(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
});

/** Listing order of tools/list and the server card. */
export const CATALOG = Object.freeze([
  getWorkspaceContextTool,
  listConnectionsTool,
  checkConnectionsTool,
  sendFeedbackTool,
] as const);

export type CatalogTool = (typeof CATALOG)[number];
export type ToolName = CatalogTool['name'];
export type AnyToolDefinition = ToolDefinition<string, z.ZodType, z.ZodType>;

export const TOOL_NAMES: readonly ToolName[] = Object.freeze(CATALOG.map((t) => t.name));

const BY_NAME: ReadonlyMap<string, CatalogTool> = new Map(CATALOG.map((t) => [t.name, t]));

export function getTool(name: string): CatalogTool | undefined {
  return BY_NAME.get(name);
}

export function isToolName(name: string): name is ToolName {
  return BY_NAME.has(name);
}

/** Tools of the catalog in each toolset (toolsets with no implemented tool yet have an empty list). */
export const TOOLS_BY_TOOLSET: Readonly<Record<Toolset, readonly ToolName[]>> = Object.freeze(
  Object.fromEntries(
    TOOLSETS.map((ts) => [ts, CATALOG.filter((t) => t.toolsets.includes(ts)).map((t) => t.name)]),
  ) as Record<Toolset, ToolName[]>,
);

/** Capability bundles an operator grants for common jobs (seed 003); get_workspace_context reports which hold. */
export const CAPABILITY_GROUPS: readonly {
  id: string;
  title: string;
  capabilities: readonly Capability[];
  use: string;
}[] = Object.freeze([
  {
    id: 'read_search',
    title: 'Read/search',
    capabilities: ['flows.read', 'resources.read', 'installations.read'],
    use: 'Discover flows, installed flows, MCP interfaces, docs and resource metadata.',
  },
  {
    id: 'setup_reference',
    title: 'Setup/reference',
    capabilities: ['flows.read', 'resources.read', 'installations.read', 'connections.read', 'steps.read'],
    use: 'Inspect connections, check their health and fetch focused step docs.',
  },
  {
    id: 'run_debug',
    title: 'Run/debug',
    capabilities: ['flows.read', 'resources.read', 'installations.read', 'flows.run', 'runs.read'],
    use: 'Start flow MCP interfaces, follow run status and events, inspect run steps.',
  },
  {
    id: 'draft_authoring',
    title: 'Draft authoring',
    capabilities: ['flows.read', 'resources.read', 'installations.read', 'flows.manage'],
    use: 'Validate definitions and create or update drafts.',
  },
  {
    id: 'release',
    title: 'Release',
    capabilities: ['flows.read', 'resources.read', 'installations.read', 'flows.manage'],
    use: 'Release an approved flow version to the workspace live target.',
  },
  {
    id: 'feedback',
    title: 'Feedback',
    capabilities: ['feedback.send'],
    use: 'Report docs, setup, runtime or flow-interface friction.',
  },
]);
