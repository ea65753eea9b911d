import { capabilitySchema, effectiveCapabilities } from '@flowgate/auth';
import { AppError, INSTALLATION_ID_PATTERN } from '@flowgate/core';
import { repos } from '@flowgate/db';
import {
  CATALOG,
  evaluateTool,
  narrowingHeadersFrom,
  parseNarrowingHeaders,
  TOOL_NAMES,
} from '@flowgate/workspace-mcp';
import { createTwoFilesPatch } from 'diff';
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { adminRoutes } from '../admin/routes.js';
import type { GatewayDeps } from '../app.js';
import type { AppEnv } from '../context.js';
import { createErrorHandler } from '../middleware/errors.js';
import { ipAllowlist } from '../middleware/ip.js';
import { requireWorkspaceAdmin, workspaceAccess } from '../middleware/workspace-access.js';

import type { ConsoleSession } from './session.js';

/** The answer of an in-process admin API call: its status and parsed JSON body (null when it had none). */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

export type AdminCaller = (
  c: Context<AppEnv>,
  session: ConsoleSession,
  method: string,
  path: string,
  body?: unknown,
) => Promise<ApiAnswer>;

const auditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  key: z.string().min(1).max(64).optional(),
  tool: z.string().min(1).max(200).optional(),
  outcome: z.enum(['ok', 'error', 'blocked', 'denied']).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
});

const diffQuery = z.object({
  from: z.coerce.number().int().min(1).max(1_000_000_000),
  to: z.coerce.number().int().min(1).max(1_000_000_000),
});

const workspacesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  after: z.string().min(1).max(64).optional(),
});

/**
 * The admin API, mounted on a private Hono app that only the console reaches, behind the same workspace guards as
 * the public one (access to the workspace, admin role, IP allowlist). The console acts as its session's principal
 * through it, so a page can never do more than that principal could with a bearer token. The principal travels
 * next to the Request object (never in a header), so nothing from outside can claim one.
 */
