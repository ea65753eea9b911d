import { type Authenticator, generateApiKey, type WorkspaceAccess } from '@flowgate/auth';
import { AppError, newId } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import type { SecretBox } from '@flowgate/secrets';
import { type Context, Hono } from 'hono';
import type { AuditSink } from '../audit/queue.js';
import type { AppEnv } from '../context.js';
import { operatorGuard, requireWorkspaceAdmin } from '../middleware/authenticate.js';
import type { WorkspaceCache } from '../workspace-cache.js';
import { readJson } from './body.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { flowRoutes } from './flows.js';
import { runRoutes } from './runs.js';
import {
  createConnectionBody,
  createKeyBody,
  createServiceAccountBody,
  createWorkspaceBody,
  mcpPolicyBody,
  pageQuery,
  updateServiceAccountBody,
} from './schemas.js';

export interface AdminDeps {
  db: Database;
  authenticator: Authenticator;
  secretBox: SecretBox;
  audit: AuditSink;
  workspaces: WorkspaceCache;
  /** Tool names a policy may disable: the catalog's. */
  toolNames: readonly string[];
}

function serviceAccountView(row: repos.ServiceAccountRow) {
  return {
    serviceAccountId: row.id,
    name: row.name,
    capabilities: row.capabilities,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function keyView(row: repos.ApiKeyRow) {
  return {
    keyId: row.id,
    name: row.name,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

export function connectionView(row: repos.ConnectionRow) {
  const view = repos.toConnectionView(row);
  return {
    connectionId: view.id,
    name: view.name,
    type: view.type,
    baseUrl: view.baseUrl,
    auth: {
      type: view.authType,
      hasSecret: view.hasSecret,
      ...(view.config.headerName ? { headerName: view.config.headerName } : {}),
    },
    status: view.status,
    health: view.health ?? null,
    createdAt: view.createdAt.toISOString(),
  };
}

function policyView(p: repos.WorkspacePolicy) {
  return {
    readOnly: p.readOnly,
    disabledTools: p.disabledTools,
    allowedOrigins: p.allowedOrigins,
    allowedIps: p.allowedIps,
    updatedAt: p.updatedAt?.toISOString() ?? null,
  };
}

function principalFields(access: WorkspaceAccess) {
  const p = access.principal;
  return { principalType: p.kind, principalId: p.id, keyId: access.keyId };
}

/**
 * The admin API of spec 11.1. Workspace routes sit behind the workspace guard (mounted by the app) plus
 * `requireWorkspaceAdmin`; workspace creation needs the operator token.
 */
export function adminRoutes(deps: AdminDeps) {
  const { db } = deps;
  const app = new Hono<AppEnv>();

  const audit = (
    c: Context<AppEnv>,
    action: string,
    outcome: 'ok' | 'error',
    args?: unknown,
    started?: number,
  ) => {
    const access = c.get('access');
    deps.audit.record({
      workspaceId: access.workspaceId,
      requestId: c.get('requestId'),
      ...principalFields(access),
      kind: 'admin',
      action,
      arguments: args ?? null,
      outcome,
      durationMs: started === undefined ? null : Math.round(performance.now() - started),
    });
  };

  // --- operator -------------------------------------------------------------------------------------
  app.post('/api/admin/workspaces', operatorGuard(deps.authenticator), async (c) => {
    const started = performance.now();
    const body = await readJson(c, createWorkspaceBody);
    const row = await repos.createWorkspace(db, body);
    if (!row) throw new AppError('conflict', `workspace ${body.id} already exists`);
    deps.workspaces.invalidate(row.id);
    deps.audit.record({
      workspaceId: row.id,
      requestId: c.get('requestId'),
      principalType: 'operator',
      principalId: 'operator',
      kind: 'admin',
      action: 'workspaces.create',
      arguments: body,
      outcome: 'ok',
      durationMs: Math.round(performance.now() - started),
    });
    return c.json({ id: row.id, name: row.name, createdAt: row.createdAt.toISOString() }, 201);
  });

  // --- workspace admin ------------------------------------------------------------------------------
  const ws = new Hono<AppEnv>();
  ws.route('/', runRoutes(db));
  ws.route('/', flowRoutes({ db, audit: deps.audit }));
  // Per-route guard, not `use('*')`: mounted under /api/workspaces/:ws it would also catch sibling routes.
  const admin = requireWorkspaceAdmin;

  ws.post('/service-accounts', admin, async (c) => {
    const started = performance.now();
    const body = await readJson(c, createServiceAccountBody);
    const row = await repos.createServiceAccount(db, c.get('access').workspaceId, {
      id: newId('sa', 16),
      ...body,
    });
    audit(c, 'service_accounts.create', 'ok', body, started);
    return c.json(serviceAccountView(row), 201);
  });

  ws.get('/service-accounts', admin, async (c) => {
    const q = pageQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError('invalid_request', 'limit must be 1..200');
    const after = decodeCursor<{ id: string }>(q.data.cursor, ['id']);
    const rows = await repos.listServiceAccounts(db, c.get('access').workspaceId, {
      limit: q.data.limit + 1,
      afterId: after?.id,
    });
    const page = rows.slice(0, q.data.limit);
    const last = page.at(-1);
    return c.json({
      items: page.map(serviceAccountView),
      nextCursor: rows.length > q.data.limit && last ? encodeCursor({ id: last.id }) : null,
    });
  });

  ws.patch('/service-accounts/:sa', admin, async (c) => {
    const started = performance.now();
    const body = await readJson(c, updateServiceAccountBody);
    const saId = c.req.param('sa');
    const row = await repos.updateServiceAccount(db, c.get('access').workspaceId, saId, body);
    if (!row) throw new AppError('not_found', 'service account not found');
    deps.authenticator.invalidateServiceAccount(saId);
    audit(c, 'service_accounts.update', 'ok', { serviceAccountId: saId, ...body }, started);
    return c.json(serviceAccountView(row));
  });

  ws.post('/service-accounts/:sa/keys', admin, async (c) => {
    const started = performance.now();
    const body = await readJson(c, createKeyBody);
    const workspaceId = c.get('access').workspaceId;
    const saId = c.req.param('sa');
    const account = await repos.getServiceAccount(db, workspaceId, saId);
    if (!account) throw new AppError('not_found', 'service account not found');
    const key = generateApiKey();
    const row = await repos.createApiKey(db, workspaceId, {
      id: key.keyId,
      serviceAccountId: saId,
      name: body.name ?? null,
      secretHash: key.secretHash,
      expiresAt: body.expiresAt ?? null,
    });
    audit(c, 'api_keys.create', 'ok', { serviceAccountId: saId, keyId: row.id, name: body.name }, started);
    return c.json(
      {
        serviceAccountId: saId,
        key: { keyId: row.id, apiKey: key.apiKey, expiresAt: row.expiresAt?.toISOString() ?? null },
      },
      201,
      { 'Cache-Control': 'no-store' },
    );
  });

  ws.get('/service-accounts/:sa/keys', admin, async (c) => {
    const workspaceId = c.get('access').workspaceId;
    const saId = c.req.param('sa');
    const account = await repos.getServiceAccount(db, workspaceId, saId);
    if (!account) throw new AppError('not_found', 'service account not found');
    const rows = await repos.listApiKeys(db, workspaceId, saId);
    return c.json({ items: rows.map(keyView) });
  });

  ws.delete('/service-accounts/:sa/keys/:keyId', admin, async (c) => {
    const started = performance.now();
    const saId = c.req.param('sa');
    const keyId = c.req.param('keyId');
    const ok = await repos.revokeApiKey(db, c.get('access').workspaceId, saId, keyId);
    if (!ok) throw new AppError('not_found', 'key not found');
    deps.authenticator.invalidateKey(keyId);
    audit(c, 'api_keys.revoke', 'ok', { serviceAccountId: saId, keyId }, started);
    return c.body(null, 204);
  });

  ws.post('/connections', admin, async (c) => {
    const started = performance.now();
    const body = await readJson(c, createConnectionBody);
    const workspaceId = c.get('access').workspaceId;
    const auth = body.auth;
    const row = await repos.createConnection(db, workspaceId, {
      id: newId('conn', 16),
      name: body.name,
      type: body.type,
      baseUrl: body.baseUrl ?? null,
      authType: auth.type,
      secretCiphertext: 'secret' in auth ? deps.secretBox.encrypt(auth.secret, workspaceId) : null,
      config: auth.type === 'api-key' ? { headerName: auth.headerName } : {},
    });
    if (!row) throw new AppError('conflict', `a connection named ${body.name} already exists`);
    audit(c, 'connections.create', 'ok', body, started);
    return c.json(connectionView(row), 201);
  });

  ws.get('/connections', admin, async (c) => {
    const q = pageQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError('invalid_request', 'limit must be 1..200');
    const after = decodeCursor<{ id: string }>(q.data.cursor, ['id']);
    const rows = await repos.listConnections(db, c.get('access').workspaceId, {
      limit: q.data.limit + 1,
      afterId: after?.id,
    });
    const page = rows.slice(0, q.data.limit);
    const last = page.at(-1);
    return c.json({
      items: page.map(connectionView),
      nextCursor: rows.length > q.data.limit && last ? encodeCursor({ id: last.id }) : null,
    });
  });

  ws.get('/mcp-policy', admin, async (c) =>
    c.json(policyView(await repos.getPolicy(db, c.get('access').workspaceId))),
  );

  ws.put('/mcp-policy', admin, async (c) => {
    const started = performance.now();
    const body = await readJson(c, mcpPolicyBody(deps.toolNames));
    const workspaceId = c.get('access').workspaceId;
    const policy = await repos.putPolicy(db, workspaceId, body);
    deps.workspaces.invalidate(workspaceId);
    audit(c, 'mcp_policy.update', 'ok', body, started);
    return c.json(policyView(policy));
  });

  ws.get('/audit', admin, async (c) => {
    const q = pageQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError('invalid_request', 'limit must be 1..200');
    const before = decodeCursor<{ id: number }>(q.data.cursor, ['id']);
    if (before && !Number.isInteger(before.id)) throw new AppError('invalid_request', 'invalid cursor');
    const rows = await repos.listAuditEntries(db, c.get('access').workspaceId, {
      limit: q.data.limit + 1,
      beforeId: before?.id,
    });
    const page = rows.slice(0, q.data.limit);
    const last = page.at(-1);
    return c.json({
      items: page.map((r) => ({ ...r, at: r.at.toISOString() })),
      nextCursor: rows.length > q.data.limit && last ? encodeCursor({ id: last.id }) : null,
    });
  });

  app.route('/api/workspaces/:ws', ws);
  return app;
}
