import { redact, redactString } from '@flowgate/secrets';
import type { sendFeedbackTool } from '../catalog.js';
import type { FeedbackInput } from '../context.js';
import type { ToolHandler } from './types.js';

export const sendFeedback: ToolHandler<typeof sendFeedbackTool> = async (args, ctx) => {
  const raw: FeedbackInput = {
    summary: args.summary,
    details: args.details,
    area: args.area,
    resourceUri: args.resource_uri ?? null,
    runId: args.run_id ?? null,
    flowSlug: args.flow_slug ?? null,
    context: args.context ?? null,
  };
  // Redacted here, before the services see it, so nothing secret-shaped is ever stored (spec 5).
  const clean: FeedbackInput = {
    ...raw,
    summary: redactString(raw.summary),
    details: redactString(raw.details),
    resourceUri: raw.resourceUri === null ? null : redactString(raw.resourceUri),
    context: raw.context === null ? null : redact(raw.context),
  };
  const stored = await ctx.request.services.sendFeedback(clean);
  return {
    output: {
      feedbackId: stored.feedbackId,
      receivedAt: stored.createdAt,
      redacted: JSON.stringify(clean) !== JSON.stringify(raw),
    },
    runId: clean.runId,
    resourceUris: clean.resourceUri ? [clean.resourceUri] : [],
  };
};
