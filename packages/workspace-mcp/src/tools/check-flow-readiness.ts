import { AppError } from '@flowgate/core';
import type { checkFlowReadinessTool } from '../catalog.js';
import { readinessReport, requireFlow } from '../flow-views.js';
import type { ToolHandler } from './types.js';

export const checkFlowReadiness: ToolHandler<typeof checkFlowReadinessTool> = async (args, ctx) => {
  const flow = await requireFlow(ctx, args.flow_slug, args.installation_id ?? null);
  if (flow.installation && args.target === 'draft') {
    throw new AppError(
      'invalid_request',
      'An installed flow has no draft: installations run released versions only; use target "live"',
    );
  }
  const report = await readinessReport(ctx, flow, args.target);
  return { output: report, resourceUris: [report.resourceUri] };
};
