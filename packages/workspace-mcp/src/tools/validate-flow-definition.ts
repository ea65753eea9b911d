import { MAX_VALIDATION_DIAGNOSTICS, validateFlow } from '@flowgate/flows';
import type { FlowSelector } from '@flowgate/workspace';
import { z } from 'zod';
import {
  diagnosticsSummarySchema,
  flowLiteralArg,
  flowSlugArg,
  installationIdArg,
  readOnlyFlowAnnotations,
  SOURCE_WORDING,
  sourceArg,
  VERSION_WORDING,
  versionArg,
} from '../args.js';
import { requireDefinition, requireFlow } from '../flow-lookup.js';
import { CONTENT_TRUST, diagnosticSchema, diagnosticViews } from '../flow-outputs.js';
import { defineTool } from '../tool.js';
import { definitionUriFor } from '../uris.js';

export const validateFlowDefinitionTool = defineTool({
  name: 'validate_flow_definition',
  title: 'Validate flow definition',
  description:
    'Validate a flow definition without saving: flow_literal (EDN), or a stored one by flow_slug with source or ' +
    'version. Returns valid and diagnostics (severity, code, message, path, line, column, hint; at most ' +
    `${MAX_VALIDATION_DIAGNOSTICS}). Fix errors before create_flow_draft; warnings are advice.`,
  toolsets: ['read', 'authoring'],
  capabilities: ['flows.read'],
  input: z
    .strictObject({
      flow_literal: flowLiteralArg.optional(),
      flow_slug: flowSlugArg.optional().describe('Validate a stored definition of this flow instead.'),
      source: sourceArg.optional().describe(SOURCE_WORDING),
      version: versionArg.optional().describe(VERSION_WORDING),
      installation_id: installationIdArg.optional(),
    })
    .refine((a) => (a.flow_literal === undefined) !== (a.flow_slug === undefined), {
      message: 'give exactly one of flow_literal or flow_slug',
      path: ['flow_literal'],
    })
    .refine(
      (a) =>
        a.flow_literal === undefined ||
        (a.source === undefined && a.version === undefined && a.installation_id === undefined),
      {
        message:
          'source, version and installation_id select a stored definition; use them with flow_slug only',
        path: ['source'],
      },
    )
    .refine((a) => !(a.source !== undefined && a.version !== undefined), {
      message: 'give source or version, not both',
      path: ['version'],
    }),
  output: z.strictObject({
    valid: z.boolean(),
    flowSlug: z.string().nullable(),
    checked: z.enum(['flow_literal', 'stored']),
    installationId: z.string().nullable(),
    version: z.number().int().nullable(),
    diagnostics: z.array(diagnosticSchema),
    summary: diagnosticsSummarySchema,
    /** Stored definitions only: diagnostics quote the flow author's text (e.g. keywords), which is data. */
    contentTrust: z.literal(CONTENT_TRUST).optional(),
  }),
  annotations: readOnlyFlowAnnotations,
}).handle(async (args, ctx) => {
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
        summary: result.summary,
      },
    };
  }
  const flow = await requireFlow(ctx, args.flow_slug as string, args.installation_id ?? null);
  const selector: FlowSelector =
    args.version !== undefined
      ? { version: args.version }
      : { source: args.source ?? (flow.record.installation ? 'active' : 'draft') };
  const def = await requireDefinition(flow, selector);
  const result = validateFlow(def.literal);
  return {
    output: {
      valid: result.valid,
      flowSlug: def.slug,
      checked: 'stored',
      installationId: def.installationId,
      version: def.version,
      diagnostics: diagnosticViews(result.diagnostics),
      summary: result.summary,
      // The definition was written by its author (for an installed flow, another workspace's publisher).
      contentTrust: CONTENT_TRUST,
    },
    resourceUris: [definitionUriFor(def)],
  };
});
