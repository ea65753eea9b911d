import { z } from 'zod';
import { cursorArg, queryArg, readOnlyFlowAnnotations, toolNameArg } from '../args.js';
import { includeInstalled } from '../context.js';
import {
  flowToolEntry,
  flowToolEntrySchema,
  installedFlowsSchema,
  metadataSafetyNotes,
  metadataSafetyNotesSchema,
} from '../flow-outputs.js';
import { LIMITS } from '../limits.js';
import { defineTool, openBoundCursor, sealBoundCursor } from '../tool.js';

export const searchFlowToolsTool = defineTool({
  name: 'search_flow_tools',
  title: 'Search flow tools',
  description:
    "Find callable flow tools: the :interfaces :mcp entries of this workspace's flows and of installed public " +
    'flows (with installations.read). Three modes: tool_name for an exact lookup, query for ranked text search, ' +
    'neither to browse. Entries are concise: flow_slug, tool_name, installation id, source (live or draft only), ' +
    'the flowgate://flows/{slug}/mcp-tools/{tool_name} resource URI and metadataSafety; flow-authored titles and ' +
    'descriptions are omitted (authored is null) unless an installer or workspace admin opted in. Results are ' +
    'advisory and paginated: call inspect_flow_tool for the input schema and readiness before using a tool.',
  toolsets: ['read', 'search', 'run'],
  capabilities: ['flows.read'],
  input: z
    .strictObject({
      query: queryArg.optional(),
      tool_name: toolNameArg.optional().describe('Exact tool name to look up (all flows declaring it).'),
      limit: z
        .number()
        .int()
        .min(1)
        .max(LIMITS.searchFlowToolsMaxLimit)
        .default(LIMITS.searchFlowToolsDefaultLimit)
        .describe(`Page size, 1–${LIMITS.searchFlowToolsMaxLimit}.`),
      cursor: cursorArg.optional(),
    })
    .refine((a) => !(a.query !== undefined && a.tool_name !== undefined), {
      message: 'give either query (text search) or tool_name (exact lookup), not both',
      path: ['tool_name'],
    }),
  output: z.strictObject({
    mode: z.enum(['exact', 'search', 'browse']),
    tools: z.array(flowToolEntrySchema),
    metadataSafetyNotes: metadataSafetyNotesSchema,
    installedFlows: installedFlowsSchema,
    nextCursor: z.string().nullable(),
  }),
  annotations: readOnlyFlowAnnotations,
}).handle(async (args, ctx) => {
  const query = args.query ?? null;
  const toolName = args.tool_name ?? null;
  const mode = toolName !== null ? 'exact' : query !== null ? 'search' : 'browse';
  const installed = includeInstalled(ctx);
  // Draft interfaces can only be run with flows.manage; others see what runs live.
  const drafts = ctx.request.capabilities.has('flows.manage');
  const binding = `${installed ? 'i' : 'o'}${drafts ? 'd' : 'l'}:${mode}:${toolName ?? query ?? ''}`;
  const after = openBoundCursor(ctx, 'search_flow_tools', args.cursor, binding);
  const page = await ctx.workspace.flows.searchTools({
    query,
    toolName,
    includeDraft: drafts,
    includeInstalled: installed,
    limit: args.limit,
    after,
  });
  const tools = page.items
    .slice(0, args.limit)
    // An exact lookup returns only that name, whatever the search matched.
    .filter((hit) => toolName === null || hit.toolName === toolName)
    .map(flowToolEntry);
  return {
    output: {
      mode,
      tools,
      metadataSafetyNotes: metadataSafetyNotes(tools.map((t) => t.metadataSafety)),
      installedFlows: installed ? 'included' : 'omitted_missing_installations_read',
      nextCursor: sealBoundCursor(ctx, 'search_flow_tools', page.nextAfter, binding),
    },
    resourceUris: tools.map((t) => t.resourceUri),
  };
});
