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

/** Feedback as stored (redacted on the way in), with who sent it. */
export interface FeedbackRecord extends Omit<FeedbackInput, 'details'> {
  id: string;
  /** Null on rows stored before details were required. */
  details: string | null;
  principalType: string;
  principalId: string;
  createdAt: string;
}

/** Where a page ends: the database's own text of the last row's creation time (microseconds kept), and its id. */
export interface FeedbackPosition {
  createdAt: string;
  id: string;
}

export interface FeedbackUseCases {
  send(input: FeedbackInput): Promise<FeedbackReceipt>;
}

/** What was sent, for the workspace's admins (kept apart from `send`, the one use case the MCP surface needs). */
export interface FeedbackLogUseCases {
  /** Newest first, optionally of one area and from an instant on. */
  list(input: {
    limit: number;
    before: FeedbackPosition | null;
    area: FeedbackArea | null;
    since: Date | null;
  }): Promise<{ items: FeedbackRecord[]; nextBefore: FeedbackPosition | null }>;
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

export function feedbackLogUseCases(ctx: UseCaseContext): FeedbackLogUseCases {
  return {
    async list({ limit, before, area, since }) {
      const rows = await repos.listFeedback(ctx.db, ctx.workspaceId, {
        limit: limit + 1,
        before: before ?? undefined,
        area: area ?? undefined,
        since: since ?? undefined,
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        items: page.map((r) => ({
          id: r.id,
          area: r.area as FeedbackArea,
          summary: r.summary,
          details: r.details,
          principalType: r.principalType,
          principalId: r.principalId,
          resourceUri: r.resourceUri,
          runId: r.runId,
          flowSlug: r.flowSlug,
          context: (r.context ?? null) as FeedbackInput['context'],
          createdAt: r.createdAt.toISOString(),
        })),
        nextBefore: rows.length > limit && last ? { createdAt: last.position, id: last.id } : null,
      };
    },
  };
}
