import { createHash } from 'node:crypto';
import { AppError, type ErrorIssue, newId } from '@flowgate/core';
import type { FlowModel, RequiresSlot } from '@flowgate/flows';
import { and, asc, count, desc, eq, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import {
  bindings,
  connections,
  flows,
  flowTools,
  flowVersions,
  type ToolSummary,
  type VersionSummary,
  workspaces,
} from '../schema.js';

/**
 * Flows, their immutable versions, the live pointer, the denormalised MCP interfaces search reads, and slot
 * bindings. Every query is scoped by the workspace id passed first; nothing here crosses workspaces (installations
 * of public flows live in installations.ts).
 */

export type FlowRow = typeof flows.$inferSelect;
export type FlowVersionRow = typeof flowVersions.$inferSelect;
export type BindingTarget = 'live' | 'draft';

/**
 * Where a definition comes from (docs/flows.md, "Versions and sources"). `active` is the released version runs use: the
 * live one.
 */
export type DefinitionSource = 'draft' | 'latest' | 'live' | 'active' | { version: number };

export interface FlowDefinition {
  flowId: string;
  flowSlug: string;
  /** The EDN text exactly as pushed. */
  literal: string;
  /** sha256 (hex) of the literal's UTF-8 bytes. */
  literalSha256: string;
  /** `metadataSha256` of the model: what a metadata trust opt-in is compared with. */
  metadataSha256: string;
  model: FlowModel;
  /** Null for the draft. */
  version: number | null;
  /** The source asked for, with an explicit version reported as `version`. */
  source: 'draft' | 'latest' | 'live' | 'active' | 'version';
  releaseNote: string | null;
  /** When the draft was saved or the version released. */
  updatedAt: Date;
}

export interface FlowVersionSummary {
  version: number;
  releaseNote: string | null;
  isPublic: boolean;
  createdAt: Date;
}

export interface ReleaseResult {
  flowSlug: string;
  version: number;
  /** False when an existing version was reused (unchanged draft) or pointed at (rollback). */
  created: boolean;
  previousLiveVersion: number | null;
  /**
   * The note the version holds: a note given for a reused or rolled-back version is not stored (versions never change).
   */
  releaseNote: string | null;
}

/** Bounds on what one workspace stores; tests pass smaller ones. */
export const MAX_FLOWS_PER_WORKSPACE = 20_000;
export const MAX_VERSIONS_PER_FLOW = 1_000;

export interface FlowLimits {
  maxFlowsPerWorkspace?: number | undefined;
  maxVersionsPerFlow?: number | undefined;
}

/** Same bound as the definition reader: a stored literal is never larger than a pushable one. */
export const MAX_FLOW_LITERAL_BYTES = 150 * 1024;
/** Search text is for matching only; longer authored text adds nothing a query could usefully hit. */
const MAX_SEARCH_TEXT = 8192;
const MAX_BINDINGS_PER_CALL = 64;

// ---- derived rows ---------------------------------------------------------------------------------------------

const squash = (parts: Array<string | undefined | null>) =>
  parts
    .filter((p): p is string => typeof p === 'string' && p.length > 0)
    .join(' ')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_SEARCH_TEXT);

/** What `searchFlows` matches for a flow: slug, name, description, tags and tool names. */
export function flowSearchText(model: FlowModel): string {
  return squash([
    model.slug,
    model.name,
    model.description,
    ...model.tags,
    ...model.interfaces.mcp.map((m) => m.toolName),
  ]);
}

/** One row per `:mcp` interface; search text = tool name, slug, flow name and description, interface text, tags. */
export function toolRowsFromModel(model: FlowModel): ToolSummary[] {
  return model.interfaces.mcp.map((m) => ({
    toolName: m.toolName,
    invocation: m.invocation,
    title: m.title ?? m.label ?? null,
    description: m.description ?? null,
    flowName: model.name ?? null,
    searchText: squash([
      m.toolName,
      model.slug,
      model.name,
      model.description,
      m.title,
      m.label,
      m.description,
      ...model.tags,
    ]),
  }));
}

/** What search keeps of a released version (`flow_versions.summary`). */
export function versionSummary(model: FlowModel): VersionSummary {
  return {
    name: model.name ?? null,
    description: model.description ?? null,
    tags: [...model.tags],
    searchText: flowSearchText(model),
    tools: toolRowsFromModel(model),
  };
}

/** The columns a new version row derives from its definition. */
function newVersionColumns(literal: string, model: FlowModel) {
  return {
    literal,
    model,
    literalSha256: literalSha256(literal),
    metadataSha256: metadataSha256(model),
    summary: versionSummary(model),
    isPublic: model.discover.public,
  };
}

