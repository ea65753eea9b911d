import { AppError, newId, utf8Length } from '@flowgate/core';
import type { FlowModel } from '@flowgate/flows';
import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { Database, Transaction } from '../client.js';
import { flows, flowTools, flowVersions, workspaces } from '../schema.js';
import { literalSha256, metadataSha256 } from './flow-digests.js';
import {
  flowSearchText,
  newVersionColumns,
  replaceToolRows,
  toolRowsFromModel,
} from './search-projection.js';

/**
 * Flows and their drafts: saving, reading and listing them, reading any source's definition, and bulk import. Versions
 * and releases live in flow-versions.ts, slot bindings in bindings.ts, trust pins in trust-pins.ts, the rows search
 * reads in search-projection.ts. Every query is scoped by the workspace id passed first; nothing here crosses
 * workspaces (installations of public flows live in installations.ts).
 */

export type FlowRow = typeof flows.$inferSelect;

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

/** Bounds on what one workspace stores; tests pass smaller ones. */
export const MAX_FLOWS_PER_WORKSPACE = 20_000;
export const MAX_VERSIONS_PER_FLOW = 1_000;

export interface FlowLimits {
  maxFlowsPerWorkspace?: number | undefined;
  maxVersionsPerFlow?: number | undefined;
}

/** Same bound as the definition reader: a stored literal is never larger than a pushable one. */
export const MAX_FLOW_LITERAL_BYTES = 150 * 1024;

function assertLiteral(literal: string): void {
  if (utf8Length(literal) > MAX_FLOW_LITERAL_BYTES) {
    throw new AppError('payload_too_large', `a flow definition is at most ${MAX_FLOW_LITERAL_BYTES} bytes`);
  }
}

// ---- drafts ---------------------------------------------------------------------------------------------------

/**
 * Refuses to add `adding` flows beyond the workspace's bound. The workspace row is locked first so concurrent
 * creations in one workspace count one after the other (saving an existing flow's draft never gets here).
 */
async function assertFlowRoom(
  tx: Transaction,
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
  return row ? versionDefinition(flow, row, typeof source === 'object' ? 'version' : source) : null;
}

function versionDefinition(
  flow: FlowRow,
  row: typeof flowVersions.$inferSelect,
  source: FlowDefinition['source'],
): FlowDefinition {
  return {
    flowId: flow.id,
    flowSlug: flow.slug,
    literal: row.literal,
    literalSha256: row.literalSha256,
    metadataSha256: row.metadataSha256 ?? metadataSha256(row.model as FlowModel),
    model: row.model as FlowModel,
    version: row.version,
    source,
    releaseNote: row.releaseNote,
    updatedAt: row.createdAt,
  };
}

/**
 * A flow by slug with its live definition (null while nothing is live), in one statement: what a run start and most
 * reads of one flow need first.
 */
export async function getFlowWithLive(
  db: Database,
  workspaceId: string,
  slug: string,
): Promise<{ flow: FlowRow; live: FlowDefinition | null } | null> {
  const [found] = await db
    .select({ flow: flows, live: flowVersions })
    .from(flows)
    .leftJoin(
      flowVersions,
      and(
        eq(flowVersions.workspaceId, flows.workspaceId),
        eq(flowVersions.flowId, flows.id),
        eq(flowVersions.version, flows.liveVersion),
      ),
    )
    .where(and(eq(flows.workspaceId, workspaceId), eq(flows.slug, slug)))
    .limit(1);
  if (!found) return null;
  return { flow: found.flow, live: found.live ? versionDefinition(found.flow, found.live, 'live') : null };
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
