import type { WorkspaceAccess } from '@flowgate/auth';
import { AppError, FLOW_SLUG_PATTERN, workspaceIdSchema } from '@flowgate/core';
import { type Database, repos } from '@flowgate/db';
import {
  type Diagnostic,
  IDENTIFIER_PATTERN,
  isKeyword,
  MAX_DEFINITION_BYTES,
  mapGet,
  readEdn,
  validateFlow,
} from '@flowgate/flows';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import type { AuditSink } from '../audit/queue.js';
import type { AppEnv } from '../context.js';
import { requireWorkspaceAdmin } from '../middleware/authenticate.js';
import { errorResponse } from '../middleware/errors.js';
import { readJson } from './body.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { requireCapability } from './runs.js';
import { pageQuery } from './schemas.js';

/**
 * Flow admin routes (spec 11.1): drafts as EDN, releases, bindings, flow listings, the per-flow metadata opt-in, and
 * installations of other workspaces' public flows. Mounted under `/api/workspaces/:ws` behind the workspace guard.
 * Writes need a workspace admin or the operator (spec 11.1): agents with `flows.manage` author through the MCP
 * tools, which keep their own guards (e.g. release_flow never changes a flow's public visibility).
 */

export interface FlowRouteDeps {
  db: Database;
  audit: AuditSink;
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

const INSTALLATION_ID = /^inst_[A-Za-z0-9]{16}$/;
const EDN_TYPE = /^application\/edn\s*(;|$)/i;

function slugParam(c: Context<AppEnv>): string {
  const slug = c.req.param('slug') ?? '';
  // Path traversal and odd characters never reach a query: a slug is a plain identifier.
  if (!FLOW_SLUG_PATTERN.test(slug)) throw new AppError('invalid_request', 'invalid flow slug');
  return slug;
}

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

/** Where `:slug` sits in the text, for a positioned slug-mismatch diagnostic. */
function slugDiagnostic(text: string, modelSlug: string, pathSlug: string): Diagnostic {
  const read = readEdn(text);
  const node = read.ok && read.value.kind === 'map' ? mapGet(read.value, 'slug') : undefined;
  const loc = node && isKeyword(node) ? node.loc : undefined;
  return {
    severity: 'error',
    code: 'invalid_slug',
    message: `the definition's :slug :${modelSlug} does not match the flow in the URL (${pathSlug})`,
    path: ':slug',
    line: loc?.line ?? null,
    column: loc?.column ?? null,
    hint: `push it to /flows/${modelSlug}/draft, or change :slug to :${pathSlug}`,
  };
}

export function flowRoutes(deps: FlowRouteDeps) {
  const { db } = deps;
  const app = new Hono<AppEnv>();
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
      return errorResponse(c, new AppError('unsupported_media_type', 'Content-Type must be application/edn'));
    }
    await next();
  };
  const draftLimit = bodyLimit({
    maxSize: MAX_DEFINITION_BYTES,
    onError: (c) =>
      errorResponse(
        c,
        new AppError('payload_too_large', `a flow definition is at most ${MAX_DEFINITION_BYTES} bytes`),
      ),
  });

  // --- drafts and releases --------------------------------------------------------------------------------------
  app.put('/flows/:slug/draft', admin, ednOnly, draftLimit, async (c) => {
    const started = performance.now();
    const slug = slugParam(c);
    const text = await c.req.text();
    const bytes = Buffer.byteLength(text, 'utf8');
    const result = validateFlow(text);
    let diagnostics = result.diagnostics;
    let valid = result.valid && result.model !== undefined;
    if (valid && result.model && result.model.slug !== slug) {
      diagnostics = [slugDiagnostic(text, result.model.slug, slug), ...diagnostics];
      valid = false;
    }
    if (!valid || !result.model) {
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
    const saved = await repos.saveDraft(db, c.get('access').workspaceId, {
      literal: text,
      model: result.model,
    });
    audit(c, 'flows.draft.save', 'ok', { flowSlug: slug, bytes, created: saved.created }, started);
    return c.json({ flowSlug: slug, valid: true, diagnostics });
  });

  app.post('/flows/:slug/release', admin, async (c) => {
    const started = performance.now();
    const slug = slugParam(c);
    const body = await readJson(c, releaseBody);
    const result = await repos.releaseFlow(db, c.get('access').workspaceId, slug, body);
    audit(
      c,
      'flows.release',
      'ok',
      { flowSlug: slug, ...body, version: result.version, created: result.created },
      started,
    );
    return c.json(result);
  });

  app.put('/flows/:slug/bindings', admin, async (c) => {
    const started = performance.now();
    const slug = slugParam(c);
    const body = await readJson(c, bindingsBody);
    const slots = await repos.setFlowBindings(db, c.get('access').workspaceId, slug, body.target, body.slots);
    audit(c, 'flows.bindings.set', 'ok', { flowSlug: slug, target: body.target, slots: body.slots }, started);
    return c.json({ flowSlug: slug, target: body.target, slots });
  });

  app.patch('/flows/:slug', admin, async (c) => {
    const started = performance.now();
    const slug = slugParam(c);
    const body = await readJson(c, flowPatchBody);
    const row = await repos.setFlowTrustMetadata(db, c.get('access').workspaceId, slug, body.trustMetadata);
    if (!row) throw new AppError('not_found', `flow ${slug} not found`);
    audit(c, 'flows.trust.set', 'ok', { flowSlug: slug, ...body }, started);
    return c.json(flowView(row));
  });

  // --- reads --------------------------------------------------------------------------------------------------------
  app.get('/flows', read, async (c) => {
    const q = pageQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError('invalid_request', 'limit must be 1..200');
    const after = decodeCursor<{ slug: string }>(q.data.cursor, ['slug']);
    const rows = await repos.listFlowSummaries(db, c.get('access').workspaceId, {
      limit: q.data.limit + 1,
      afterSlug: after ? String(after.slug) : undefined,
    });
    const page = rows.slice(0, q.data.limit);
    const last = page.at(-1);
    return c.json({
      items: page.map(flowView),
      nextCursor: rows.length > q.data.limit && last ? encodeCursor({ slug: last.slug }) : null,
    });
  });

  app.get('/flows/:slug', read, async (c) => {
    const slug = slugParam(c);
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
  });

  // --- installations ------------------------------------------------------------------------------------------------
  app.post('/installations', admin, async (c) => {
    const started = performance.now();
    const body = await readJson(c, installBody);
    const row = await repos.installFlow(db, c.get('access').workspaceId, body);
    audit(c, 'installations.create', 'ok', { ...body, installationId: row.id }, started);
    return c.json(installationView(row, await repos.resolveInstalledDefinition(db, row)), 201);
  });

  app.patch('/installations/:id', admin, async (c) => {
    const started = performance.now();
    const id = c.req.param('id');
    if (!INSTALLATION_ID.test(id)) throw new AppError('not_found', 'installation not found');
    const body = await readJson(c, installationPatchBody);
    const row = await repos.updateInstallation(db, c.get('access').workspaceId, id, body);
    audit(c, 'installations.update', 'ok', { installationId: id, ...body }, started);
    return c.json(installationView(row, await repos.resolveInstalledDefinition(db, row)));
  });

  app.get('/installations', requireCapability('installations.read'), async (c) => {
    const q = pageQuery.safeParse(c.req.query());
    if (!q.success) throw new AppError('invalid_request', 'limit must be 1..200');
    const after = decodeCursor<{ id: string }>(q.data.cursor, ['id']);
    const rows = await repos.listInstallations(db, c.get('access').workspaceId, {
      limit: q.data.limit + 1,
      afterId: after ? String(after.id) : undefined,
    });
    const page = rows.slice(0, q.data.limit);
    const last = page.at(-1);
    return c.json({
      items: page.map((r) => installationView(r)),
      nextCursor: rows.length > q.data.limit && last ? encodeCursor({ id: last.id }) : null,
    });
  });

  return app;
}