/**
 * Fills `summary` for versions released before it existed; run by `migrate()` after the SQL migrations. Idempotent,
 * and cheap once done (the partial scan finds nothing).
 */
export async function backfillVersionSummaries(db: Database): Promise<number> {
  let filled = 0;
  for (;;) {
    const rows = await db
      .select({ flowId: flowVersions.flowId, version: flowVersions.version, model: flowVersions.model })
      .from(flowVersions)
      .where(isNull(flowVersions.summary))
      .limit(200);
    if (rows.length === 0) return filled;
    await db.transaction(async (tx) => {
      for (const r of rows) {
        await tx
          .update(flowVersions)
          .set({ summary: versionSummary(r.model as FlowModel) })
          .where(and(eq(flowVersions.flowId, r.flowId), eq(flowVersions.version, r.version)));
      }
    });
    filled += rows.length;
  }
}

function assertLiteral(literal: string): void {
  if (Buffer.byteLength(literal, 'utf8') > MAX_FLOW_LITERAL_BYTES) {
    throw new AppError('payload_too_large', `a flow definition is at most ${MAX_FLOW_LITERAL_BYTES} bytes`);
  }
}

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
type Executor = Database | Tx;

async function replaceToolRows(
  db: Executor,
  workspaceId: string,
  flow: { id: string; slug: string },
  source: 'draft' | 'live',
  model: FlowModel,
  version: number | null,
): Promise<void> {
  await db
    .delete(flowTools)
    .where(
      and(
        eq(flowTools.workspaceId, workspaceId),
        eq(flowTools.flowId, flow.id),
        eq(flowTools.source, source),
      ),
    );
  const rows = toolRowsFromModel(model);
  if (rows.length === 0) return;
  await db
    .insert(flowTools)
    .values(rows.map((r) => ({ ...r, workspaceId, flowId: flow.id, flowSlug: flow.slug, source, version })));
}

// ---- drafts ---------------------------------------------------------------------------------------------------

/**
 * Refuses to add `adding` flows beyond the workspace's bound. The workspace row is locked first so concurrent
 * creations in one workspace count one after the other (saving an existing flow's draft never gets here).
 */
async function assertFlowRoom(
  tx: Tx,
  workspaceId: string,
  adding: number,
  limits: FlowLimits,
): Promise<void> {
  const max = limits.maxFlowsPerWorkspace ?? MAX_FLOWS_PER_WORKSPACE;
  await tx.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, workspaceId)).for('update');
  const [row] = await tx.select({ n: count() }).from(flows).where(eq(flows.workspaceId, workspaceId));
  if ((row?.n ?? 0) + adding > max) {
    throw new AppError('conflict', `a workspace has at most ${max} flows`);
  }
}

/**
 * Creates or replaces the draft of the flow named by `model.slug`. The caller validated the literal and built the
 * model from it (`validateFlow`); nothing here re-parses EDN. The draft's MCP interfaces replace the flow's `draft`
 * search rows in the same transaction. Publicity is not taken from a draft: it follows the live version.
 */
export async function saveDraft(
  db: Database,
  workspaceId: string,
  draft: { literal: string; model: FlowModel },
  limits: FlowLimits = {},
): Promise<{ flow: FlowRow; created: boolean }> {
  assertLiteral(draft.literal);
  const { model } = draft;
  const now = new Date();
  const fields = {
    name: model.name ?? null,
    description: model.description ?? null,
    tags: model.tags,
    draftLiteral: draft.literal,
    draftModel: model,
    draftUpdatedAt: now,
    searchText: flowSearchText(model),
    updatedAt: now,
  };
  return db.transaction(async (tx) => {
    const [existing] = await tx
      .select({ id: flows.id })
      .from(flows)
      .where(and(eq(flows.workspaceId, workspaceId), eq(flows.slug, model.slug)))
      .limit(1);
    if (!existing) await assertFlowRoom(tx, workspaceId, 1, limits);
    const rows = await tx
      .insert(flows)
      .values({ id: newId('flow', 16), workspaceId, slug: model.slug, ...fields })
      .onConflictDoUpdate({ target: [flows.workspaceId, flows.slug], set: fields })
      .returning({ id: flows.id, inserted: sql<boolean>`(xmax = 0)` });
    const row = rows[0];
    if (!row) throw new AppError('internal_error', 'draft was not saved');
    await replaceToolRows(tx, workspaceId, { id: row.id, slug: model.slug }, 'draft', model, null);
    const [flow] = await tx
      .select()
      .from(flows)
      .where(and(eq(flows.workspaceId, workspaceId), eq(flows.id, row.id)));
    return { flow: flow as FlowRow, created: row.inserted };
  });
}

