import { z } from 'zod';
import { diagnosticsSummarySchema, flowLiteralArg, flowSlugArg } from '../args.js';
import { diagnosticSchema, diagnosticViews } from '../flow-outputs.js';
import { defineTool, InvalidArguments, ToolFailure } from '../tool.js';
import { flowDefinitionUri } from '../uris.js';

export const createFlowDraftTool = defineTool({
  name: 'create_flow_draft',
  title: 'Create or update flow draft',
  description:
    'Save a flow definition as the draft of the flow its :slug names, creating the flow if new, else replacing ' +
    'its draft. It is validated first: on any error nothing is saved and the result is an isError flow_invalid ' +
    'with the diagnostics. Live versions never change (release_flow does that). Show the user the flow_literal ' +
    'and get approval before calling.',
  toolsets: ['authoring'],
  capabilities: ['flows.manage'],
  input: z.strictObject({
    flow_literal: flowLiteralArg,
    flow_slug: flowSlugArg.optional().describe('Expected :slug; the call fails if it differs.'),
  }),
  output: z.strictObject({
    flowSlug: z.string(),
    created: z.boolean(),
    valid: z.literal(true),
    diagnostics: z.array(diagnosticSchema),
    summary: diagnosticsSummarySchema,
    draftUpdatedAt: z.string().nullable(),
    latestVersion: z.number().int().nullable(),
    liveVersion: z.number().int().nullable(),
    resourceUri: z.string(),
    nextSteps: z.array(z.string()),
  }),
  // Replaces the previous draft (not additive), so hosts should confirm; saving the same text twice is harmless.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
}).handle(async (args, ctx) => {
  const outcome = await ctx.workspace.flows.saveDraft({
    literal: args.flow_literal,
    expectedSlug: args.flow_slug ?? null,
  });
  if (outcome.status === 'slug_mismatch') {
    throw new InvalidArguments([
      {
        path: 'flow_slug',
        message: `The definition's :slug is ${outcome.definitionSlug}, not ${outcome.expectedSlug}; nothing was saved`,
      },
    ]);
  }
  const diagnostics = diagnosticViews(outcome.diagnostics);
  // Counted over the whole validation: the returned diagnostics are capped.
  const summary = outcome.summary;
  if (outcome.status === 'invalid') {
    throw new ToolFailure(
      'flow_invalid',
      `The definition has ${summary.errors} error(s) and was not saved; fix the diagnostics and call create_flow_draft again`,
      { valid: false, diagnostics, summary },
    );
  }
  const { flow } = outcome;
  const resourceUri = flowDefinitionUri(flow.slug, 'draft');
  return {
    output: {
      flowSlug: flow.slug,
      created: outcome.created,
      valid: true,
      diagnostics,
      summary,
      draftUpdatedAt: flow.draftUpdatedAt,
      latestVersion: flow.latestVersion,
      liveVersion: flow.liveVersion,
      resourceUri,
      nextSteps: [
        'Call check_flow_readiness with target "draft" to see unbound connection slots.',
        'Release only after the user approves: check_flow_readiness, then release_flow.',
      ],
    },
    resourceUris: [resourceUri],
  };
});
