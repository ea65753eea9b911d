import type { Authenticator, WorkspaceAccess } from '@flowgate/auth';
import { AppError, newId } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import { displayUrl, type SecretBox } from '@flowgate/secrets';
import { openWorkspace, type WorkspaceDeps } from '@flowgate/workspace';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { AuditSink } from '../audit/queue.js';
import { adminAuditRecorder } from '../audit/recorder.js';
import type { AppEnv } from '../context.js';
import { operatorGuard } from '../middleware/authenticate.js';
import { ipAllowed } from '../middleware/ip.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import type { WorkspaceCache } from '../workspace-cache.js';
import { createAdminCursors, paginate } from './cursor.js';
import { feedbackRoutes } from './feedback.js';
import { flowRoutes } from './flows.js';
import { runRoutes } from './runs.js';
import {
  createConnectionBody,
  createWorkspaceBody,
  deleteConnectionQuery,
  mcpPolicyBody,
  rotateConnectionBody,
  updateConnectionBody,
} from './schemas.js';
import { serviceAccountRoutes } from './service-accounts.js';
import { jsonBody, pageParams, query } from './validation.js';
import type { AdminWorkspaces } from './workspace-of.js';

export interface AdminDeps {
  db: Database;
  authenticator: Authenticator;
  secretBox: SecretBox;
  audit: AuditSink;
  workspaces: WorkspaceCache;
  workspaceDeps: WorkspaceDeps;
  /** Tool names a policy may disable: the catalog's. */
  toolNames: readonly string[];
  /** HMAC key of the list cursors; the same on every replica. */
  cursorKey: Uint8Array;
  /**
   * Who may create workspaces; the operator bearer token unless given. The console's in-process caller passes a
   * check of its session's principal, so it reaches the same route without ever holding the token.
   */
  operatorGuard?: MiddlewareHandler<AppEnv>;
}

export function connectionView(row: repos.ConnectionRow) {
  const view = repos.toConnectionView(row);
  return {
    connectionId: view.id,
    name: view.name,
    type: view.type,
    // Rows stored before credentials were refused in base URLs are trimmed here too.
    baseUrl: displayUrl(view.baseUrl),
    auth: {
      type: view.authType,
      hasSecret: view.hasSecret,
      ...(view.config.headerName ? { headerName: view.config.headerName } : {}),
    },
    model: view.config.model ?? null,
    status: view.status,
    health: view.health ?? null,
    createdAt: view.createdAt.toISOString(),
  };
}

/** The caller's workspace use cases (connection checks and deletion go through the ones MCP tools use). */
function workspaceOf(c: Context<AppEnv>, deps: WorkspaceDeps) {
  const access = c.get('access');
  return openWorkspace(deps, {
    workspaceId: access.workspaceId,
    actor: { kind: access.principal.kind, id: access.principal.id },
  });
}

type ConnectionUpdate = z.infer<typeof updateConnectionBody>;

/** What an update changed, for the audit log: never the secret, only whether it was replaced (`rotated`). */
function connectionAuditArgs(connectionId: string, body: ConnectionUpdate) {
  return {
    connectionId,
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.baseUrl !== undefined ? { baseUrl: displayUrl(body.baseUrl) } : {}),
    ...(body.model !== undefined ? { model: body.model } : {}),
    ...(body.auth !== undefined ? { authType: body.auth.type } : {}),
    ...(body.auth?.type === 'api-key' ? { headerName: body.auth.headerName } : {}),
    rotated: body.secret !== undefined || (body.auth !== undefined && 'secret' in body.auth),
  };
}

/**
 * Checks an update against the connection as it is and turns it into a row patch: the secret encrypted (the old
 * ciphertext is overwritten), config rebuilt so a header name never outlives its api-key auth.
 */
async function connectionPatch(
  db: Database,
  box: SecretBox,
  current: repos.ConnectionRow,
  body: ConnectionUpdate,
): Promise<repos.ConnectionPatch> {
  const ws = current.workspaceId;
  if (body.secret !== undefined && current.authType === 'none') {
    throw new AppError(
      'invalid_request',
      'this connection has no authentication; set auth with a type and secret to add one',
    );
  }
  if (body.secret !== undefined && current.authType === 'basic' && !/^[^:]*:/s.test(body.secret)) {
    throw new AppError('invalid_request', 'basic auth secret is "user:password"');
  }
  if (body.model !== undefined && current.type !== 'llm-provider') {
    throw new AppError('invalid_request', 'only an llm-provider has a model');
  }
  if (body.auth?.type === 'none' && current.type === 'secret') {
    throw new AppError('invalid_request', 'a secret connection needs a secret');
  }
  if (body.name !== undefined && body.name !== current.name) {
    if (await repos.getConnectionByName(db, ws, body.name)) {
      throw new AppError('conflict', `a connection named ${body.name} already exists`);
    }
  }
  const patch: repos.ConnectionPatch = {};
  if (body.name !== undefined) patch.name = body.name;
  if (body.baseUrl !== undefined) patch.baseUrl = body.baseUrl;
  if (body.secret !== undefined) patch.secretCiphertext = box.encrypt(body.secret, ws);
  const config = { ...current.config };
  if (body.model !== undefined) config.model = body.model;
  if (body.auth !== undefined) {
    patch.authType = body.auth.type;
    patch.secretCiphertext = 'secret' in body.auth ? box.encrypt(body.auth.secret, ws) : null;
    delete config.headerName;
    if (body.auth.type === 'api-key') config.headerName = body.auth.headerName;
  }
  if (body.model !== undefined || body.auth !== undefined) patch.config = config;
  return patch;
}

