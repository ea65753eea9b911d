import { AppError } from '@flowgate/core';
import { z } from 'zod';
import { flowSlugArg, installationIdArg, readOnlyFlowAnnotations } from '../args.js';
import { requireFlow } from '../flow-lookup.js';
import { readinessOutput, readinessReportSchema } from '../readiness-output.js';
import { defineTool } from '../tool.js';

export const checkFlowReadinessTool = defineTool({
  name: 'check_flow_readiness',
  title: 'Check flow readiness',
  description:
    'Check whether a flow can run, without running it: definition valid, invocation and MCP interface declared, ' +
    'each :requires slot bound to a healthy connection, a released version for live, installation enabled. ' +
    'Returns ready, each check (pass/fail/warn/skip), slot bindings and next steps.',
  toolsets: ['read', 'setup', 'authoring'],
  capabilities: ['flows.read'],
  input: z.strictObject({
    flow_slug: flowSlugArg,
    installation_id: installationIdArg.optional(),
    target: z.enum(['live', 'draft']).default('live'),
  }),
  output: readinessReportSchema,
  annotations: readOnlyFlowAnnotations,
}).handle(async (args, ctx) => {
  const flow = await requireFlow(ctx, args.flow_slug, args.installation_id ?? null);
  if (flow.record.installation && args.target === 'draft') {
    throw new AppError(
      'invalid_request',
      'An installed flow has no draft: installations run released versions only; use target "live"',
    );
  }
  const report = readinessOutput(await flow.readiness(args.target));
  return { output: report, resourceUris: [report.resourceUri] };
});