export async function getFlow(db: Database, workspaceId: string, slug: string): Promise<FlowRow | null> {
  const rows = await db
    .select()
    .from(flows)
    .where(and(eq(flows.workspaceId, workspaceId), eq(flows.slug, slug)))
    .limit(1);
  return rows[0] ?? null;
}

/** Flows in slug order, `limit` at most 200. Rows carry the draft literal: use `listFlowSummaries` for listings. */
export async function listFlows(
  db: Database,
  workspaceId: string,
  page: { limit: number; afterSlug?: string | undefined },
): Promise<FlowRow[]> {
  const conds = [eq(flows.workspaceId, workspaceId)];
  if (page.afterSlug !== undefined) conds.push(sql`${flows.slug} > ${page.afterSlug}`);
  return db
    .select()
    .from(flows)
    .where(and(...conds))
    .orderBy(asc(flows.slug))
    .limit(Math.min(Math.max(page.limit, 1), 200));
}

export type FlowSummary = Omit<FlowRow, 'draftLiteral' | 'draftModel' | 'searchText'> & { hasDraft: boolean };

/** Slugs of a workspace's own flows (at most `limit`, slug order): candidates for a "did you mean" hint. */
export async function listFlowSlugs(db: Database, workspaceId: string, limit: number): Promise<string[]> {
  const rows = await db
    .select({ slug: flows.slug })
    .from(flows)
    .where(eq(flows.workspaceId, workspaceId))
    .orderBy(asc(flows.slug))
    .limit(Math.min(Math.max(limit, 1), 300));
  return rows.map((r) => r.slug);
}

/** Like `listFlows` without the definitions: what an admin listing needs. */
export async function listFlowSummaries(
  db: Database,
  workspaceId: string,
  page: { limit: number; afterSlug?: string | undefined },
): Promise<FlowSummary[]> {
  const conds = [eq(flows.workspaceId, workspaceId)];
  if (page.afterSlug !== undefined) conds.push(sql`${flows.slug} > ${page.afterSlug}`);
  return db
    .select({
      id: flows.id,
      workspaceId: flows.workspaceId,
      slug: flows.slug,
      name: flows.name,
      description: flows.description,
      tags: flows.tags,
      draftUpdatedAt: flows.draftUpdatedAt,
      latestVersion: flows.latestVersion,
      liveVersion: flows.liveVersion,
      isPublic: flows.isPublic,
      trustMetadata: flows.trustMetadata,
      trustedMetadataSha256: flows.trustedMetadataSha256,
      createdAt: flows.createdAt,
      updatedAt: flows.updatedAt,
      hasDraft: sql<boolean>`(${flows.draftLiteral} is not null)`,
    })
    .from(flows)
    .where(and(...conds))
    .orderBy(asc(flows.slug))
    .limit(Math.min(Math.max(page.limit, 1), 200));
}

/** Newest first; `beforeVersion` continues a page. */
export async function listFlowVersions(
  db: Database,
  workspaceId: string,
  slug: string,
  page: { limit: number; beforeVersion?: number | undefined },
): Promise<FlowVersionSummary[]> {
  const conds = [eq(flowVersions.workspaceId, workspaceId), eq(flows.slug, slug)];
  if (page.beforeVersion !== undefined) conds.push(lt(flowVersions.version, page.beforeVersion));
  return db
    .select({
      version: flowVersions.version,
      releaseNote: flowVersions.releaseNote,
      isPublic: flowVersions.isPublic,
      createdAt: flowVersions.createdAt,
    })
    .from(flowVersions)
    .innerJoin(flows, and(eq(flows.id, flowVersions.flowId), eq(flows.workspaceId, flowVersions.workspaceId)))
    .where(and(...conds))
    .orderBy(desc(flowVersions.version))
    .limit(Math.min(Math.max(page.limit, 1), 200));
}

export async function getFlowVersion(
  db: Database,
  workspaceId: string,
  slug: string,
  version: number,
): Promise<FlowVersionRow | null> {
  if (!Number.isSafeInteger(version) || version < 1) return null;
  const rows = await db
    .select({ v: flowVersions })
    .from(flowVersions)
    .innerJoin(flows, and(eq(flows.id, flowVersions.flowId), eq(flows.workspaceId, flowVersions.workspaceId)))
    .where(
      and(eq(flowVersions.workspaceId, workspaceId), eq(flows.slug, slug), eq(flowVersions.version, version)),
    )
    .limit(1);
  return rows[0]?.v ?? null;
}

/**
 * The definition a source names (docs/flows.md, "Versions and sources"), or null when the flow does not exist in this
 * workspace or the source does not exist yet (no draft, nothing released, no such version).
 */
export async function getDefinition(
  db: Database,
  workspaceId: string,
  slug: string,
  source: DefinitionSource,
): Promise<FlowDefinition | null> {
  const flow = await getFlow(db, workspaceId, slug);
  if (!flow) return null;
  return definitionOf(db, flow, source);
}

