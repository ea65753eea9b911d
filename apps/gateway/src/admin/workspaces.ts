import { type AuditRecorder, openOperator, type WorkspaceDeps } from '@flowgate/workspace';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import { type AdminCursors, idPosition, nextIdCursor } from './cursor.js';
import { createWorkspaceBody } from './schemas.js';
import { jsonBody, pageParams } from './validation.js';

/**
 * The operator's routes outside any workspace (docs/admin-api.md): create a workspace, list them. Both go through
 * `openOperator`, which records a creation as the new workspace's first audit event.
 */
export function workspaceRoutes(deps: {
  workspaceDeps: WorkspaceDeps;
  recorder: AuditRecorder;
  cursors: AdminCursors;
  operatorGuard: MiddlewareHandler<AppEnv>;
}) {
  const operator = (c: Context<AppEnv>) =>
    openOperator(deps.workspaceDeps, {
      actor: { kind: 'operator', id: 'operator' },
      requestId: c.get('requestId'),
      audit: deps.recorder,
    });
  return new Hono<AppEnv>()
    .post('/api/admin/workspaces', deps.operatorGuard, jsonBody(createWorkspaceBody), async (c) => {
      return c.json(await operator(c).workspaces.create(c.req.valid('json')), 201);
    })
    .get('/api/admin/workspaces', deps.operatorGuard, pageParams, async (c) => {
      const q = c.req.valid('query');
      const after = deps.cursors.open(c, 'workspaces', q.cursor, idPosition);
      const page = await operator(c).workspaces.list({ limit: q.limit, after: after?.id ?? null });
      return c.json({
        items: page.items,
        nextCursor: nextIdCursor(deps.cursors, c, 'workspaces', page.nextAfter),
      });
    });
}