function policyView(p: repos.WorkspacePolicy) {
  return {
    readOnly: p.readOnly,
    disabledTools: p.disabledTools,
    allowedOrigins: p.allowedOrigins,
    allowedIps: p.allowedIps,
    rateLimitPerMinute: p.rateLimitPerMinute,
    updatedAt: p.updatedAt?.toISOString() ?? null,
  };
}

const idPosition = z.strictObject({ id: z.string().min(1).max(64) });
const auditPosition = z.strictObject({ id: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) });

function principalFields(access: WorkspaceAccess) {
  const p = access.principal;
  return { principalType: p.kind, principalId: p.id, keyId: access.keyId };
}

/**
 * The admin API (docs/admin-api.md). Workspace routes sit behind the workspace guards (mounted by the app) plus
 * `requireWorkspaceAdmin`; workspace creation needs the operator token. Routes are chained so their types
 * accumulate into `AdminApi`, the contract the CLI's typed client is checked against.
 */
export function adminRoutes(deps: AdminDeps) {
  const { db } = deps;
  const cursors = createAdminCursors(deps.cursorKey);
  const workspaces: AdminWorkspaces = {
    workspaceDeps: deps.workspaceDeps,
    recorder: adminAuditRecorder(deps.audit),
  };

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

  // Per-route guard, not `use('*')`: mounted under /api/workspaces/:ws it would also catch sibling routes.
  const admin = requireWorkspaceAdmin;

  // --- workspace admin ------------------------------------------------------------------------------
  const ws = new Hono<AppEnv>()
    .route('/', runRoutes({ workspaceDeps: deps.workspaceDeps, cursors, audit: deps.audit }))
    .route('/', flowRoutes({ db, audit: deps.audit, workspaceDeps: deps.workspaceDeps, cursors }))
    .route('/', feedbackRoutes({ db, cursors }))
    .route('/', serviceAccountRoutes({ ...workspaces, authenticator: deps.authenticator, cursors }))
    .post('/connections', admin, jsonBody(createConnectionBody), async (c) => {
      const started = performance.now();
      const body = c.req.valid('json');
      const workspaceId = c.get('access').workspaceId;
      const auth = body.auth;
      const row = await repos.createConnection(db, workspaceId, {
        id: newId('conn', 16),
        name: body.name,
        type: body.type,
        baseUrl: body.baseUrl ?? null,
        authType: auth.type,
        secretCiphertext: 'secret' in auth ? deps.secretBox.encrypt(auth.secret, workspaceId) : null,
        config: {
          ...(auth.type === 'api-key' ? { headerName: auth.headerName } : {}),
          ...(body.model !== undefined ? { model: body.model } : {}),
        },
      });
      if (!row) throw new AppError('conflict', `a connection named ${body.name} already exists`);
      audit(c, 'connections.create', 'ok', body, started);
      return c.json(connectionView(row), 201);
    })
    .patch('/connections/:id', admin, jsonBody(updateConnectionBody), async (c) => {
      const started = performance.now();
      const body = c.req.valid('json');
      const workspaceId = c.get('access').workspaceId;
      const id = c.req.param('id');
      const current = await repos.getConnection(db, workspaceId, id);
      if (!current) throw new AppError('not_found', 'connection not found');
      const patch = await connectionPatch(db, deps.secretBox, current, body);
      const row = await repos.updateConnection(db, workspaceId, id, patch);
      if (!row) throw new AppError('not_found', 'connection not found');
      audit(c, 'connections.update', 'ok', connectionAuditArgs(id, body), started);
      return c.json(connectionView(row));
    })
    .post('/connections/:id/rotate', admin, jsonBody(rotateConnectionBody), async (c) => {
      const started = performance.now();
      const { secret } = c.req.valid('json');
      const workspaceId = c.get('access').workspaceId;
      const id = c.req.param('id');
      const current = await repos.getConnection(db, workspaceId, id);
      if (!current) throw new AppError('not_found', 'connection not found');
      const patch = await connectionPatch(db, deps.secretBox, current, { secret });
      const row = await repos.updateConnection(db, workspaceId, id, patch);
      if (!row) throw new AppError('not_found', 'connection not found');
      audit(c, 'connections.rotate', 'ok', { connectionId: id, name: row.name }, started);
      return c.json(connectionView(row));
    })
    .post('/connections/:id/disable', admin, async (c) => {
      const started = performance.now();
      const id = c.req.param('id');
      const row = await repos.updateConnection(db, c.get('access').workspaceId, id, { status: 'disabled' });
      if (!row) throw new AppError('not_found', 'connection not found');
      audit(c, 'connections.disable', 'ok', { connectionId: id, name: row.name }, started);
      return c.json(connectionView(row));
    })
    .post('/connections/:id/enable', admin, async (c) => {
      const started = performance.now();
      const id = c.req.param('id');
      const row = await repos.updateConnection(db, c.get('access').workspaceId, id, { status: 'active' });
      if (!row) throw new AppError('not_found', 'connection not found');
      audit(c, 'connections.enable', 'ok', { connectionId: id, name: row.name }, started);
      return c.json(connectionView(row));
    })
    .post('/connections/:id/check', admin, async (c) => {
      const started = performance.now();
      const id = c.req.param('id');
      const checks = await workspaceOf(c, deps.workspaceDeps).connections.check({
        connectionIds: [id],
        limit: 1,
        after: null,
      });
      const check = checks.items[0];
      if (!check) throw new AppError('not_found', 'connection not found');
      audit(c, 'connections.check', 'ok', { connectionId: id, status: check.status }, started);
      return c.json(check);
    })
    .delete(
      '/connections/:id',
      admin,
      query(deleteConnectionQuery, () => new AppError('invalid_request', 'force must be true or false')),
      async (c) => {
        const started = performance.now();
        const id = c.req.param('id');
        const force = c.req.valid('query').force === 'true';
        const removed = await workspaceOf(c, deps.workspaceDeps).connections.remove({
          connectionId: id,
          force,
        });
        audit(c, 'connections.delete', 'ok', { ...removed, force }, started);
        return c.json({ ...removed, deleted: true as const });
      },
    )
    .get('/connections', admin, pageParams, async (c) => {
      const q = c.req.valid('query');
      const after = cursors.open(c, 'connections', q.cursor, idPosition);
      const { items, nextCursor } = await paginate(
        q.limit,
        (limit) => repos.listConnections(db, c.get('access').workspaceId, { limit, afterId: after?.id }),
        (last) => cursors.seal(c, 'connections', { id: last.id }),
      );
      return c.json({ items: items.map(connectionView), nextCursor });
    })
    .get('/mcp-policy', admin, async (c) =>
      c.json(policyView(await repos.getPolicy(db, c.get('access').workspaceId))),
    )
    .put('/mcp-policy', admin, jsonBody(mcpPolicyBody(deps.toolNames)), async (c) => {
      const started = performance.now();
      const body = c.req.valid('json');
      const access = c.get('access');
      const workspaceId = access.workspaceId;
      // A workspace principal saving an allowlist without its own address would lock itself out of the workspace
      // (the operator is not subject to it on admin calls, see ipAllowlist).
      const ips = body.allowedIps;
      if (access.principal.kind !== 'operator' && ips !== undefined && ips.length > 0) {
        const own = c.get('clientIp');
        if (own === null || !ipAllowed(own, ips)) {
          throw new AppError(
            'invalid_request',
            `allowedIps must include your current address (${own ?? 'unknown'}), or you would lock yourself out; the operator token can set any list`,
          );
        }
      }
      const policy = await repos.putPolicy(db, workspaceId, body);
      deps.workspaces.invalidate(workspaceId);
      audit(c, 'mcp_policy.update', 'ok', body, started);
      return c.json(policyView(policy));
    })
    .get('/audit', admin, pageParams, async (c) => {
      const q = c.req.valid('query');
      const before = cursors.open(c, 'audit', q.cursor, auditPosition);
      const { items, nextCursor } = await paginate(
        q.limit,
        (limit) => repos.listAuditEntries(db, c.get('access').workspaceId, { limit, beforeId: before?.id }),
        (last) => cursors.seal(c, 'audit', { id: last.id }),
      );
      return c.json({ items: items.map((r) => ({ ...r, at: r.at.toISOString() })), nextCursor });
    });

  // --- operator -------------------------------------------------------------------------------------
  return new Hono<AppEnv>()
    .post(
      '/api/admin/workspaces',
      deps.operatorGuard ?? operatorGuard(deps.authenticator),
      jsonBody(createWorkspaceBody),
      async (c) => {
        const started = performance.now();
        const body = c.req.valid('json');
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
      },
    )
    .route('/api/workspaces/:ws', ws);
}

/** The admin API's routes and answers, for typed clients (`hc<AdminApi>`). */
export type AdminApi = ReturnType<typeof adminRoutes>;
