import type { Authenticator, WorkspaceAccess } from '@flowgate/auth';
import { AppError } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import type { SecretBox } from '@flowgate/secrets';
import type { WorkspaceDeps } from '@flowgate/workspace';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { AuditSink } from '../audit/queue.js';
import { adminAuditRecorder } from '../audit/recorder.js';
import type { AppEnv } from '../context.js';
import { operatorGuard } from '../middleware/authenticate.js';
import { ipAllowed } from '../middleware/ip.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import type { WorkspaceCache } from '../workspace-cache.js';
import { connectionRoutes } from './connections.js';
import { createAdminCursors, paginate } from './cursor.js';
import { feedbackRoutes } from './feedback.js';
import { flowRoutes } from './flows.js';
import { runRoutes } from './runs.js';
import { createWorkspaceBody, mcpPolicyBody } from './schemas.js';
import { serviceAccountRoutes } from './service-accounts.js';
import { jsonBody, pageParams } from './validation.js';
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
    .route('/', flowRoutes({ ...workspaces, cursors }))
    .route('/', feedbackRoutes({ db, cursors }))
    .route('/', connectionRoutes({ ...workspaces, cursors }))
    .route('/', serviceAccountRoutes({ ...workspaces, authenticator: deps.authenticator, cursors }))
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
