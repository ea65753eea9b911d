/**
 * A workspace admin's view of its own flows: listings and details as stored (names as authored, versions, bindings),
 * slot bindings and the per-flow metadata opt-in. Drafts and releases are `authoring.ts`, shared with the MCP tools.
 */
import { AppError } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { audited } from '../audit.js';
import type { UseCaseContext } from '../scope.js';
import type { Page } from './records.js';

/** Flows a workspace may store and released versions a flow may have: the repository refuses more. */
export const MAX_FLOWS_PER_WORKSPACE: number = repos.MAX_FLOWS_PER_WORKSPACE;
export const MAX_VERSIONS_PER_FLOW: number = repos.MAX_VERSIONS_PER_FLOW;

/** An own flow as its admins list it. */
export interface FlowSummaryRecord {
  slug: string;
  name: string | null;
  description: string | null;
  tags: string[];
  hasDraft: boolean;
  latestVersion: number | null;
  liveVersion: number | null;
  isPublic: boolean;
  trustMetadata: boolean;
  draftUpdatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface FlowVersionRecord {
  version: number;
  releaseNote: string | null;
  isPublic: boolean;
  createdAt: string;
}

/** A flow with its newest versions and its slot bindings (slot → connection id) per target. */
export interface FlowDetailRecord extends FlowSummaryRecord {
  versions: FlowVersionRecord[];
  bindings: { live: Record<string, string>; draft: Record<string, string> };
}

export type BindingTarget = 'live' | 'draft';

export interface FlowAdminUseCases {
  /** Own flows in slug order, so a cursor resumes exactly. */
  listOwn(input: { limit: number; after: string | null }): Promise<Page<FlowSummaryRecord>>;
  detail(slug: string): Promise<FlowDetailRecord>;
  /** Only the given slots change; null unbinds. Answers the target's bindings after the change. */
  setBindings(
    slug: string,
    target: BindingTarget,
    slots: Record<string, string | null>,
  ): Promise<Record<string, string>>;
  /** The owner's opt-in to show the flow's authored text, pinned to what it is now. */
  setTrust(slug: string, trustMetadata: boolean): Promise<FlowSummaryRecord>;
}

/** Versions a detail shows; older ones are reached through the MCP tools. */
const DETAIL_VERSIONS = 50;

function summaryRecord(f: repos.FlowSummary | repos.FlowRow): FlowSummaryRecord {
  return {
    slug: f.slug,
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

const flowNotFound = (slug: string) => new AppError('not_found', `flow ${slug} not found`);

export function flowAdminUseCases(ctx: UseCaseContext): FlowAdminUseCases {
  const { db, workspaceId: ws } = ctx;
  return {
    async listOwn({ limit, after }) {
      const rows = await repos.listFlowSummaries(db, ws, { limit: limit + 1, afterSlug: after ?? undefined });
      const items = rows.slice(0, limit).map(summaryRecord);
      return { items, nextAfter: rows.length > limit ? (items.at(-1)?.slug ?? null) : null };
    },
    async detail(slug) {
      const flow = await repos.getFlow(db, ws, slug);
      if (!flow) throw flowNotFound(slug);
      const [versions, live, draft] = await Promise.all([
        repos.listFlowVersions(db, ws, slug, { limit: DETAIL_VERSIONS }),
        repos.getFlowBindings(db, ws, slug, 'live'),
        repos.getFlowBindings(db, ws, slug, 'draft'),
      ]);
      return {
        ...summaryRecord(flow),
        versions: versions.map((v) => ({ ...v, createdAt: v.createdAt.toISOString() })),
        bindings: { live: live ?? {}, draft: draft ?? {} },
      };
    },
    setBindings(slug, target, slots) {
      return audited(
        ctx,
        'flows.bindings.set',
        { ok: () => ({ arguments: { flowSlug: slug, target, slots } }) },
        () => repos.setFlowBindings(db, ws, slug, target, slots),
      );
    },
    setTrust(slug, trustMetadata) {
      return audited(
        ctx,
        'flows.trust.set',
        { ok: () => ({ arguments: { flowSlug: slug, trustMetadata } }) },
        async () => {
          const row = await repos.setFlowTrustMetadata(db, ws, slug, trustMetadata);
          if (!row) throw flowNotFound(slug);
          return summaryRecord(row);
        },
      );
    },
  };
}
