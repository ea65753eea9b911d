import { AppError } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import { FEEDBACK_AREAS } from '@flowgate/workspace';
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../context.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import { type AdminCursors, paginate } from './cursor.js';
import { query } from './validation.js';

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
function feedbackView(row: repos.FeedbackRow) {
  return {
    feedbackId: row.id,
    area: row.area,
    summary: row.summary,
    details: row.details,
    principalType: row.principalType,
    principalId: row.principalId,
    resourceUri: row.resourceUri,
    runId: row.runId,
    flowSlug: row.flowSlug,
    context: (row.context ?? null) as Record<string, string | number | boolean | null> | null,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * Feedback (docs/admin-api.md): what agents and people sent with `send_feedback`, for the workspace's admins,
 * newest first.
 */
export function feedbackRoutes(deps: { db: Database; cursors: AdminCursors }) {
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
      const { items, nextCursor } = await paginate(
        q.limit,
        (limit) =>
          repos.listFeedback(deps.db, c.get('access').workspaceId, {
            limit,
            before,
            area: q.area,
            since: q.since === undefined ? undefined : new Date(q.since),
          }),
        (last) => deps.cursors.seal(c, 'feedback', { createdAt: last.position, id: last.id }),
      );
      return c.json({ items: items.map(feedbackView), nextCursor });
    },
  );
}
