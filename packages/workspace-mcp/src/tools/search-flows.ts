import type { searchFlowsTool } from '../catalog.js';
import { flowEntry, includeInstalled, matchingTemplates } from '../flow-views.js';
import { openBoundCursor, sealBoundCursor, type ToolHandler } from './types.js';

export const searchFlows: ToolHandler<typeof searchFlowsTool> = async (args, ctx) => {
  const query = args.query ?? null;
  const installed = includeInstalled(ctx);
  // The cursor is bound to the query and to whether installations are included, so pages never mix.
  const binding = `${installed ? 'i' : 'o'}:${query ?? ''}`;
  const after = openBoundCursor(ctx, 'search_flows', args.cursor, binding);
  const page = await ctx.request.services.searchFlows({
    query,
    includeInstalled: installed,
    limit: args.limit,
    after,
  });
  const flows = page.items.slice(0, args.limit).map(flowEntry);
  const templates = args.include_templates && after === null ? matchingTemplates(query) : [];
  return {
    output: {
      flows,
      templates,
      installedFlows: installed ? 'included' : 'omitted_missing_installations_read',
      nextCursor: sealBoundCursor(ctx, 'search_flows', page.nextAfter, binding),
    },
    resourceUris: flows.map((f) => f.resourceUri),
  };
};
