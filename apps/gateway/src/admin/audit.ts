import { AppError } from '@flowgate/core';
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../context.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import type { AdminCursors } from './cursor.js';
import { auditQuery } from './schemas.js';
import { query } from './validation.js';
import { type AdminWorkspaces, workspaceOf } from './workspace-of.js';

const auditPosition = z.strictObject({ id: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) });

/** The workspace's audit log (docs/admin-api.md), newest first, optionally narrowed. */
export function auditRoutes(deps: AdminWorkspaces & { cursors: AdminCursors }) {
  return new Hono<AppEnv>().get(
    '/audit',
    requireWorkspaceAdmin,
    query(
      auditQuery,
      () =>
        new AppError(
          'invalid_request',
          'limit must be 1..200, outcome ok|error|blocked|denied, since and until ISO 8601 instants with offset',
        ),
    ),
    async (c) => {
      const q = c.req.valid('query');
      const before = deps.cursors.open(c, 'audit', q.cursor, auditPosition);
      const page = await workspaceOf(c, deps).auditLog.list({
        limit: q.limit,
        before: before?.id ?? null,
        filter: {
          keyId: q.key,
          action: q.tool,
          outcome: q.outcome,
          since: q.since === undefined ? undefined : new Date(q.since),
          until: q.until === undefined ? undefined : new Date(q.until),
        },
      });
      return c.json({
        items: page.items,
        nextCursor: page.nextBefore === null ? null : deps.cursors.seal(c, 'audit', { id: page.nextBefore }),
      });
    },
  );
}