/** `getDefinition` for a flow row already read (saves a query on hot paths). */
export async function definitionOf(
  db: Database,
  flow: FlowRow,
  source: DefinitionSource,
): Promise<FlowDefinition | null> {
  if (source === 'draft') {
    if (flow.draftLiteral === null || flow.draftModel === null) return null;
    return {
      flowId: flow.id,
      flowSlug: flow.slug,
      literal: flow.draftLiteral,
      literalSha256: literalSha256(flow.draftLiteral),
      metadataSha256: metadataSha256(flow.draftModel as FlowModel),
      model: flow.draftModel as FlowModel,
      version: null,
      source: 'draft',
      releaseNote: null,
      updatedAt: flow.draftUpdatedAt ?? flow.updatedAt,
    };
  }
  const version =
    typeof source === 'object' ? source.version : source === 'latest' ? flow.latestVersion : flow.liveVersion;
  if (version === null || !Number.isSafeInteger(version) || version < 1) return null;
  const rows = await db
    .select()
    .from(flowVersions)
    .where(
      and(
        eq(flowVersions.workspaceId, flow.workspaceId),
        eq(flowVersions.flowId, flow.id),
        eq(flowVersions.version, version),
      ),
    )
    .limit(1);
  const row = rows[0];
  if (!row) return null;
  return {
    flowId: flow.id,
    flowSlug: flow.slug,
    literal: row.literal,
    literalSha256: row.literalSha256,
    metadataSha256: row.metadataSha256 ?? metadataSha256(row.model as FlowModel),
    model: row.model as FlowModel,
    version: row.version,
    source: typeof source === 'object' ? 'version' : source,
    releaseNote: row.releaseNote,
    updatedAt: row.createdAt,
  };
}

// ---- releases -------------------------------------------------------------------------------------------------

/**
 * Without `version`: snapshots the draft as the next version (or reuses the latest version when the draft is
 * byte-identical to it, storing the release note given on it) and points live at it. With `version`: points live at that existing version (a rollback or
 * roll-forward). Versions are never changed once written. The `live` search rows and the flow's publicity follow the
 * live version. Serialised per flow by a row lock, so concurrent releases cannot both take the same number.
 */
export async function releaseFlow(
  db: Database,
  workspaceId: string,
  slug: string,
  options: {
    version?: number | undefined;
    releaseNote?: string | undefined;
    /**
     * The visibility the caller checked (the flow's and the released definition's `:discover {:public}`), enforced
     * under the row lock: a draft or flow that changed since the check is refused with `conflict`, nothing released.
     */
    expectedPublic?: boolean | undefined;
    limits?: FlowLimits | undefined;
  } = {},
): Promise<ReleaseResult> {
  if (options.releaseNote !== undefined && options.releaseNote.length > 2000) {
    throw new AppError('validation_failed', 'a release note is at most 2000 characters');
  }
  return db.transaction(async (tx) => {
    const [flow] = await tx
      .select()
      .from(flows)
      .where(and(eq(flows.workspaceId, workspaceId), eq(flows.slug, slug)))
      .for('update')
      .limit(1);
    if (!flow) throw new AppError('not_found', `flow ${slug} not found`);

    let version: number;
    let model: FlowModel;
    let releaseNote: string | null;
    let created = false;
    const maxVersions = options.limits?.maxVersionsPerFlow ?? MAX_VERSIONS_PER_FLOW;
    const assertVisibility = (candidate: FlowModel) => {
      const expected = options.expectedPublic;
      if (expected === undefined) return;
      if (flow.isPublic !== expected || candidate.discover.public !== expected) {
        throw new AppError(
          'conflict',
          `flow ${slug} visibility changed since it was checked (the flow is ${flow.isPublic ? 'public' : 'private'}, ` +
            `the definition to release is ${candidate.discover.public ? 'public' : 'private'}); nothing was released`,
        );
      }
    };
    const versionRow = async (n: number) =>
      (
        await tx
          .select()
          .from(flowVersions)
          .where(
            and(
              eq(flowVersions.workspaceId, workspaceId),
              eq(flowVersions.flowId, flow.id),
              eq(flowVersions.version, n),
            ),
          )
          .limit(1)
      )[0];

    if (options.version !== undefined) {
      const row =
        Number.isSafeInteger(options.version) && options.version > 0
          ? await versionRow(options.version)
          : undefined;
      if (!row) throw new AppError('not_found', `flow ${slug} has no version ${options.version}`);
      version = row.version;
      model = row.model as FlowModel;
      assertVisibility(model);
      releaseNote = row.releaseNote;
    } else {
      if (flow.draftLiteral === null || flow.draftModel === null) {
        throw new AppError('invalid_request', `flow ${slug} has no draft to release`);
      }
      const latest = flow.latestVersion === null ? undefined : await versionRow(flow.latestVersion);
      if (latest && latest.literal === flow.draftLiteral) {
        version = latest.version;
        model = latest.model as FlowModel;
        assertVisibility(model);
        releaseNote = latest.releaseNote;
        // A note given with an unchanged draft describes this release: it is stored on the reused version (only
        // the note; the definition never changes), so what is returned and audited is what the version holds.
        if (options.releaseNote !== undefined && options.releaseNote !== latest.releaseNote) {
          await tx
            .update(flowVersions)
            .set({ releaseNote: options.releaseNote })
            .where(
              and(
                eq(flowVersions.workspaceId, workspaceId),
                eq(flowVersions.flowId, flow.id),
                eq(flowVersions.version, latest.version),
              ),
            );
          releaseNote = options.releaseNote;
        }
      } else {
        // Versions are numbered from 1 and never deleted, so the latest number is the count.
        if ((flow.latestVersion ?? 0) >= maxVersions) {
          throw new AppError(
            'conflict',
            `flow ${slug} has ${maxVersions} versions, the limit; roll back to an existing version instead`,
          );
        }
        version = (flow.latestVersion ?? 0) + 1;
        model = flow.draftModel as FlowModel;
        assertVisibility(model);
        releaseNote = options.releaseNote ?? null;
        await tx.insert(flowVersions).values({
          workspaceId,
          flowId: flow.id,
          version,
          ...newVersionColumns(flow.draftLiteral, model),
          releaseNote: options.releaseNote ?? null,
        });
        created = true;
      }
    }

    await tx
      .update(flows)
      .set({
        liveVersion: version,
        latestVersion: Math.max(flow.latestVersion ?? 0, version),
        isPublic: model.discover.public,
        updatedAt: new Date(),
      })
      .where(and(eq(flows.workspaceId, workspaceId), eq(flows.id, flow.id)));
    if (flow.liveVersion !== version || created) {
      await replaceToolRows(tx, workspaceId, flow, 'live', model, version);
    }
    return { flowSlug: flow.slug, version, created, previousLiveVersion: flow.liveVersion, releaseNote };
  });
}

