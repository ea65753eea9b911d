/** The flow use cases of one workspace. */
import { utf8Length } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { closest } from '@flowgate/flows';
import { audited } from '../audit.js';
import type { UseCaseContext } from '../scope.js';
import { type DraftOutcome, type ReleaseOutcome, release, saveDraft } from './authoring.js';
import { definitionOf, type ResolvedFlow, recordOf, resolveFlow, resolveInstallation } from './lookup.js';
import { type FlowAdminUseCases, flowAdminUseCases } from './manage.js';
import { evaluateReadiness, type Readiness } from './readiness.js';
import type {
  FlowDefinitionRecord,
  FlowRecord,
  FlowSelector,
  FlowToolHitRecord,
  Page,
  SlotBindingRecord,
} from './records.js';
import { type TrustReview, trustReview } from './review.js';
import { searchFlows, searchFlowTools } from './search.js';
import { type FlowTemplate, matchingTemplates } from './templates.js';

/** A flow this workspace can see, resolved once; its definitions, bindings and readiness are read from it. */
export interface OpenFlow {
  readonly record: FlowRecord;
  /** The flow row that runs: this workspace's own, or an installation's source flow in its publishing workspace. */
  readonly source: { flowId: string; workspaceId: string };
  /** A stored definition; an installation reaches only the released version it runs. */
  definition(selector: FlowSelector): Promise<FlowDefinitionRecord | null>;
  /** The definition a target runs: the live (an installation's active) version, or the draft. */
  definitionFor(target: 'live' | 'draft'): Promise<FlowDefinitionRecord | null>;
  /** The bindings a run of an own flow's target uses (a draft's own, else live, per slot), or an installation's. Sorted by slot. */
  slotBindings(target: 'live' | 'draft'): Promise<SlotBindingRecord[]>;
  readiness(target: 'live' | 'draft'): Promise<Readiness>;
  /**
   * The live target's readiness as it would be once `definition` went live as `version` (with the live bindings):
   * what a release shows before it happens.
   */
  readinessIfLive(definition: FlowDefinitionRecord, version: number): Promise<Readiness>;
}

export interface FlowUseCases extends FlowAdminUseCases {
  search(input: {
    query: string | null;
    includeInstalled: boolean;
    limit: number;
    after: string | null;
  }): Promise<Page<FlowRecord>>;
  searchTools(input: {
    query: string | null;
    toolName: string | null;
    includeDraft: boolean;
    includeInstalled: boolean;
    limit: number;
    after: string | null;
  }): Promise<Page<FlowToolHitRecord>>;
  templates(query: string | null): FlowTemplate[];
  /**
   * A flow by slug: the workspace's own, or with `installationId` that installation (only when `includeInstalled`).
   * Without `installationId` an own flow wins, else the oldest installation with that slug. Null when nothing
   * visible matches.
   */
  open(ref: {
    slug: string;
    installationId: string | null;
    includeInstalled: boolean;
  }): Promise<OpenFlow | null>;
  /**
   * What a metadata trust opt-in covers for an own flow (its live version) or an installation (the version it runs),
   * for an admin to review before opting in; null when there is no such flow or installation.
   */
  reviewTrust(ref: { slug: string } | { installationId: string }): Promise<TrustReview | null>;
  saveDraft(input: { literal: string; expectedSlug: string | null }): Promise<DraftOutcome>;
  /** " (did you mean x?)" for a slug that names no flow of this workspace, or '' when none is close. */
  suggestSlug(slug: string): Promise<string>;
  release(input: {
    slug: string;
    version: number | null;
    releaseNote: string | null;
    keepVisibility: boolean;
    /** The sha256 of the definition text the user approved; another text under the row lock releases nothing. */
    expectedLiteralSha256?: string | null;
    /** The approval spent by this release (once only, across replicas; repos.releaseFlow). */
    approvalUse?: { stateSha256: string; expiresAt: Date } | null;
  }): Promise<ReleaseOutcome>;
  /** Whether an approval (the SHA-256 of its sealed state) already released something in this workspace. */
  approvalUsed(stateSha256: string): Promise<boolean>;
}

