import { z } from 'zod';
import { cursorArg, pageLimitArg, queryArg, readOnlyFlowAnnotations } from '../args.js';
import { includeInstalled } from '../context.js';
import {
  flowEntry,
  flowEntrySchema,
  installedFlowsSchema,
  templateEntry,
  templateEntrySchema,
} from '../flow-outputs.js';
import { LIMITS } from '../limits.js';
import { metadataSafetyNotes, metadataSafetyNotesSchema } from '../metadata-safety.js';
import { defineTool, openBoundCursor, sealBoundCursor } from '../tool.js';

export const searchFlowsTool = defineTool({
  name: 'search_flows',
  title: 'Search flows',
  description:
    "Find flows: this workspace's own, installed public ones (needs installations.read) and templates. query " +
    'ranks; omit it to browse. Each flow: slug, origin, versions, MCP tool names, metadataSafety; untrusted ' +
    'author text is null unless opted in. Templates (first page) are EDN to adapt (create_flow_draft). For ' +
    'callable tools use search_flow_tools.',
  toolsets: ['read', 'search'],
  capabilities: ['flows.read'],
  input: z.strictObject({
    query: queryArg.optional(),
    include_templates: z
      .boolean()
      .default(true)
      .describe('Also return matching templates (first page only).'),
    limit: pageLimitArg(LIMITS.searchFlowsMaxLimit, LIMITS.searchFlowsDefaultLimit),
    cursor: cursorArg.optional(),
  }),
  output: z.strictObject({
    flows: z.array(flowEntrySchema),
    templates: z.array(templateEntrySchema),
    metadataSafetyNotes: metadataSafetyNotesSchema,
    installedFlows: installedFlowsSchema,
    nextCursor: z.string().nullable(),
  }),
  annotations: readOnlyFlowAnnotations,
}).handle(async (args, ctx) => {
  const query = args.query ?? null;
  const installed = includeInstalled(ctx);
  // The cursor is bound to the query and to whether installations are included, so pages never mix.
  const binding = `${installed ? 'i' : 'o'}:${query ?? ''}`;
  const after = openBoundCursor(ctx, 'search_flows', args.cursor, binding);
  const page = await ctx.workspace.flows.search({
    query,
    includeInstalled: installed,
    limit: args.limit,
    after,
  });
  const flows = page.items.slice(0, args.limit).map(flowEntry);
  const templates =
    args.include_templates && after === null ? ctx.workspace.flows.templates(query).map(templateEntry) : [];
  const output = {
    flows,
    templates,
    metadataSafetyNotes: metadataSafetyNotes([...flows, ...templates].map((e) => e.metadataSafety)),
    installedFlows: installed ? ('included' as const) : ('omitted_missing_installations_read' as const),
    nextCursor: sealBoundCursor(ctx, 'search_flows', page.nextAfter, binding),
  };
  return {
    output,
    resourceUris: flows.map((f) => f.resourceUri),
    // Templates are a first-page convenience (complete literals); over the cap they go first, flows stay.
    bound: () =>
      templates.length === 0
        ? null
        : {
            ...output,
            templates: [],
            metadataSafetyNotes: metadataSafetyNotes(flows.map((f) => f.metadataSafety)),
          },
  };
});
