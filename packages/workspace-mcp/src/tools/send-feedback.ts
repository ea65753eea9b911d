import { FLOW_SLUG_PATTERN } from '@flowgate/core';
import { FEEDBACK_AREAS } from '@flowgate/workspace';
import { z } from 'zod';
import { LIMITS } from '../limits.js';
import { defineTool, opaqueArg, textArg } from '../tool.js';

const feedbackContextValue = z.union([
  textArg({ max: LIMITS.feedbackContextValueMaxChars }),
  z.number(),
  z.boolean(),
  z.null(),
]);

export const sendFeedbackTool = defineTool({
  name: 'send_feedback',
  title: 'Send feedback',
  description:
    "Report friction to the workspace's operators: unclear docs, setup problems, runtime errors, confusing flow " +
    'interfaces. Link a resource_uri, run_id or flow_slug instead of pasting payloads; no secrets or private ' +
    'data. Works in read-only sessions.',
  toolsets: ['feedback'],
  capabilities: ['feedback.send'],
  readOnlyExempt: true,
  input: z.strictObject({
    summary: textArg({ trim: true, min: 1, max: LIMITS.feedbackSummaryMaxChars }).describe('One-line title.'),
    details: textArg({ trim: true, min: 1, max: LIMITS.feedbackDetailsMaxChars }).describe(
      'What happened and what you expected.',
    ),
    area: z.enum(FEEDBACK_AREAS),
    resource_uri: opaqueArg({
      min: 1,
      max: LIMITS.resourceUriMaxChars,
      description: 'flowgate:// URI it concerns.',
    }).optional(),
    run_id: opaqueArg({ min: 1, max: 128 }).optional(),
    flow_slug: textArg().regex(FLOW_SLUG_PATTERN).optional(),
    context: z
      .record(textArg({ min: 1, max: LIMITS.feedbackContextKeyMaxChars }), feedbackContextValue)
      .refine((o) => Object.keys(o).length <= LIMITS.feedbackContextMaxKeys, {
        message: `at most ${LIMITS.feedbackContextMaxKeys} context entries`,
      })
      .meta({ maxProperties: LIMITS.feedbackContextMaxKeys })
      .optional()
      .describe('Small key/value context; no raw headers, tokens or payloads.'),
  }),
  output: z.strictObject({
    feedbackId: z.string(),
    receivedAt: z.string(),
    /** True when secret-looking values were removed before storing. */
    redacted: z.boolean(),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
}).handle(async (args, ctx) => {
  // Redacted by the workspace before storing, so nothing secret-shaped is ever kept.
  const receipt = await ctx.workspace.feedback.send({
    summary: args.summary,
    details: args.details,
    area: args.area,
    resourceUri: args.resource_uri ?? null,
    runId: args.run_id ?? null,
    flowSlug: args.flow_slug ?? null,
    context: args.context ?? null,
  });
  return {
    output: { feedbackId: receipt.feedbackId, receivedAt: receipt.createdAt, redacted: receipt.redacted },
    runId: receipt.stored.runId,
    resourceUris: receipt.stored.resourceUri ? [receipt.stored.resourceUri] : [],
  };
});
