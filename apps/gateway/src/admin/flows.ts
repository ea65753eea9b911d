import type { WorkspaceAccess } from '@flowgate/auth';
import { AppError, FLOW_SLUG_PATTERN, INSTALLATION_ID_PATTERN, workspaceIdSchema } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import { IDENTIFIER_PATTERN, MAX_DEFINITION_BYTES } from '@flowgate/flows';
import { openWorkspace, type WorkspaceDeps } from '@flowgate/workspace';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import type { AuditSink } from '../audit/queue.js';
import type { AppEnv } from '../context.js';
import { requireCapability, requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import { type AdminCursors, paginate } from './cursor.js';
import { jsonBody, pageParams, params } from './validation.js';

/**
 * Flow admin routes (docs/admin-api.md): drafts as EDN, releases, bindings, flow listings, the per-flow metadata
 * opt-in, and installations of other workspaces' public flows. Mounted under `/api/workspaces/:ws` behind the workspace
 * guard. Writes need a workspace admin or the operator: agents with `flows.manage` author through the MCP tools, which
 * keep their own guards (e.g. release_flow never changes a flow's public visibility).
 */

export interface FlowRouteDeps {
  db: Database;
  audit: AuditSink;
  workspaceDeps: WorkspaceDeps;
  cursors: AdminCursors;
}

const slugPosition = z.strictObject({ slug: z.string().min(1).max(128) });
const idPosition = z.strictObject({ id: z.string().min(1).max(64) });

/** The caller's workspace use cases: drafts and releases go through the same ones the MCP tools use. */
function workspaceOf(c: Context<AppEnv>, deps: WorkspaceDeps) {
  const access = c.get('access');
  return openWorkspace(deps, {
    workspaceId: access.workspaceId,
    actor: { kind: access.principal.kind, id: access.principal.id },
  });
}

const slotMap = z
  .record(
    z.string().regex(IDENTIFIER_PATTERN, 'slot names are identifiers like crm or llm-main'),
    z.string().min(1).max(100).nullable(),
  )
  .refine((m) => Object.keys(m).length <= 64, 'at most 64 slots');

const releaseBody = z.strictObject({
  version: z.number().int().min(1).max(1_000_000_000).optional(),
  releaseNote: z.string().max(2000).optional(),
});

const bindingsBody = z.strictObject({
  target: z.enum(['live', 'draft']).default('live'),
  slots: slotMap.refine((m) => Object.keys(m).length > 0, 'give at least one slot'),
});

const flowPatchBody = z.strictObject({ trustMetadata: z.boolean() });

const installBody = z
  .strictObject({
    sourceWorkspaceId: workspaceIdSchema,
    flowSlug: z.string().regex(FLOW_SLUG_PATTERN, 'not a flow slug'),
    versionPolicy: z.enum(['pinned', 'track-latest']),
    pinnedVersion: z.number().int().min(1).max(1_000_000_000).optional(),
  })
  .refine((b) => (b.versionPolicy === 'pinned') === (b.pinnedVersion !== undefined), {
    message: 'pinnedVersion is required with versionPolicy "pinned" and not allowed otherwise',
    path: ['pinnedVersion'],
  });

const installationPatchBody = z
  .strictObject({
    enabled: z.boolean().optional(),
    trustMetadata: z.boolean().optional(),
    slotBindings: slotMap.optional(),
    versionPolicy: z.enum(['pinned', 'track-latest']).optional(),
    pinnedVersion: z.number().int().min(1).max(1_000_000_000).optional(),
  })
  .refine(
    (b) => Object.keys(b).length > 0,
    'provide at least one of enabled, trustMetadata, slotBindings, versionPolicy, pinnedVersion',
  );

const EDN_TYPE = /^application\/edn\s*(;|$)/i;

// Path traversal and odd characters never reach a query: a slug is a plain identifier.
const slugParam = params(
  z.object({ slug: z.string().regex(FLOW_SLUG_PATTERN) }),
  () => new AppError('invalid_request', 'invalid flow slug'),
);
const installationParam = params(
  z.object({ id: z.string().regex(INSTALLATION_ID_PATTERN) }),
  () => new AppError('not_found', 'installation not found'),
);

function flowView(f: repos.FlowSummary | repos.FlowRow) {
  return {
    flowSlug: f.slug,
    name: f.name,
    description: f.description,
    tags: f.tags,
    hasDraft: 'hasDraft' in f ? f.hasDraft : f.draftLiteral !== null,
    latestVersion: f.latestVersion,
    liveVersion: f.liveVersion,
    isPublic: f.isPublic,
    trustMetadata: f.trustMetadata,
    draftUpdatedAt: f.draftUpdatedAt?.toISOString() ?? null,
    createdAt: f.createdAt.toISOString(),
    updatedAt: f.updatedAt.toISOString(),
  };
}

function installationView(row: repos.InstallationRow, resolved?: repos.InstalledDefinition | null) {
  return {
    installationId: row.id,
    sourceWorkspaceId: row.sourceWorkspaceId,
    flowSlug: row.sourceFlowSlug,
    versionPolicy: row.versionPolicy,
    pinnedVersion: row.pinnedVersion,
    enabled: row.enabled,
    trustMetadata: row.trustMetadata,
    slotBindings: row.slotBindings,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(resolved === undefined
      ? {}
      : resolved === null
        ? { available: false, version: null, missingSlots: [] as string[] }
        : { available: true, version: resolved.version, missingSlots: resolved.missingSlots }),
  };
}

export function flowRoutes(deps: FlowRouteDeps) {
  const { db } = deps;
  const read = requireCapability('flows.read');
  const admin = requireWorkspaceAdmin;

  const audit = (
    c: Context<AppEnv>,
    action: string,
    outcome: 'ok' | 'error',
    args: unknown,
    started: number,
  ) => {
    const access: WorkspaceAccess = c.get('access');
    const p = access.principal;
    deps.audit.record({
      workspaceId: access.workspaceId,
      requestId: c.get('requestId'),
      principalType: p.kind,
      principalId: p.id,
      keyId: access.keyId,
      kind: 'admin',
      action,
      arguments: args ?? null,
      outcome,
      durationMs: Math.round(performance.now() - started),
    });
  };

  const ednOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (!EDN_TYPE.test(c.req.header('content-type') ?? '')) {
      throw new AppError('unsupported_media_type', 'Content-Type must be application/edn');
    }
    await next();
  };
  const draftLimit = bodyLimit({
    maxSize: MAX_DEFINITION_BYTES,
    onError: () => {
      throw new AppError('payload_too_large', `a flow definition is at most ${MAX_DEFINITION_BYTES} bytes`);
    },
  });

  return (
    new Hono<AppEnv>()
      // --- drafts and releases ------------------------------------------------------------------------------------
      .put('/flows/:slug/draft', admin, ednOnly, draftLimit, slugParam, async (c) => {
        const started = performance.now();
        const { slug } = c.req.valid('param');
        const text = await c.req.text();
        const bytes = Buffer.byteLength(text, 'utf8');
        const outcome = await workspaceOf(c, deps.workspaceDeps).flows.saveDraft({
          literal: text,
          expectedSlug: slug,
        });
        const { diagnostics } = outcome;
        if (outcome.status !== 'saved') {
          // An invalid definition saves nothing; the audit keeps the codes, never the text.
          audit(
            c,
            'flows.draft.save',
            'error',
            { flowSlug: slug, bytes, codes: [...new Set(diagnostics.map((d) => d.code))] },
            started,
          );
          return c.json({ flowSlug: slug, valid: false, diagnostics }, 422);
        }
        audit(c, 'flows.draft.save', 'ok', { flowSlug: slug, bytes, created: outcome.created }, started);
        return c.json({ flowSlug: slug, valid: true, diagnostics });
      })

      .post('/flows/:slug/release', admin, slugParam, jsonBody(releaseBody), async (c) => {
        const started = performance.now();
        const { slug } = c.req.valid('param');
        const body = c.req.valid('json');
        // Workspace admins and the operator may change a flow's :discover visibility with a release.
        const released = await workspaceOf(c, deps.workspaceDeps).flows.release({
          slug,
          version: body.version ?? null,
          releaseNote: body.releaseNote ?? null,
          keepVisibility: false,
        });
        const result = {
          flowSlug: released.flowSlug,
          version: released.version,
          created: released.created,
          previousLiveVersion: released.previousLiveVersion,
          releaseNote: released.releaseNote,
        };
        audit(
          c,
          'flows.release',
          'ok',
          { flowSlug: slug, ...body, version: result.version, created: result.created },
          started,
        );
        return c.json(result);
      })

      .put('/flows/:slug/bindings', admin, slugParam, jsonBody(bindingsBody), async (c) => {
        const started = performance.now();
        const { slug } = c.req.valid('param');
        const body = c.req.valid('json');
        const slots = await repos.setFlowBindings(
          db,
          c.get('access').workspaceId,
          slug,
          body.target,
          body.slots,
        );
        audit(
          c,
          'flows.bindings.set',
          'ok',
          { flowSlug: slug, target: body.target, slots: body.slots },
          started,
        );
        return c.json({ flowSlug: slug, target: body.target, slots });
      })

      .patch('/flows/:slug', admin, slugParam, jsonBody(flowPatchBody), async (c) => {
        const started = performance.now();
        const { slug } = c.req.valid('param');
        const body = c.req.valid('json');
        const row = await repos.setFlowTrustMetadata(
          db,
          c.get('access').workspaceId,
          slug,
          body.trustMetadata,
        );
        if (!row) throw new AppError('not_found', `flow ${slug} not found`);
        audit(c, 'flows.trust.set', 'ok', { flowSlug: slug, ...body }, started);
        return c.json(flowView(row));
      })

      // --- reads --------------------------------------------------------------------------------------------------------
      .get('/flows', read, pageParams, async (c) => {
        const q = c.req.valid('query');
        const after = deps.cursors.open(c, 'flows', q.cursor, slugPosition);
        const { items, nextCursor } = await paginate(
          q.limit,
          (limit) =>
            repos.listFlowSummaries(db, c.get('access').workspaceId, {
              limit,
              afterSlug: after?.slug,
            }),
          (last) => deps.cursors.seal(c, 'flows', { slug: last.slug }),
        );
        return c.json({ items: items.map(flowView), nextCursor });
      })

      .get('/flows/:slug', read, slugParam, async (c) => {
        const { slug } = c.req.valid('param');
        const workspaceId = c.get('access').workspaceId;
        const flow = await repos.getFlow(db, workspaceId, slug);
        if (!flow) throw new AppError('not_found', `flow ${slug} not found`);
        const [versions, live, draft] = await Promise.all([
          repos.listFlowVersions(db, workspaceId, slug, { limit: 50 }),
          repos.getFlowBindings(db, workspaceId, slug, 'live'),
          repos.getFlowBindings(db, workspaceId, slug, 'draft'),
        ]);
        return c.json({
          ...flowView(flow),
          versions: versions.map((v) => ({ ...v, createdAt: v.createdAt.toISOString() })),
          bindings: { live: live ?? {}, draft: draft ?? {} },
        });
      })

      // --- installations ------------------------------------------------------------------------------------------------
      .post('/installations', admin, jsonBody(installBody), async (c) => {
        const started = performance.now();
        const body = c.req.valid('json');
        const row = await repos.installFlow(db, c.get('access').workspaceId, body);
        audit(c, 'installations.create', 'ok', { ...body, installationId: row.id }, started);
        return c.json(installationView(row, await repos.resolveInstalledDefinition(db, row)), 201);
      })

      .patch('/installations/:id', admin, installationParam, jsonBody(installationPatchBody), async (c) => {
        const started = performance.now();
        const { id } = c.req.valid('param');
        const body = c.req.valid('json');
        const row = await repos.updateInstallation(db, c.get('access').workspaceId, id, body);
        audit(c, 'installations.update', 'ok', { installationId: id, ...body }, started);
        return c.json(installationView(row, await repos.resolveInstalledDefinition(db, row)));
      })

      .get('/installations', requireCapability('installations.read'), pageParams, async (c) => {
        const q = c.req.valid('query');
        const after = deps.cursors.open(c, 'installations', q.cursor, idPosition);
        const { items, nextCursor } = await paginate(
          q.limit,
          (limit) =>
            repos.listInstallations(db, c.get('access').workspaceId, {
              limit,
              afterId: after?.id,
            }),
          (last) => deps.cursors.seal(c, 'installations', { id: last.id }),
        );
        return c.json({ items: items.map((r) => installationView(r)), nextCursor });
      })
  );
}
