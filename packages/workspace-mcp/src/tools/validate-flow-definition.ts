import { type Diagnostic, validateFlow } from '@flowgate/flows';
import type { validateFlowDefinitionTool } from '../catalog.js';
import type { FlowSelector } from '../context.js';
import { CONTENT_TRUST } from '../flow-schemas.js';
import { definitionUriFor, requireDefinition, requireFlow } from '../flow-views.js';
import type { ToolHandler } from './types.js';

export function diagnosticsSummary(diagnostics: readonly Diagnostic[]): { errors: number; warnings: number } {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  return { errors, warnings: diagnostics.length - errors };
}

/** Diagnostics as plain objects with exactly the documented fields. */
export function diagnosticViews(diagnostics: readonly Diagnostic[]) {
  return diagnostics.map((d) => ({
    severity: d.severity,
    code: d.code,
    message: d.message,
    path: d.path,
    line: d.line,
    column: d.column,
    hint: d.hint,
  }));
}

export const validateFlowDefinition: ToolHandler<typeof validateFlowDefinitionTool> = async (args, ctx) => {
  if (args.flow_literal !== undefined) {
    const result = validateFlow(args.flow_literal);
    return {
      output: {
        valid: result.valid,
        flowSlug: result.model?.slug ?? null,
        checked: 'flow_literal',
        installationId: null,
        version: null,
        diagnostics: diagnosticViews(result.diagnostics),
        summary: diagnosticsSummary(result.diagnostics),
      },
    };
  }
  const slug = args.flow_slug as string;
  const flow = await requireFlow(ctx, slug, args.installation_id ?? null);
  const selector: FlowSelector =
    args.version !== undefined
      ? { version: args.version }
      : { source: args.source ?? (flow.installation ? 'active' : 'draft') };
  const def = await requireDefinition(ctx, flow, selector);
  const result = validateFlow(def.literal);
  return {
    output: {
      valid: result.valid,
      flowSlug: def.slug,
      checked: 'stored',
      installationId: def.installationId,
      version: def.version,
      diagnostics: diagnosticViews(result.diagnostics),
      summary: diagnosticsSummary(result.diagnostics),
      // The definition was written by its author (for an installed flow, another workspace's publisher).
      contentTrust: CONTENT_TRUST,
    },
    resourceUris: [definitionUriFor(def)],
  };
};
