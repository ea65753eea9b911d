import { AppError } from '@flowgate/core';
import { FEEDBACK_AREAS, type FeedbackRecord } from '@flowgate/workspace';
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../context.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import type { AdminCursors } from './cursor.js';
import { query } from './validation.js';
import { type AdminWorkspaces, workspaceOf } from './workspace-of.js';

export const feedbackQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(512).optional(),
  area: z.enum(FEEDBACK_AREAS).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
});

/** Where a feedback page ends: the database's own text of the last row's creation time, and its id. */
const feedbackPosition = z.strictObject({
  createdAt: z.string().min(1).max(64),
  id: z.string().min(1).max(64),
});

/** Stored rows are redacted on the way in (`send_feedback`), so they are shown as stored. */
function feedbackView(f: FeedbackRecord) {
  return {
    feedbackId: f.id,
    area: f.area,
    summary: f.summary,
    details: f.details,
    principalType: f.principalType,
    principalId: f.principalId,
    resourceUri: f.resourceUri,
    runId: f.runId,
    flowSlug: f.flowSlug,
    context: f.context,
    createdAt: f.createdAt,
  };
}

/**
 * Feedback (docs/admin-api.md): what agents and people sent with `send_feedback`, for the workspace's admins,
 * newest first.
 */
export function feedbackRoutes(deps: AdminWorkspaces & { cursors: AdminCursors }) {
  return new Hono<AppEnv>().get(
    '/feedback',
    requireWorkspaceAdmin,
    query(
      feedbackQuery,
      () =>
        new AppError(
          'invalid_request',
          `limit must be 1..200, area one of ${FEEDBACK_AREAS.join('|')}, since an ISO 8601 instant with offset`,
        ),
    ),
    async (c) => {
      const q = c.req.valid('query');
      const before = deps.cursors.open(c, 'feedback', q.cursor, feedbackPosition);
      const page = await workspaceOf(c, deps).feedbackLog.list({
        limit: q.limit,
        before: before ?? null,
        area: q.area ?? null,
        since: q.since === undefined ? null : new Date(q.since),
      });
      return c.json({
        items: page.items.map(feedbackView),
        nextCursor: page.nextBefore ? deps.cursors.seal(c, 'feedback', { ...page.nextBefore }) : null,
      });
    },
  );
}
