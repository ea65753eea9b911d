import { AppError, FLOW_SLUG_PATTERN, INSTALLATION_ID_PATTERN, workspaceIdSchema } from '@flowgate/core';
import { IDENTIFIER_PATTERN, MAX_DEFINITION_BYTES } from '@flowgate/flows';
import type { FlowSummaryRecord, InstallationRecord, InstallationResolution } from '@flowgate/workspace';
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import type { AppEnv } from '../context.js';
import { requireCapability, requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import { type AdminCursors, idPosition, nextIdCursor } from './cursor.js';
import { jsonBody, pageParams, params } from './validation.js';
import { type AdminWorkspaces, workspaceOf } from './workspace-of.js';

/**
 * Flow admin routes (docs/admin-api.md): drafts as EDN, releases, bindings, flow listings, the per-flow metadata
 * opt-in, and installations of other workspaces' public flows. Mounted under `/api/workspaces/:ws` behind the workspace
 * guard. Writes need a workspace admin or the operator: agents with `flows.manage` author through the MCP tools, which
 * keep their own guards (e.g. release_flow never changes a flow's public visibility).
 */

export interface FlowRouteDeps extends AdminWorkspaces {
  cursors: AdminCursors;
}

const slugPosition = z.strictObject({ slug: z.string().min(1).max(128) });

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

function flowView(f: FlowSummaryRecord) {
  return {
    flowSlug: f.slug,
    name: f.name,
    description: f.description,
    tags: f.tags,
    hasDraft: f.hasDraft,
    latestVersion: f.latestVersion,
    liveVersion: f.liveVersion,
    isPublic: f.isPublic,
    trustMetadata: f.trustMetadata,
    draftUpdatedAt: f.draftUpdatedAt,
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
  };
}

function installationView(r: InstallationRecord, resolution?: InstallationResolution) {
  return {
    installationId: r.id,
    sourceWorkspaceId: r.sourceWorkspaceId,
    flowSlug: r.flowSlug,
    versionPolicy: r.versionPolicy,
    pinnedVersion: r.pinnedVersion,
    enabled: r.enabled,
    trustMetadata: r.trustMetadata,
    slotBindings: r.slotBindings,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    ...resolution,
  };
}

export function flowRoutes(deps: FlowRouteDeps) {
  const read = requireCapability('flows.read');
  const admin = requireWorkspaceAdmin;

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
        const { slug } = c.req.valid('param');
        const outcome = await workspaceOf(c, deps).flows.saveDraft({
          literal: await c.req.text(),
          expectedSlug: slug,
        });
        const { diagnostics } = outcome;
        if (outcome.status !== 'saved') return c.json({ flowSlug: slug, valid: false, diagnostics }, 422);
        return c.json({ flowSlug: slug, valid: true, diagnostics });
      })

      .post('/flows/:slug/release', admin, slugParam, jsonBody(releaseBody), async (c) => {
        const { slug } = c.req.valid('param');
        const body = c.req.valid('json');
        // Workspace admins and the operator may change a flow's :discover visibility with a release.
        const released = await workspaceOf(c, deps).flows.release({
          slug,
          version: body.version ?? null,
          releaseNote: body.releaseNote ?? null,
          keepVisibility: false,
        });
        return c.json({
          flowSlug: released.flowSlug,
          version: released.version,
          created: released.created,
          previousLiveVersion: released.previousLiveVersion,
          releaseNote: released.releaseNote,
        });
      })

      .put('/flows/:slug/bindings', admin, slugParam, jsonBody(bindingsBody), async (c) => {
        const { slug } = c.req.valid('param');
        const { target, slots } = c.req.valid('json');
        const bound = await workspaceOf(c, deps).flows.setBindings(slug, target, slots);
        return c.json({ flowSlug: slug, target, slots: bound });
      })

      .patch('/flows/:slug', admin, slugParam, jsonBody(flowPatchBody), async (c) => {
        const { slug } = c.req.valid('param');
        const flow = await workspaceOf(c, deps).flows.setTrust(slug, c.req.valid('json').trustMetadata);
        return c.json(flowView(flow));
      })

      // --- reads --------------------------------------------------------------------------------------------------------
      .get('/flows', read, pageParams, async (c) => {
        const q = c.req.valid('query');
        const after = deps.cursors.open(c, 'flows', q.cursor, slugPosition);
        const page = await workspaceOf(c, deps).flows.listOwn({ limit: q.limit, after: after?.slug ?? null });
        return c.json({
          items: page.items.map(flowView),
          nextCursor:
            page.nextAfter === null ? null : deps.cursors.seal(c, 'flows', { slug: page.nextAfter }),
        });
      })

      .get('/flows/:slug', read, slugParam, async (c) => {
        const { versions, bindings, ...flow } = await workspaceOf(c, deps).flows.detail(
          c.req.valid('param').slug,
        );
        return c.json({ ...flowView(flow), versions, bindings });
      })

      // --- installations ------------------------------------------------------------------------------------------------
      .post('/installations', admin, jsonBody(installBody), async (c) => {
        const { resolution, ...installation } = await workspaceOf(c, deps).installations.install(
          c.req.valid('json'),
        );
        return c.json(installationView(installation, resolution), 201);
      })

      .patch('/installations/:id', admin, installationParam, jsonBody(installationPatchBody), async (c) => {
        const { id } = c.req.valid('param');
        const { resolution, ...installation } = await workspaceOf(c, deps).installations.update(
          id,
          c.req.valid('json'),
        );
        return c.json(installationView(installation, resolution));
      })

      .get('/installations', requireCapability('installations.read'), pageParams, async (c) => {
        const q = c.req.valid('query');
        const after = deps.cursors.open(c, 'installations', q.cursor, idPosition);
        const page = await workspaceOf(c, deps).installations.list({
          limit: q.limit,
          after: after?.id ?? null,
        });
        return c.json({
          items: page.items.map((r) => installationView(r)),
          nextCursor: nextIdCursor(deps.cursors, c, 'installations', page.nextAfter),
        });
      })
  );
}