export function createAdminCaller(deps: GatewayDeps): AdminCaller {
  const principals = new WeakMap<Request, ConsoleSession['principal']>();
  const requestIds = new WeakMap<Request, string>();
  const app = new Hono<AppEnv>();
  app.onError(createErrorHandler(deps.logger));
  app.use('*', async (c, next) => {
    const principal = principals.get(c.req.raw);
    if (!principal) throw new AppError('unauthorized', 'no console session');
    c.set('principal', principal);
    c.set('requestId', requestIds.get(c.req.raw) ?? 'console');
    await next();
  });
  app.use(
    '/api/workspaces/:ws/*',
    workspaceAccess({ authenticator: deps.authenticator, workspaces: deps.workspaces }),
    ipAllowlist(deps.config.trustProxy),
  );

  // Reads the admin API has no filtered form of: the same repositories, behind the same admin guard.
  app.get('/api/workspaces/:ws/console/audit', requireWorkspaceAdmin, async (c) => {
    const q = auditQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError('invalid_request', 'invalid audit filter');
    const rows = await repos.listAuditEntries(
      deps.db.db,
      c.get('access').workspaceId,
      { limit: q.data.limit + 1, beforeId: q.data.before },
      {
        keyId: q.data.key,
        action: q.data.tool,
        outcome: q.data.outcome,
        since: q.data.since ? new Date(q.data.since) : undefined,
        until: q.data.until ? new Date(q.data.until) : undefined,
      },
    );
    const more = rows.length > q.data.limit;
    const items = rows.slice(0, q.data.limit);
    return c.json({ items, next: more ? (items.at(-1)?.id ?? null) : null });
  });
  /**
   * The tools/list a service account's keys would get with the given X-MCP-* headers: the catalog through the same
   * narrowing parser and `evaluateTool` the MCP endpoint uses, against the workspace's current policy.
   */
  app.get('/api/workspaces/:ws/console/tools-preview', requireWorkspaceAdmin, async (c) => {
    const workspaceId = c.get('access').workspaceId;
    const saId = c.req.query('serviceAccountId') ?? '';
    const account = saId ? await repos.getServiceAccount(deps.db.db, workspaceId, saId) : null;
    if (!account) throw new AppError('not_found', 'service account not found');
    const narrowing = parseNarrowingHeaders(
      narrowingHeadersFrom((name) => {
        const v = c.req.query(name);
        return v === undefined || v === '' ? undefined : v;
      }),
      TOOL_NAMES,
    );
    if (!narrowing.ok) throw new AppError('invalid_request', narrowing.error.message);
    const policy = await repos.getPolicy(deps.db.db, workspaceId);
    const ctx = {
      capabilities:
        account.status === 'active'
          ? effectiveCapabilities(
              account.capabilities.flatMap((cap) => {
                const parsed = capabilitySchema.safeParse(cap);
                return parsed.success ? [parsed.data] : [];
              }),
            )
          : new Set<never>(),
      narrowing: narrowing.narrowing,
      workspacePolicy: policy,
    };
    const tools = CATALOG.map((tool) => ({ name: tool.name, ...evaluateTool(tool, ctx) }));
    return c.json({
      serviceAccount: { id: account.id, name: account.name, status: account.status },
      visible: tools.filter((t) => t.visible).map((t) => t.name),
      hidden: tools.filter((t) => !t.visible).map((t) => ({ name: t.name, blockers: t.blockers })),
    });
  });
  /** A unified diff between two released versions of a flow (the admin API serves no version text). */
  app.get('/api/workspaces/:ws/console/flows/:slug/diff', requireWorkspaceAdmin, async (c) => {
    const q = diffQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError('invalid_request', 'from and to are version numbers');
    const workspaceId = c.get('access').workspaceId;
    const slug = c.req.param('slug');
    const [from, to] = await Promise.all([
      repos.getFlowVersion(deps.db.db, workspaceId, slug, q.data.from),
      repos.getFlowVersion(deps.db.db, workspaceId, slug, q.data.to),
    ]);
    if (!from || !to) throw new AppError('not_found', 'no such version of this flow');
    const patch = createTwoFilesPatch(
      `${slug} v${from.version}`,
      `${slug} v${to.version}`,
      from.literal,
      to.literal,
    );
    return c.json({ from: from.version, to: to.version, patch });
  });
  /**
   * What a metadata trust opt-in would cover: the live version's text to review (the opt-in pins its metadata, so a
   * later release that changes only code keeps it), and whether the current opt-in (if any) covers it.
   */
  app.get('/api/workspaces/:ws/console/flows/:slug/live-text', requireWorkspaceAdmin, async (c) => {
    const workspaceId = c.get('access').workspaceId;
    const slug = c.req.param('slug');
    const flow = await repos.getFlow(deps.db.db, workspaceId, slug);
    if (!flow) throw new AppError('not_found', `flow ${slug} not found`);
    const live = await repos.definitionOf(deps.db.db, flow, 'live');
    return c.json({
      version: live?.version ?? null,
      literal: live?.literal ?? null,
      trusted: live !== null && flow.trustMetadata && flow.trustedMetadataSha256 === live.metadataSha256,
    });
  });
  /**
   * What an installation's metadata trust opt-in covers: the text of the version it runs now (a public released
   * version of the source flow; null when it cannot run) to review, and whether the current opt-in covers its metadata.
   */
  app.get('/api/workspaces/:ws/console/installations/:id/text', requireWorkspaceAdmin, async (c) => {
    const workspaceId = c.get('access').workspaceId;
    const id = c.req.param('id');
    const installation = INSTALLATION_ID_PATTERN.test(id)
      ? await repos.getInstallation(deps.db.db, workspaceId, id)
      : null;
    if (!installation) throw new AppError('not_found', 'installation not found');
    const runs = await repos.resolveInstalledDefinition(deps.db.db, installation);
    return c.json({
      version: runs?.version ?? null,
      literal: runs?.literal ?? null,
      trusted:
        runs !== null &&
        installation.trustMetadata &&
        installation.trustedMetadataSha256 === runs.metadataSha256,
    });
  });
  app.get('/api/console/workspaces', async (c) => {
    if (c.get('principal').kind !== 'operator') {
      throw new AppError('insufficient_role', 'only the operator lists workspaces');
    }
    const q = workspacesQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError('invalid_request', 'invalid page');
    const rows = await repos.listWorkspaces(deps.db.db, { limit: q.data.limit + 1, afterId: q.data.after });
    const more = rows.length > q.data.limit;
    const items = rows.slice(0, q.data.limit);
    return c.json({ items, next: more ? (items.at(-1)?.id ?? null) : null });
  });
  app.route(
    '/',
    adminRoutes({
      ...deps,
      // The session's principal (set above) stands in for the operator bearer token.
      operatorGuard: async (c, next) => {
        if (c.get('principal').kind !== 'operator') {
          throw new AppError(
            'insufficient_role',
            'this action needs the operator token (FLOWGATE_ADMIN_TOKEN)',
          );
        }
        await next();
      },
    }),
  );

  return async (c, session, method, path, body) => {
    const headers: Record<string, string> = {};
    let payload: string | undefined;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const request = new Request(new URL(path, 'http://console.internal'), {
      method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
    });
    principals.set(request, session.principal);
    requestIds.set(request, c.get('requestId'));
    // The outer request's environment, so the IP allowlist sees the real client address.
    const res = await app.fetch(request, c.env);
    const text = await res.text();
    let parsed: unknown = null;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
    }
    return { status: res.status, body: parsed };
  };
}
