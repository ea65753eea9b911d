import { capabilitySchema } from '@flowgate/auth/capabilities';
import { z } from 'zod';

/** The toolsets a client may name in `X-MCP-Toolsets`; every one is known even before its tools exist. */
export const TOOLSETS = [
  'context',
  'read',
  'search',
  'run',
  'setup',
  'authoring',
  'release',
  'debug',
  'feedback',
] as const;
export type Toolset = (typeof TOOLSETS)[number];

export const TOOLSET_DESCRIPTIONS: Readonly<Record<Toolset, string>> = Object.freeze({
  context: 'Where you are: workspace, principal, capabilities, narrowing, limits and docs.',
  read: 'Read-only inspection of flows, connections, runs and references.',
  search: 'Find workspace flows, installed flows and callable flow tools.',
  run: 'Start runs through flow MCP interfaces and follow them.',
  setup: 'Connections, connection health and flow readiness.',
  authoring: 'Pull, validate and write flow drafts.',
  release: 'Release approved flow versions to the workspace live target.',
  debug: 'Inspect runs, steps and definitions to explain failures.',
  feedback: 'Report friction with docs, setup, runtime or flow interfaces.',
});

// The capability names come from auth's own list; the subpath keeps JWT code out of this package.
export const capabilityNameSchema = capabilitySchema;

/**
 * Why a tool is hidden (docs/mcp-surface.md, "Who sees which tool"). One entry per applicable reason, so scopes and
 * narrowing can be fixed separately.
 */
export const blockerSchema = z.discriminatedUnion('reason', [
  z.strictObject({
    reason: z.literal('missing_service_account_capabilities'),
    missingCapabilities: z.array(capabilityNameSchema),
  }),
  z.strictObject({ reason: z.literal('read_only_policy') }),
  z.strictObject({
    reason: z.literal('toolset_policy'),
    toolToolsets: z.array(z.enum(TOOLSETS)),
    activeToolsets: z.array(z.enum(TOOLSETS)),
  }),
  z.strictObject({ reason: z.literal('include_tools_policy') }),
  z.strictObject({ reason: z.literal('exclude_tools_policy') }),
  z.strictObject({ reason: z.literal('workspace_read_only_policy') }),
  z.strictObject({ reason: z.literal('workspace_disabled_tool') }),
]);
export type Blocker = z.infer<typeof blockerSchema>;
export type BlockerReason = Blocker['reason'];

export const BLOCKER_REASONS: readonly BlockerReason[] = [
  'missing_service_account_capabilities',
  'read_only_policy',
  'toolset_policy',
  'include_tools_policy',
  'exclude_tools_policy',
  'workspace_read_only_policy',
  'workspace_disabled_tool',
];

/**
 * `structuredContent` of every `isError` tool result. It is part of each tool's advertised output schema
 * because SDK v1 clients validate `structuredContent` against the output schema even on error results.
 */
export const toolErrorSchema = z.strictObject({
  error: z.strictObject({ code: z.string(), message: z.string() }),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ToolErrorContent = z.infer<typeof toolErrorSchema>;
