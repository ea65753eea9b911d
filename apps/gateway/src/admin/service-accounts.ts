import type { ApiKeyRecord, ServiceAccountRecord } from '@flowgate/workspace';
import { Hono } from 'hono';
import type { AppEnv } from '../context.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import { type AdminCursors, idPosition, nextIdCursor } from './cursor.js';
import { createKeyBody, createServiceAccountBody, updateServiceAccountBody } from './schemas.js';
import { jsonBody, pageParams } from './validation.js';
import { type AdminWorkspaces, workspaceOf } from './workspace-of.js';

function serviceAccountView(a: ServiceAccountRecord) {
  return {
    serviceAccountId: a.id,
    name: a.name,
    capabilities: a.capabilities,
    status: a.status,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

function keyView(k: ApiKeyRecord) {
  return {
    keyId: k.id,
    name: k.name,
    createdAt: k.createdAt,
    expiresAt: k.expiresAt,
    lastUsedAt: k.lastUsedAt,
    revokedAt: k.revokedAt,
  };
}

/**
 * Service accounts and their keys (docs/admin-api.md), for workspace admins. The domain tells the authenticator's
 * cache of each change (`WorkspaceDeps.changes`), so a disabled account or revoked key stops working at once.
 */
export function serviceAccountRoutes(deps: AdminWorkspaces & { cursors: AdminCursors }) {
  const admin = requireWorkspaceAdmin;
  return new Hono<AppEnv>()
    .post('/service-accounts', admin, jsonBody(createServiceAccountBody), async (c) => {
      const account = await workspaceOf(c, deps).serviceAccounts.create(c.req.valid('json'));
      return c.json(serviceAccountView(account), 201);
    })
    .get('/service-accounts', admin, pageParams, async (c) => {
      const q = c.req.valid('query');
      const after = deps.cursors.open(c, 'service-accounts', q.cursor, idPosition);
      const page = await workspaceOf(c, deps).serviceAccounts.list({
        limit: q.limit,
        after: after?.id ?? null,
      });
      return c.json({
        items: page.items.map(serviceAccountView),
        nextCursor: nextIdCursor(deps.cursors, c, 'service-accounts', page.nextAfter),
      });
    })
    .patch('/service-accounts/:sa', admin, jsonBody(updateServiceAccountBody), async (c) => {
      const account = await workspaceOf(c, deps).serviceAccounts.update(
        c.req.param('sa'),
        c.req.valid('json'),
      );
      return c.json(serviceAccountView(account));
    })
    .post('/service-accounts/:sa/keys', admin, jsonBody(createKeyBody), async (c) => {
      const key = await workspaceOf(c, deps).serviceAccounts.issueKey(c.req.param('sa'), c.req.valid('json'));
      return c.json(
        {
          serviceAccountId: key.serviceAccountId,
          key: { keyId: key.keyId, apiKey: key.apiKey, expiresAt: key.expiresAt },
        },
        201,
        { 'Cache-Control': 'no-store' },
      );
    })
    .get('/service-accounts/:sa/keys', admin, async (c) => {
      const keys = await workspaceOf(c, deps).serviceAccounts.listKeys(c.req.param('sa'));
      return c.json({ items: keys.map(keyView) });
    })
    .delete('/service-accounts/:sa/keys/:keyId', admin, async (c) => {
      await workspaceOf(c, deps).serviceAccounts.revokeKey(c.req.param('sa'), c.req.param('keyId'));
      return c.body(null, 204);
    });
}