/** The sha256 (hex) of a definition literal's UTF-8 bytes. */
export function literalSha256(literal: string): string {
  return createHash('sha256').update(literal, 'utf8').digest('hex');
}

/** JSON with object keys sorted and undefined members left out, so equal models give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * What a metadata trust opt-in covers: the model without its code (the `:flow` body, the steps written in it and the
 * functions' code) — slug, name, description, tags, slots, invocations with their input schemas, interfaces, function
 * descriptions, concurrency and visibility. Authored text a model may be shown lives here, never in code, so a release
 * that changes only code keeps an opt-in and one that changes any of this drops it. Comments of the literal are not
 * covered: they are never shown as trusted (a definition is always served marked untrusted).
 */
export function flowMetadata(model: FlowModel): Omit<FlowModel, 'flow' | 'steps' | 'functions'> & {
  functions: Array<{ id: string; description?: string | undefined }>;
} {
  const { flow: _flow, steps: _steps, functions, ...rest } = model;
  return { ...rest, functions: functions.map((f) => ({ id: f.id, description: f.description })) };
}

/** The sha256 (hex) of a model's metadata (`flowMetadata`) as canonical JSON: what a trust opt-in is pinned to. */
export function metadataSha256(model: FlowModel): string {
  return createHash('sha256')
    .update(canonicalJson(flowMetadata(model)), 'utf8')
    .digest('hex');
}

/**
 * Fills `flow_versions.metadata_sha256` for versions released before it existed, then moves opt-ins pinned to a
 * literal digest (before migration 0012) to the metadata digest of the version they pinned, so no review is lost.
 * Run by `migrate()`; idempotent (a metadata digest never equals a literal digest, so a moved pin is not moved again).
 */
export async function backfillMetadataDigests(db: Database): Promise<number> {
  let filled = 0;
  for (;;) {
    const rows = await db
      .select({ flowId: flowVersions.flowId, version: flowVersions.version, model: flowVersions.model })
      .from(flowVersions)
      .where(isNull(flowVersions.metadataSha256))
      .limit(200);
    if (rows.length === 0) break;
    await db.transaction(async (tx) => {
      for (const r of rows) {
        await tx
          .update(flowVersions)
          .set({ metadataSha256: metadataSha256(r.model as FlowModel) })
          .where(and(eq(flowVersions.flowId, r.flowId), eq(flowVersions.version, r.version)));
      }
    });
    filled += rows.length;
  }
  await db.execute(sql`
    update flows f set trusted_metadata_sha256 = v.metadata_sha256
      from flow_versions v
     where v.workspace_id = f.workspace_id and v.flow_id = f.id
       and v.literal_sha256 = f.trusted_metadata_sha256 and v.metadata_sha256 is not null`);
  await db.execute(sql`
    update installations i set trusted_metadata_sha256 = v.metadata_sha256
      from flow_versions v
     where v.workspace_id = i.source_workspace_id and v.flow_id = i.source_flow_id
       and v.literal_sha256 = i.trusted_metadata_sha256 and v.metadata_sha256 is not null`);
  return filled;
}

