import { z } from 'zod';
import { cursorArg, queryArg, readOnlyFlowAnnotations } from '../args.js';
import { includeInstalled } from '../context.js';
import {
  flowEntry,
  flowEntrySchema,
  installedFlowsSchema,
  metadataSafetyNotes,
  metadataSafetyNotesSchema,
  templateEntry,
  templateEntrySchema,
} from '../flow-outputs.js';
import { LIMITS } from '../limits.js';
import { defineTool, openBoundCursor, sealBoundCursor } from '../tool.js';

export const searchFlowsTool = defineTool({
  name: 'search_flows',
  title: 'Search flows',
  description:
    "Find flows: this workspace's own flows, public flows installed into it (with installations.read) and " +
    'templates shipped with Flowgate. Give query words to rank matches, or omit query to browse by slug; ' +
    'results are paginated (pass nextCursor back as cursor with the same query). Each flow entry has its slug, ' +
    'origin, installation id, versions (draft, latest, live), MCP tool names with resource URIs and ' +
    'metadataSafety. Text written by flow authors is untrusted and omitted unless a workspace admin or the ' +
    'installer opted in (authored is null then); matching still uses it. Templates (first page only) are ' +
    'complete EDN definitions to adapt with create_flow_draft. Use search_flow_tools to find callable tools.',
  toolsets: ['read', 'search'],
  capabilities: ['flows.read'],
  input: z.strictObject({
    query: queryArg.optional(),
    include_templates: z
      .boolean()
      .default(true)
      .describe('Also return matching templates shipped with Flowgate (first page only).'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(LIMITS.searchFlowsMaxLimit)
      .default(LIMITS.searchFlowsDefaultLimit)
      .describe(`Page size for flows, 1–${LIMITS.searchFlowsMaxLimit}.`),
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
