import { z } from 'zod';
import { flowSlugArg, installationIdArg, readOnlyFlowAnnotations, targetArg, toolNameArg } from '../args.js';
import { resolveFlowTool } from '../flow-lookup.js';
import { flowToolDescriptor, flowToolDescriptorSchema } from '../flow-outputs.js';
import { defineTool } from '../tool.js';

export const inspectFlowToolTool = defineTool({
  name: 'inspect_flow_tool',
  title: 'Inspect flow tool',
  description:
    'Describe a flow tool before calling it: its input JSON Schema, the target and version (live by default, ' +
    'or draft), readiness, metadataSafety and resource URI. Untrusted author text is omitted unless opted in.',
  toolsets: ['read', 'search', 'run', 'authoring'],
  capabilities: ['flows.read'],
  input: z.strictObject({
    flow_slug: flowSlugArg,
    tool_name: toolNameArg,
    installation_id: installationIdArg.optional(),
    target: targetArg.optional(),
  }),
  output: flowToolDescriptorSchema,
  annotations: readOnlyFlowAnnotations,
}).handle(async (args, ctx) => {
  const resolved = await resolveFlowTool(ctx, {
    slug: args.flow_slug,
    toolName: args.tool_name,
    installationId: args.installation_id ?? null,
    target: args.target ?? null,
  });
  const descriptor = flowToolDescriptor(resolved, await resolved.open.readiness(resolved.target));
  return { output: descriptor, resourceUris: [descriptor.resourceUri] };
});
