import { AppError } from '@flowgate/core';
import type { ConnectionRecord } from '@flowgate/workspace';
import { Hono } from 'hono';
import type { AppEnv } from '../context.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import { type AdminCursors, idPosition, nextIdCursor } from './cursor.js';
import {
  createConnectionBody,
  deleteConnectionQuery,
  rotateConnectionBody,
  updateConnectionBody,
} from './schemas.js';
import { jsonBody, pageParams, query } from './validation.js';
import { type AdminWorkspaces, workspaceOf } from './workspace-of.js';

export function connectionView(r: ConnectionRecord) {
  return {
    connectionId: r.id,
    name: r.name,
    type: r.type,
    baseUrl: r.baseUrl,
    auth: { type: r.authType, hasSecret: r.hasSecret, ...(r.headerName ? { headerName: r.headerName } : {}) },
    model: r.model,
    // Names only: the values are not secrets, but they are configuration, not something every answer repeats.
    ...(r.type === 'mcp-server' ? { fixedHeaderNames: r.fixedHeaderNames } : {}),
    status: r.status,
    health: r.health,
    createdAt: r.createdAt,
  };
}

/** Connections (docs/admin-api.md), for workspace admins: the rules and the audit rows are the domain's. */
export function connectionRoutes(deps: AdminWorkspaces & { cursors: AdminCursors }) {
  const admin = requireWorkspaceAdmin;
  return new Hono<AppEnv>()
    .post('/connections', admin, jsonBody(createConnectionBody), async (c) => {
      const created = await workspaceOf(c, deps).connections.create(c.req.valid('json'));
      return c.json(connectionView(created), 201);
    })
    .patch('/connections/:id', admin, jsonBody(updateConnectionBody), async (c) => {
      const updated = await workspaceOf(c, deps).connections.update(c.req.param('id'), c.req.valid('json'));
      return c.json(connectionView(updated));
    })
    .post('/connections/:id/rotate', admin, jsonBody(rotateConnectionBody), async (c) => {
      const { secret } = c.req.valid('json');
      return c.json(connectionView(await workspaceOf(c, deps).connections.rotate(c.req.param('id'), secret)));
    })
    .post('/connections/:id/disable', admin, async (c) =>
      c.json(connectionView(await workspaceOf(c, deps).connections.disable(c.req.param('id')))),
    )
    .post('/connections/:id/enable', admin, async (c) =>
      c.json(connectionView(await workspaceOf(c, deps).connections.enable(c.req.param('id')))),
    )
    .post('/connections/:id/check', admin, async (c) =>
      c.json(await workspaceOf(c, deps).connections.checkOne(c.req.param('id'))),
    )
    .delete(
      '/connections/:id',
      admin,
      query(deleteConnectionQuery, () => new AppError('invalid_request', 'force must be true or false')),
      async (c) => {
        const removed = await workspaceOf(c, deps).connections.remove({
          connectionId: c.req.param('id'),
          force: c.req.valid('query').force === 'true',
        });
        return c.json({ ...removed, deleted: true as const });
      },
    )
    .get('/connections', admin, pageParams, async (c) => {
      const q = c.req.valid('query');
      const after = deps.cursors.open(c, 'connections', q.cursor, idPosition);
      const page = await workspaceOf(c, deps).connections.records({
        limit: q.limit,
        after: after?.id ?? null,
      });
      return c.json({
        items: page.items.map(connectionView),
        nextCursor: nextIdCursor(deps.cursors, c, 'connections', page.nextAfter),
      });
    });
}