/**
 * Workspace admin opt-in (docs/flows.md, "Metadata safety"): show this flow's authored text to models. The opt-in
 * covers exactly what the admin reviewed, the live version as it is now: its literal's digest is stored, and the text
 * of any other definition (a later release, a draft) stays untrusted until an admin opts in again. Without a live
 * version there is nothing reviewed to pin, so the opt-in is refused.
 */
export async function setFlowTrustMetadata(
  db: Database,
  workspaceId: string,
  slug: string,
  trusted: boolean,
): Promise<FlowRow | null> {
  return db.transaction(async (tx) => {
    const [flow] = await tx
      .select()
      .from(flows)
      .where(and(eq(flows.workspaceId, workspaceId), eq(flows.slug, slug)))
      .for('update')
      .limit(1);
    if (!flow) return null;
    let digest: string | null = null;
    if (trusted) {
      const live = flow.liveVersion === null ? undefined : await liveModel(tx, flow);
      if (live === undefined) {
        throw new AppError(
          'invalid_request',
          `flow ${slug} has no live version to review; release it, review the released text, then opt in`,
        );
      }
      digest = metadataSha256(live);
    }
    const rows = await tx
      .update(flows)
      .set({ trustMetadata: trusted, trustedMetadataSha256: digest, updatedAt: new Date() })
      .where(and(eq(flows.workspaceId, workspaceId), eq(flows.id, flow.id)))
      .returning();
    return rows[0] ?? null;
  });
}

/** The digest an own flow's opt-in is pinned to (null when it has no opt-in), without reading its draft. */
export async function flowTrustPin(
  db: Database,
  workspaceId: string,
  flowId: string,
): Promise<{ trustMetadata: boolean; trustedMetadataSha256: string | null } | null> {
  const rows = await db
    .select({ trustMetadata: flows.trustMetadata, trustedMetadataSha256: flows.trustedMetadataSha256 })
    .from(flows)
    .where(and(eq(flows.workspaceId, workspaceId), eq(flows.id, flowId)))
    .limit(1);
  return rows[0] ?? null;
}

async function liveModel(db: Executor, flow: FlowRow): Promise<FlowModel | undefined> {
  if (flow.liveVersion === null) return undefined;
  const rows = await db
    .select({ model: flowVersions.model })
    .from(flowVersions)
    .where(
      and(
        eq(flowVersions.workspaceId, flow.workspaceId),
        eq(flowVersions.flowId, flow.id),
        eq(flowVersions.version, flow.liveVersion),
      ),
    )
    .limit(1);
  return rows[0]?.model as FlowModel | undefined;
}

/**
 * The metadata digest of one released version, read from its column so search pages need not read whole
 * definitions; null when there is no such version. `publicOnly` for versions read across workspaces (installations).
 */
export async function versionMetadataSha256(
  db: Database,
  workspaceId: string,
  flowId: string,
  version: number,
  options: { publicOnly: boolean },
): Promise<string | null> {
  if (!Number.isSafeInteger(version) || version < 1) return null;
  const conds = [
    eq(flowVersions.workspaceId, workspaceId),
    eq(flowVersions.flowId, flowId),
    eq(flowVersions.version, version),
  ];
  if (options.publicOnly) conds.push(eq(flowVersions.isPublic, true));
  const rows = await db
    .select({ digest: flowVersions.metadataSha256 })
    .from(flowVersions)
    .where(and(...conds))
    .limit(1);
  return rows[0]?.digest ?? null;
}

// ---- bindings -------------------------------------------------------------------------------------------------

/** Where the connection a run of a target uses for one slot was bound. */
export interface RunBinding {
  connectionId: string;
  /** `draft` when the draft has its own binding for the slot, else `live`. */
  boundFor: BindingTarget;
}

/**
 * The slot bindings a run of a flow's target uses, each with where it was bound. A live run uses the live bindings.
 * A draft run uses the draft's own binding for a slot, else the live one, slot by slot: an agent can test an edit of
 * a flow whose slots are bound for live without binding them again, and a draft binding never reaches a live run.
 */
