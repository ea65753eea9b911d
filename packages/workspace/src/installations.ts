/**
 * Installations of other workspaces' public flows into this one, for its admins: install, change (enable, trust,
 * bind, version policy) and list. What an installation runs is resolved from its source's public released versions.
 */
import { repos } from '@flowgate/db';
import { audited } from './audit.js';
import type { Page } from './flows/records.js';
import type { UseCaseContext } from './scope.js';

export type VersionPolicy = 'pinned' | 'track-latest';

/** What an installation would run now: the version and the slots it still needs bound (unavailable: none runs). */
export type InstallationResolution =
  | { available: true; version: number; missingSlots: string[] }
  | { available: false; version: null; missingSlots: string[] };

export interface InstallationRecord {
  id: string;
  sourceWorkspaceId: string;
  flowSlug: string;
  versionPolicy: VersionPolicy;
  pinnedVersion: number | null;
  enabled: boolean;
  trustMetadata: boolean;
  /** `:requires` slot → a connection id of this workspace. */
  slotBindings: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

export interface NewInstallation {
  sourceWorkspaceId: string;
  flowSlug: string;
  versionPolicy: VersionPolicy;
  pinnedVersion?: number | undefined;
}

export interface InstallationChange {
  enabled?: boolean | undefined;
  trustMetadata?: boolean | undefined;
  /** Only the given slots change; null unbinds. */
  slotBindings?: Record<string, string | null> | undefined;
  versionPolicy?: VersionPolicy | undefined;
  pinnedVersion?: number | undefined;
}

export interface InstallationUseCases {
  install(input: NewInstallation): Promise<InstallationRecord & { resolution: InstallationResolution }>;
  update(
    id: string,
    change: InstallationChange,
  ): Promise<InstallationRecord & { resolution: InstallationResolution }>;
  /** In id order, so a cursor resumes exactly. */
  list(input: { limit: number; after: string | null }): Promise<Page<InstallationRecord>>;
}

function installationRecord(row: repos.InstallationRow): InstallationRecord {
  return {
    id: row.id,
    sourceWorkspaceId: row.sourceWorkspaceId,
    flowSlug: row.sourceFlowSlug,
    versionPolicy: row.versionPolicy,
    pinnedVersion: row.pinnedVersion,
    enabled: row.enabled,
    trustMetadata: row.trustMetadata,
    slotBindings: row.slotBindings,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function installationUseCases(ctx: UseCaseContext): InstallationUseCases {
  const { db, workspaceId: ws } = ctx;

  async function resolved(row: repos.InstallationRow) {
    const definition = await repos.resolveInstalledDefinition(db, row);
    const resolution: InstallationResolution = definition
      ? { available: true, version: definition.version, missingSlots: definition.missingSlots }
      : { available: false, version: null, missingSlots: [] };
    return { ...installationRecord(row), resolution };
  }

  // Which version an installation runs decides what its per-flow endpoint lists.
  const changed = <T>(value: T): T => {
    ctx.deps.changes?.flowsChanged?.(ws);
    return value;
  };

  return {
    install(input) {
      return audited(
        ctx,
        'installations.create',
        { ok: (r) => ({ arguments: { ...input, installationId: r.id } }) },
        async () => changed(await resolved(await repos.installFlow(db, ws, input))),
      );
    },
    update(id, change) {
      return audited(
        ctx,
        'installations.update',
        { ok: () => ({ arguments: { installationId: id, ...change } }) },
        async () => changed(await resolved(await repos.updateInstallation(db, ws, id, change))),
      );
    },
    async list({ limit, after }) {
      const rows = await repos.listInstallations(db, ws, { limit: limit + 1, afterId: after ?? undefined });
      const items = rows.slice(0, limit).map(installationRecord);
      return { items, nextAfter: rows.length > limit ? (items.at(-1)?.id ?? null) : null };
    },
  };
}
