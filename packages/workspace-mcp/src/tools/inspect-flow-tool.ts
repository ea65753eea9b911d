import { z } from 'zod';
import { flowSlugArg, installationIdArg, readOnlyFlowAnnotations, targetArg, toolNameArg } from '../args.js';
import { resolveFlowTool } from '../flow-lookup.js';
import { flowToolDescriptor, flowToolDescriptorSchema } from '../flow-outputs.js';
import { defineTool } from '../tool.js';

export const inspectFlowToolTool = defineTool({
  name: 'inspect_flow_tool',
  title: 'Inspect flow tool',
  description:
    'Describe one flow tool before calling it: the JSON Schema of its input (from the flow invocation), the ' +
    'target and version described (live by default, or draft), a readiness summary, metadataSafety and its ' +
    'resource URI. Untrusted author-written titles, descriptions, labels and defaults are omitted unless opted in.',
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
