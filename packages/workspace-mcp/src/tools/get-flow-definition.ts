import type { getFlowDefinitionTool } from '../catalog.js';
import type { FlowSelector } from '../context.js';
import { definitionOutput, requireDefinition, requireFlow } from '../flow-views.js';
import type { ToolHandler } from './types.js';

export const getFlowDefinition: ToolHandler<typeof getFlowDefinitionTool> = async (args, ctx) => {
  const flow = await requireFlow(ctx, args.flow_slug, args.installation_id ?? null);
  // Installations have no draft: their natural default is the version they run.
  const selector: FlowSelector =
    args.version !== undefined
      ? { version: args.version }
      : { source: args.source ?? (flow.installation ? 'active' : 'draft') };
  const def = await requireDefinition(ctx, flow, selector);
  const output = definitionOutput(def, selector);
  return { output, resourceUris: [output.resourceUri] };
};
