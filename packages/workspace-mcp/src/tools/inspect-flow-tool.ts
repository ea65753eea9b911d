import { z } from 'zod';
import { flowSlugArg, installationIdArg, readOnlyFlowAnnotations, targetArg, toolNameArg } from '../args.js';
import { resolveFlowTool } from '../flow-lookup.js';
import { flowToolDescriptor, flowToolDescriptorSchema } from '../flow-outputs.js';
import { defineTool } from '../tool.js';

export const inspectFlowToolTool = defineTool({
  name: 'inspect_flow_tool',
  title: 'Inspect flow tool',
  description:
    'Describe one flow MCP tool before using it: the JSON Schema of its input (built from the flow invocation: ' +
    'property names, types, required fields, select options), the target and version it describes (live by ' +
    'default, or the draft), a readiness summary (definition valid, invocation, connection slots bound and ' +
    'healthy, released version, installation enabled), metadataSafety and its resource URI. Flow-authored ' +
    'titles, descriptions, labels and defaults are omitted unless an installer or workspace admin opted in. ' +
    'Pass installation_id for an installed public flow.',
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
