import { validateFlow } from '@flowgate/flows';
import type { createFlowDraftTool } from '../catalog.js';
import { flowDefinitionUri } from '../flow-views.js';
import { InvalidArguments, ToolFailure, type ToolHandler } from './types.js';
import { diagnosticsSummary, diagnosticViews } from './validate-flow-definition.js';

export const createFlowDraft: ToolHandler<typeof createFlowDraftTool> = async (args, ctx) => {
  const result = validateFlow(args.flow_literal);
  const diagnostics = diagnosticViews(result.diagnostics);
  const summary = diagnosticsSummary(result.diagnostics);
  if (!result.valid || !result.model) {
    // Nothing is saved: the services are never called with an invalid definition.
    throw new ToolFailure(
      'flow_invalid',
      `The definition has ${summary.errors} error(s) and was not saved; fix the diagnostics and call create_flow_draft again`,
      { valid: false, diagnostics, summary },
    );
  }
  const model = result.model;
  if (args.flow_slug !== undefined && args.flow_slug !== model.slug) {
    throw new InvalidArguments([
      {
        path: 'flow_slug',
        message: `The definition's :slug is ${model.slug}, not ${args.flow_slug}; nothing was saved`,
      },
    ]);
  }
  const saved = await ctx.request.services.saveFlowDraft({
    slug: model.slug,
    literal: args.flow_literal,
    model,
  });
  const resourceUri = flowDefinitionUri(model.slug, 'draft');
  const nextSteps = [
    'Call check_flow_readiness with target "draft" to see unbound connection slots.',
    'Release only after the user approves: check_flow_readiness, then release_flow.',
  ];
  return {
    output: {
      flowSlug: model.slug,
      created: saved.created,
      valid: true,
      diagnostics,
      summary,
      draftUpdatedAt: saved.flow.draftUpdatedAt,
      latestVersion: saved.flow.latestVersion,
      liveVersion: saved.flow.liveVersion,
      resourceUri,
      nextSteps,
    },
    resourceUris: [resourceUri],
  };
};
