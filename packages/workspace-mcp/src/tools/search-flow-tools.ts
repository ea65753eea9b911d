import { z } from 'zod';
import { cursorArg, pageLimitArg, queryArg, readOnlyFlowAnnotations, toolNameArg } from '../args.js';
import { includeInstalled } from '../context.js';
import { flowToolEntry, flowToolEntrySchema, installedFlowsSchema } from '../flow-outputs.js';
import { LIMITS } from '../limits.js';
import { metadataSafetyNotes, metadataSafetyNotesSchema } from '../metadata-safety.js';
import { evaluateTool } from '../policy.js';
import { defineTool, openBoundCursor, sealBoundCursor } from '../tool.js';

export const searchFlowToolsTool = defineTool({
  name: 'search_flow_tools',
  title: 'Search flow tools',
  description:
    'Find callable flow tools (:mcp interfaces) of own and installed flows (needs installations.read): ' +
    'tool_name for an exact lookup, query to rank, neither to browse. Each hit: flow_slug, tool_name, ' +
    'installation id, source (live/draft), resource URI, metadataSafety; authored text is null unless opted in. ' +
    'Then inspect_flow_tool for the input schema.',
  toolsets: ['read', 'search', 'run'],
  capabilities: ['flows.read'],
  input: z
    .strictObject({
      query: queryArg.optional(),
      tool_name: toolNameArg.optional().describe('Exact name: every flow declaring it.'),
      limit: pageLimitArg(LIMITS.searchFlowToolsMaxLimit, LIMITS.searchFlowToolsDefaultLimit),
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
    /** Whether call_flow_tool is available in this session; the same for every hit, so said once. */
    callable: z.boolean(),
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
  // Hits are only callable where call_flow_tool is (capabilities, narrowing, policy): get_workspace_context says why not.
  const callFlowTool = ctx.catalog.find((t) => t.name === 'call_flow_tool');
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
      callable: callFlowTool !== undefined && evaluateTool(callFlowTool, ctx.request).visible,
      installedFlows: installed ? 'included' : 'omitted_missing_installations_read',
      nextCursor: sealBoundCursor(ctx, 'search_flow_tools', page.nextAfter, binding),
    },
    resourceUris: tools.map((t) => t.resourceUri),
  };
});