async function bindingsOf(
  ctx: UseCaseContext,
  map: Record<string, { connectionId: string; boundFor: SlotBindingRecord['boundFor'] }>,
): Promise<SlotBindingRecord[]> {
  const ids = [...new Set(Object.values(map).map((b) => b.connectionId))];
  const rows = ids.length
    ? await repos.listConnections(ctx.db, ctx.workspaceId, { limit: ids.length, ids })
    : [];
  const byId = new Map(rows.map((c) => [c.id, c]));
  return Object.entries(map)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([slot, { connectionId, boundFor }]) => {
      const c = byId.get(connectionId);
      return {
        slot,
        boundFor,
        connection: c
          ? {
              id: c.id,
              name: c.name,
              type: c.type,
              status: c.status,
              health: c.health
                ? {
                    ok: c.health.ok,
                    checkedAt: c.health.checkedAt,
                    ...(c.health.mcp
                      ? { mcp: { tools: c.health.mcp.tools, toolCount: c.health.mcp.toolCount } }
                      : {}),
                  }
                : null,
            }
          : null,
      };
    });
}

/** A resolved flow as the use cases hand it out: its record, and reads of its definitions, bindings and readiness. */
function openFlow(ctx: UseCaseContext, resolved: ResolvedFlow): OpenFlow {
  const record = recordOf(resolved);
  const definition = (selector: FlowSelector) => definitionOf(ctx, resolved, selector);
  const definitionFor = (target: 'live' | 'draft') =>
    definition({ source: resolved.kind === 'installed' ? 'active' : target });
  const slotBindings = async (target: 'live' | 'draft') =>
    bindingsOf(
      ctx,
      resolved.kind === 'installed'
        ? Object.fromEntries(
            Object.entries(resolved.installation.slotBindings).map(([slot, connectionId]) => [
              slot,
              { connectionId, boundFor: 'installation' as const },
            ]),
          )
        : await repos.getRunBindings(ctx.db, ctx.workspaceId, resolved.row.id, target),
    );
  return {
    record,
    source:
      resolved.kind === 'installed'
        ? {
            flowId: resolved.installation.sourceFlowId,
            workspaceId: resolved.installation.sourceWorkspaceId,
          }
        : { flowId: resolved.row.id, workspaceId: resolved.row.workspaceId },
    definition,
    definitionFor,
    slotBindings,
    readiness: (target) =>
      evaluateReadiness(record, target, { definition: definitionFor, bindings: slotBindings }),
    readinessIfLive: (candidate, version) =>
      evaluateReadiness({ ...record, liveVersion: version }, 'live', {
        definition: async () => candidate,
        bindings: slotBindings,
      }),
  };
}

export function flowUseCases(ctx: UseCaseContext): FlowUseCases {
  return {
    search: (input) => searchFlows(ctx, input),
    searchTools: (input) => searchFlowTools(ctx, input),
    templates: matchingTemplates,
    async suggestSlug(slug) {
      const near = closest(slug, await repos.listFlowSlugs(ctx.db, ctx.workspaceId, 300));
      return near === undefined ? '' : ` (did you mean ${near}?)`;
    },
    async open(ref) {
      const resolved = await resolveFlow(ctx, ref);
      return resolved ? openFlow(ctx, resolved) : null;
    },
    async reviewTrust(ref) {
      const resolved =
        'slug' in ref
          ? await resolveFlow(ctx, { slug: ref.slug, installationId: null, includeInstalled: false })
          : await resolveInstallation(ctx, ref.installationId);
      return resolved ? trustReview(openFlow(ctx, resolved)) : null;
    },
    ...flowAdminUseCases(ctx),
    saveDraft(input) {
      // An invalid definition saves nothing; its event keeps the diagnostic codes, never the text.
      const what = { flowSlug: input.expectedSlug, bytes: utf8Length(input.literal) };
      return audited(
        ctx,
        'flows.draft.save',
        {
          ok: (o) =>
            o.status === 'saved'
              ? { arguments: { ...what, created: o.created } }
              : {
                  outcome: 'error',
                  arguments: { ...what, codes: [...new Set(o.diagnostics.map((d) => d.code))] },
                },
        },
        () => saveDraft(ctx, input),
      );
    },
    release(input) {
      const note = input.releaseNote === null ? {} : { releaseNote: input.releaseNote };
      return audited(
        ctx,
        'flows.release',
        {
          ok: (r) => ({
            arguments: { flowSlug: input.slug, ...note, version: r.version, created: r.created },
          }),
        },
        async () => {
          const released = await release(ctx, input);
          ctx.deps.changes?.flowsChanged?.(ctx.workspaceId);
          return released;
        },
      );
    },
    approvalUsed(stateSha256) {
      return repos.approvalUsed(ctx.db, ctx.workspaceId, stateSha256);
    },
  };
}
