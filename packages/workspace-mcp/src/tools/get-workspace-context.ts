import { z } from 'zod';
import { workspaceResourceUri } from '../resource-catalog.js';
import { blockerSchema, capabilityNameSchema, TOOLSETS } from '../schemas.js';
import { defineTool } from '../tool.js';
import { buildWorkspaceContext } from '../workspace-context.js';

const narrowingOutputSchema = z.strictObject({
  toolsets: z.array(z.enum(TOOLSETS)).nullable(),
  tools: z.array(z.string()).nullable(),
  excludeTools: z.array(z.string()),
  readOnly: z.boolean(),
});

export const getWorkspaceContextTool = defineTool({
  name: 'get_workspace_context',
  title: 'Get workspace context',
  description:
    'Describe this connection: workspace, your principal and capabilities, toolsets, capability groups, ' +
    'effective narrowing (X-MCP-* headers, workspace policy), hidden tools and their blockers, limits, docs ' +
    'resources and versions. Call it first in a new session, or when an expected tool is missing.',
  toolsets: ['context', 'read'],
  capabilities: [],
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
}).handle(async (_args, ctx) => ({
  output: await buildWorkspaceContext(ctx),
  resourceUris: [workspaceResourceUri(ctx.request.workspaceId)],
}));