export async function getRunBindings(
  db: Database,
  workspaceId: string,
  flowId: string,
  target: BindingTarget,
): Promise<Record<string, RunBinding>> {
  const targets: BindingTarget[] = target === 'draft' ? ['live', 'draft'] : ['live'];
  const rows = await db
    .select({ slot: bindings.slot, connectionId: bindings.connectionId, target: bindings.target })
    .from(bindings)
    .where(
      and(
        eq(bindings.workspaceId, workspaceId),
        eq(bindings.flowId, flowId),
        inArray(bindings.target, targets),
      ),
    )
    .orderBy(asc(bindings.slot));
  const out: Record<string, RunBinding> = {};
  for (const r of rows) {
    const boundFor = r.target;
    // A draft binding wins over the live one for the same slot, whichever row came first.
    if (out[r.slot]?.boundFor === 'draft') continue;
    out[r.slot] = { connectionId: r.connectionId, boundFor };
  }
  return out;
}

/** The slot → connection map a run of a flow's target uses (see `getRunBindings`). */
export async function getFlowBindingsById(
  db: Database,
  workspaceId: string,
  flowId: string,
  target: BindingTarget,
): Promise<Record<string, string>> {
  const resolved = await getRunBindings(db, workspaceId, flowId, target);
  return Object.fromEntries(Object.entries(resolved).map(([slot, b]) => [slot, b.connectionId]));
}

/**
 * The model of one released version, read in the workspace that owns the flow (for an installation, the source
 * workspace: the run row names it).
 */
export async function getVersionModel(
  db: Database,
  workspaceId: string,
  flowId: string,
  version: number,
): Promise<FlowModel | null> {
  const rows = await db
    .select({ model: flowVersions.model })
    .from(flowVersions)
    .where(
      and(
        eq(flowVersions.workspaceId, workspaceId),
        eq(flowVersions.flowId, flowId),
        eq(flowVersions.version, version),
      ),
    )
    .limit(1);
  return (rows[0]?.model as FlowModel | undefined) ?? null;
}

export async function getFlowBindings(
  db: Database,
  workspaceId: string,
  slug: string,
  target: BindingTarget,
): Promise<Record<string, string> | null> {
  const flow = await getFlow(db, workspaceId, slug);
  if (!flow) return null;
  return bindingsOf(db, workspaceId, flow.id, target);
}

async function bindingsOf(db: Executor, workspaceId: string, flowId: string, target: BindingTarget) {
  const rows = await db
    .select({ slot: bindings.slot, connectionId: bindings.connectionId })
    .from(bindings)
    .where(
      and(eq(bindings.workspaceId, workspaceId), eq(bindings.flowId, flowId), eq(bindings.target, target)),
    )
    .orderBy(asc(bindings.slot));
  const out: Record<string, string> = {};
  for (const r of rows) out[r.slot] = r.connectionId;
  return out;
}

/**
 * Checks slot → connection pairs against the slots a definition declares and the connections of `workspaceId`
 * (never another workspace's): every problem is reported, nothing is written. Shared with installations.
 */
export async function checkSlotBindings(
  db: Executor,
  workspaceId: string,
  declared: ReadonlyArray<Pick<RequiresSlot, 'slot' | 'type'>>,
  slots: Record<string, string | null>,
  pathPrefix: string,
): Promise<ErrorIssue[]> {
  const issues: ErrorIssue[] = [];
  const entries = Object.entries(slots);
  if (entries.length > MAX_BINDINGS_PER_CALL) {
    return [{ path: pathPrefix, message: `at most ${MAX_BINDINGS_PER_CALL} slots per request` }];
  }
  const ids = [...new Set(entries.map(([, id]) => id).filter((id): id is string => typeof id === 'string'))];
  const found = ids.length
    ? await db
        .select({ id: connections.id, type: connections.type })
        .from(connections)
        .where(and(eq(connections.workspaceId, workspaceId), inArray(connections.id, ids)))
    : [];
  const typeOf = new Map(found.map((c) => [c.id, c.type]));
  for (const [slot, connectionId] of entries) {
    const path = `${pathPrefix}.${slot}`;
    const decl = declared.find((d) => d.slot === slot);
    if (!decl) {
      const names = declared.map((d) => d.slot);
      issues.push({
        path,
        message: names.length
          ? `the flow does not require a slot ${slot}; it requires: ${names.join(', ')}`
          : `the flow requires no slots`,
      });
      continue;
    }
    if (connectionId === null) continue;
    const type = typeOf.get(connectionId);
    // Same message whether the id is unknown or belongs to another workspace.
    if (!type) issues.push({ path, message: `connection ${connectionId} not found in this workspace` });
    else if (type !== decl.type)
      issues.push({
        path,
        message: `slot ${slot} needs a ${decl.type} connection; ${connectionId} is ${type}`,
      });
  }
  return issues;
}

