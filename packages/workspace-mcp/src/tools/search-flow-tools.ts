import type { searchFlowToolsTool } from '../catalog.js';
import { flowToolEntry, includeInstalled } from '../flow-views.js';
import { openBoundCursor, sealBoundCursor, type ToolHandler } from './types.js';

export const searchFlowTools: ToolHandler<typeof searchFlowToolsTool> = async (args, ctx) => {
  const query = args.query ?? null;
  const toolName = args.tool_name ?? null;
  const mode = toolName !== null ? 'exact' : query !== null ? 'search' : 'browse';
  const installed = includeInstalled(ctx);
  // Draft interfaces can only be run with flows.manage; others see what runs live.
  const drafts = ctx.request.capabilities.has('flows.manage');
  const binding = `${installed ? 'i' : 'o'}${drafts ? 'd' : 'l'}:${mode}:${toolName ?? query ?? ''}`;
  const after = openBoundCursor(ctx, 'search_flow_tools', args.cursor, binding);
  const page = await ctx.request.services.searchFlowTools({
    query,
    toolName,
    includeDraft: drafts,
    includeInstalled: installed,
    limit: args.limit,
    after,
  });
  const tools = page.items
    .slice(0, args.limit)
    // An exact lookup returns only that name, whatever the services matched.
    .filter((hit) => toolName === null || hit.toolName === toolName)
    .map(flowToolEntry);
  return {
    output: {
      mode,
      tools,
      installedFlows: installed ? 'included' : 'omitted_missing_installations_read',
      nextCursor: sealBoundCursor(ctx, 'search_flow_tools', page.nextAfter, binding),
    },
    resourceUris: tools.map((t) => t.resourceUri),
  };
};
