import type { inspectFlowToolTool } from '../catalog.js';
import { flowToolDescriptor, resolveFlowTool } from '../flow-views.js';
import type { ToolHandler } from './types.js';

export const inspectFlowTool: ToolHandler<typeof inspectFlowToolTool> = async (args, ctx) => {
  const resolved = await resolveFlowTool(ctx, {
    slug: args.flow_slug,
    toolName: args.tool_name,
    installationId: args.installation_id ?? null,
    target: args.target ?? null,
  });
  const descriptor = await flowToolDescriptor(ctx, resolved);
  return { output: descriptor, resourceUris: [descriptor.resourceUri] };
};
