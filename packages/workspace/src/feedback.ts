/** Feedback from agents and people about the product, stored per workspace with secrets redacted first. */
import { newId } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { redact, redactString } from '@flowgate/secrets';
import type { UseCaseContext } from './scope.js';

export const FEEDBACK_AREAS = ['mcp', 'docs', 'runtime', 'flow-interface', 'setup', 'other'] as const;
export type FeedbackArea = (typeof FEEDBACK_AREAS)[number];

export interface FeedbackInput {
  summary: string;
  details: string;
  area: FeedbackArea;
  resourceUri: string | null;
  runId: string | null;
  flowSlug: string | null;
  context: Record<string, string | number | boolean | null> | null;
}

export interface FeedbackReceipt {
  feedbackId: string;
  createdAt: string;
  /** Whether anything secret-shaped was replaced before storing. */
  redacted: boolean;
  /** What was stored. */
  stored: FeedbackInput;
}

export interface FeedbackUseCases {
  send(input: FeedbackInput): Promise<FeedbackReceipt>;
}

export function feedbackUseCases(ctx: UseCaseContext): FeedbackUseCases {
  return {
    async send(input) {
      const clean: FeedbackInput = {
        ...input,
        summary: redactString(input.summary),
        details: redactString(input.details),
        resourceUri: input.resourceUri === null ? null : redactString(input.resourceUri),
        context: input.context === null ? null : redact(input.context),
      };
      const row = await repos.insertFeedback(ctx.db, ctx.workspaceId, {
        id: newId('fb', 16),
        principalType: ctx.actor.kind,
        principalId: ctx.actor.id,
        area: clean.area,
        summary: clean.summary,
        details: clean.details,
        resourceUri: clean.resourceUri,
        runId: clean.runId,
        flowSlug: clean.flowSlug,
        context: clean.context,
      });
      return {
        feedbackId: row.id,
        createdAt: row.createdAt.toISOString(),
        redacted: JSON.stringify(clean) !== JSON.stringify(input),
        stored: clean,
      };
    },
  };
}