/**
 * Binds (or, with null, unbinds) slots of a flow's target to connections of the same workspace. Only the given slots
 * change. The `draft` target accepts the draft's slots; `live` accepts the live version's and the draft's, so bindings
 * can be prepared before a release. Returns every binding of the target afterwards.
 */
export async function setFlowBindings(
  db: Database,
  workspaceId: string,
  slug: string,
  target: BindingTarget,
  slots: Record<string, string | null>,
): Promise<Record<string, string>> {
  const flow = await getFlow(db, workspaceId, slug);
  if (!flow) throw new AppError('not_found', `flow ${slug} not found`);
  const declared: RequiresSlot[] = [];
  const add = (model: FlowModel | null | undefined) => {
    for (const r of model?.requires ?? []) if (!declared.some((d) => d.slot === r.slot)) declared.push(r);
  };
  if (target === 'live' && flow.liveVersion !== null) add((await definitionOf(db, flow, 'live'))?.model);
  add(flow.draftModel as FlowModel | null);
  const issues = await checkSlotBindings(db, workspaceId, declared, slots, 'slots');
  if (issues.length > 0) throw new AppError('validation_failed', 'bindings are invalid', issues);
  return db.transaction(async (tx) => {
    const now = new Date();
    for (const [slot, connectionId] of Object.entries(slots)) {
      const where = and(
        eq(bindings.workspaceId, workspaceId),
        eq(bindings.flowId, flow.id),
        eq(bindings.target, target),
        eq(bindings.slot, slot),
      );
      if (connectionId === null) await tx.delete(bindings).where(where);
      else {
        await tx
          .insert(bindings)
          .values({ workspaceId, flowId: flow.id, target, slot, connectionId, updatedAt: now })
          .onConflictDoUpdate({
            target: [bindings.workspaceId, bindings.flowId, bindings.target, bindings.slot],
            set: { connectionId, updatedAt: now },
          });
      }
    }
    return bindingsOf(tx, workspaceId, flow.id, target);
  });
}

// ---- bulk import ----------------------------------------------------------------------------------------------

/**
 * Inserts many new flows at once, each with its draft and (when `release`) version 1 live: for seeding and
 * benchmarks. Slugs must be new in the workspace (a clash fails the whole batch, which is one transaction).
 */
export async function importFlows(
  db: Database,
  workspaceId: string,
  items: ReadonlyArray<{ literal: string; model: FlowModel }>,
  options: { release: boolean; chunkSize?: number; limits?: FlowLimits },
): Promise<number> {
  const chunk = Math.min(Math.max(options.chunkSize ?? 500, 1), 2000);
  for (const it of items) assertLiteral(it.literal);
  await db.transaction(async (tx) => {
    await assertFlowRoom(tx, workspaceId, items.length, options.limits ?? {});
    for (let i = 0; i < items.length; i += chunk) {
      const part = items.slice(i, i + chunk).map((it) => ({ ...it, id: newId('flow', 16) }));
      const now = new Date();
      await tx.insert(flows).values(
        part.map(({ id, literal, model }) => ({
          id,
          workspaceId,
          slug: model.slug,
          name: model.name ?? null,
          description: model.description ?? null,
          tags: model.tags,
          draftLiteral: literal,
          draftModel: model,
          draftUpdatedAt: now,
          searchText: flowSearchText(model),
          latestVersion: options.release ? 1 : null,
          liveVersion: options.release ? 1 : null,
          isPublic: options.release ? model.discover.public : false,
        })),
      );
      const draftTools = part.flatMap(({ id, model }) =>
        toolRowsFromModel(model).map((r) => ({ ...r, workspaceId, flowId: id, flowSlug: model.slug })),
      );
      const sources: Array<'draft' | 'live'> = options.release ? ['draft', 'live'] : ['draft'];
      for (const source of sources) {
        for (let j = 0; j < draftTools.length; j += chunk) {
          await tx
            .insert(flowTools)
            .values(
              draftTools
                .slice(j, j + chunk)
                .map((r) => ({ ...r, source, version: source === 'live' ? 1 : null })),
            );
        }
      }
      if (!options.release) continue;
      await tx.insert(flowVersions).values(
        part.map(({ id, literal, model }) => ({
          workspaceId,
          flowId: id,
          version: 1,
          ...newVersionColumns(literal, model),
          releaseNote: null,
        })),
      );
    }
  });
  // Fresh statistics after a bulk load, so search plans walk the name index instead of guessing from empty tables
  // (the embedded database has no autovacuum to do it).
  await db.execute(sql`analyze flows, flow_tools, flow_versions`);
  return items.length;
}
