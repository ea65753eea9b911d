/**
 * Reading flows as this workspace sees them: its own, and the public flows it installed. Installations are the only
 * way to another workspace's data, and only to the released public version an installation may run.
 */
import { type Database, repos } from '@flowgate/db';
import type { UseCaseContext } from '../scope.js';
import { metadataTrust, trustFor } from '../trust.js';
import type { FlowDefinitionRecord, FlowRecord, FlowSelector } from './records.js';

export type ResolvedFlow =
  | { kind: 'own'; row: repos.FlowRow; live: repos.FlowDefinition | null }
  | { kind: 'installed'; installation: repos.InstallationRow; definition: repos.InstalledDefinition | null };

/**
 * An own flow as models see it: authored text and tool names come from the live version when there is one, never
 * from the draft (any flows.manage key can rewrite a draft after an admin's review).
 */
export function ownRecord(row: repos.FlowRow, live: repos.FlowDefinition | null): FlowRecord {
  const model = live?.model ?? (row.draftModel as repos.FlowDefinition['model'] | null);
  const optIn = {
    by: 'owner' as const,
    optedIn: row.trustMetadata,
    reviewedSha256: row.trustedMetadataSha256,
  };
  return {
    slug: row.slug,
    installation: null,
    name: model ? (model.name ?? null) : row.name,
    description: model ? (model.description ?? null) : row.description,
    tags: model ? [...model.tags] : [...row.tags],
    hasDraft: row.draftLiteral !== null,
    draftUpdatedAt: row.draftUpdatedAt ? row.draftUpdatedAt.toISOString() : null,
    latestVersion: row.latestVersion,
    liveVersion: row.liveVersion,
    isPublic: row.isPublic,
    mcpToolNames: model ? model.interfaces.mcp.map((m) => m.toolName) : [],
    optIn,
    trust: live
      ? trustFor(optIn, live)
      : metadataTrust({ by: 'owner', optedIn: row.trustMetadata, pinMatches: false, draft: false }),
  };
}

/** An installed flow: what it runs comes from the source's public released version it resolves to. */
export function installedRecord(
  installation: repos.InstallationRow,
  definition: repos.InstalledDefinition | null,
): FlowRecord {
  const model = definition?.model;
  const optIn = {
    by: 'installer' as const,
    optedIn: installation.trustMetadata,
    reviewedSha256: installation.trustedMetadataSha256,
  };
  return {
    slug: installation.sourceFlowSlug,
    installation: {
      id: installation.id,
      sourceWorkspaceId: installation.sourceWorkspaceId,
      versionPolicy: installation.versionPolicy,
      pinnedVersion: installation.pinnedVersion,
      activeVersion: definition?.version ?? null,
      enabled: installation.enabled,
      slotBindings: { ...installation.slotBindings },
    },
    name: model?.name ?? null,
    description: model?.description ?? null,
    tags: model ? [...model.tags] : [],
    // The source's draft and version history belong to the publishing workspace.
    hasDraft: false,
    draftUpdatedAt: null,
    latestVersion: null,
    liveVersion: null,
    isPublic: true,
    mcpToolNames: model ? model.interfaces.mcp.map((m) => m.toolName) : [],
    optIn,
    trust: definition
      ? trustFor(optIn, definition)
      : metadataTrust({
          by: 'installer',
          optedIn: installation.trustMetadata,
          pinMatches: false,
          draft: false,
        }),
  };
}

async function installed(db: Database, installation: repos.InstallationRow): Promise<ResolvedFlow> {
  return {
    kind: 'installed',
    installation,
    definition: await repos.resolveInstalledDefinition(db, installation),
  };
}

/**
 * A flow by slug: the workspace's own, or with `installationId` that installation (only when `includeInstalled`).
 * Without `installationId` an own flow wins; otherwise the oldest installation with that slug, if `includeInstalled`.
 */
export async function resolveFlow(
  ctx: UseCaseContext,
  ref: { slug: string; installationId: string | null; includeInstalled: boolean },
): Promise<ResolvedFlow | null> {
  const { db, workspaceId } = ctx;
  if (ref.installationId !== null) {
    if (!ref.includeInstalled) return null;
    const inst = await repos.getInstallation(db, workspaceId, ref.installationId);
    return inst && inst.sourceFlowSlug === ref.slug ? installed(db, inst) : null;
  }
  const found = await repos.getFlowWithLive(db, workspaceId, ref.slug);
  if (found) return { kind: 'own', row: found.flow, live: found.live };
  if (!ref.includeInstalled) return null;
  const inst = await repos.findInstallationBySlug(db, workspaceId, ref.slug);
  return inst ? installed(db, inst) : null;
}

/** An installation of this workspace by id, whatever its slug; null when there is none. */
export async function resolveInstallation(
  ctx: UseCaseContext,
  installationId: string,
): Promise<ResolvedFlow | null> {
  const inst = await repos.getInstallation(ctx.db, ctx.workspaceId, installationId);
  return inst ? installed(ctx.db, inst) : null;
}

export function recordOf(resolved: ResolvedFlow): FlowRecord {
  return resolved.kind === 'own'
    ? ownRecord(resolved.row, resolved.live)
    : installedRecord(resolved.installation, resolved.definition);
}

/**
 * One definition of a resolved flow. For installations only the released version the installation may run is
 * reachable (`active`, `live` and `latest` name it); never the source's draft or other versions.
 */
export async function definitionOf(
  ctx: UseCaseContext,
  resolved: ResolvedFlow,
  selector: FlowSelector,
): Promise<FlowDefinitionRecord | null> {
  if (resolved.kind === 'installed') {
    const def = resolved.definition;
    if (!def) return null;
    if ('version' in selector ? selector.version !== def.version : selector.source === 'draft') return null;
    return {
      slug: def.flowSlug,
      installationId: resolved.installation.id,
      version: def.version,
      literal: def.literal,
      literalSha256: def.literalSha256,
      metadataSha256: def.metadataSha256,
      model: def.model,
      updatedAt: resolved.installation.updatedAt.toISOString(),
      releaseNote: null,
    };
  }
  const def =
    'source' in selector && (selector.source === 'live' || selector.source === 'active') && resolved.live
      ? resolved.live
      : await repos.definitionOf(
          ctx.db,
          resolved.row,
          'version' in selector ? { version: selector.version } : selector.source,
        );
  if (!def) return null;
  return {
    slug: def.flowSlug,
    installationId: null,
    version: def.version,
    literal: def.literal,
    literalSha256: def.literalSha256,
    metadataSha256: def.metadataSha256,
    model: def.model,
    updatedAt: def.updatedAt.toISOString(),
    releaseNote: def.releaseNote,
  };
}
