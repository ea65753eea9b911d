/** Flow and flow-tool search: one statement per page (repos/search.ts), records built without further queries. */
import { AppError } from '@flowgate/core';
import { repos } from '@flowgate/db';
import type { UseCaseContext } from '../scope.js';
import { metadataTrust } from '../trust.js';
import type { FlowRecord, FlowToolHitRecord, Page } from './records.js';

const STALE_CURSOR = 'Cursor is no longer valid; omit it to start from the first page';

/** Positions travel inside the caller's sealed cursors as JSON; the shape is still checked on the way back. */
function openPosition<T>(after: string | null, isPosition: (v: unknown) => v is T): T | undefined {
  if (after === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(after);
  } catch {
    parsed = null;
  }
  if (!isPosition(parsed)) throw new AppError('invalid_cursor', STALE_CURSOR);
  return parsed;
}

function flowRecord(hit: repos.FlowHit): FlowRecord {
  const by = hit.installationId === null ? 'owner' : 'installer';
  const optIn = { by, optedIn: hit.trust.optedIn, reviewedSha256: hit.trust.reviewedSha256 } as const;
  return {
    slug: hit.flowSlug,
    installation:
      hit.installationId === null
        ? null
        : {
            id: hit.installationId,
            sourceWorkspaceId: hit.sourceWorkspaceId ?? '',
            versionPolicy: hit.versionPolicy ?? 'track-latest',
            pinnedVersion: hit.pinnedVersion,
            activeVersion: hit.version,
            enabled: hit.enabled === true,
            slotBindings: { ...(hit.slotBindings ?? {}) },
          },
    name: hit.name,
    description: hit.description,
    tags: hit.tags,
    hasDraft: hit.hasDraft,
    draftUpdatedAt: null,
    latestVersion: hit.latestVersion,
    liveVersion: hit.liveVersion,
    isPublic: hit.isPublic,
    mcpToolNames: hit.toolNames,
    optIn,
    trust: metadataTrust({
      by,
      optedIn: hit.trust.optedIn,
      pinMatches: hit.trust.pinMatches,
      draft: hit.installationId === null && hit.liveVersion === null,
    }),
  };
}

/**
 * Flows ranked by relevance to `query` (matching may use authored text), or browsed by slug when `query` is null.
 * Installed public flows are included only when `includeInstalled` (the caller holds installations.read).
 */
export async function searchFlows(
  ctx: UseCaseContext,
  input: { query: string | null; includeInstalled: boolean; limit: number; after: string | null },
): Promise<Page<FlowRecord>> {
  const page = await repos.searchFlows(ctx.db, ctx.workspaceId, {
    query: input.query ?? undefined,
    limit: input.limit,
    after: openPosition(input.after, repos.isFlowSearchPosition),
    includeInstallations: input.includeInstalled,
  });
  return { items: page.items.map(flowRecord), nextAfter: page.next ? JSON.stringify(page.next) : null };
}

/**
 * Callable `:mcp` interfaces: exact `toolName` lookup, text `query` (ranked; may match authored text), or browse
 * when both are null. Own flows contribute their live interfaces, and their draft interfaces too when
 * `includeDraft` (the caller may run drafts); browsing then lists each tool once, with `draft` saying how the draft
 * compares. Same installation rule as `searchFlows`.
 */
export async function searchFlowTools(
  ctx: UseCaseContext,
  input: {
    query: string | null;
    toolName: string | null;
    includeDraft: boolean;
    includeInstalled: boolean;
    limit: number;
    after: string | null;
  },
): Promise<Page<FlowToolHitRecord>> {
  const page = await repos.searchFlowTools(ctx.db, ctx.workspaceId, {
    query: input.query ?? undefined,
    toolName: input.toolName ?? undefined,
    limit: input.limit,
    after: openPosition(input.after, repos.isToolSearchPosition),
    includeDraft: input.includeDraft,
    includeInstallations: input.includeInstalled,
  });
  return {
    items: page.items.map((h) => ({
      flowSlug: h.flowSlug,
      toolName: h.toolName,
      installationId: h.installationId,
      source: h.source,
      title: h.title,
      description: h.description,
      trust: metadataTrust({
        by: h.installationId === null ? 'owner' : 'installer',
        optedIn: h.trust.optedIn,
        pinMatches: h.trust.pinMatches,
        draft: h.source === 'draft',
      }),
      draft: h.draft,
    })),
    nextAfter: page.next ? JSON.stringify(page.next) : null,
  };
}
