import { AppError, newId } from '@flowgate/core';
import type { FlowModel } from '@flowgate/flows';
import { and, asc, count, eq, gt, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { flows, flowVersions, installations } from '../schema.js';
import { checkSlotBindings } from './bindings.js';
import { metadataSha256 } from './flow-digests.js';

/**
 * Installations of public flows (docs/flows.md, "Installations"). An installation belongs to the installing workspace;
 * its source is a flow of another workspace. The reads of the source here are the only cross-workspace reads in the
 * product, and each one requires the source flow to be public and released AND the version it runs to have been
 * released public.
 */

export type InstallationRow = typeof installations.$inferSelect;
export type VersionPolicy = 'pinned' | 'track-latest';

export const MAX_INSTALLATIONS_PER_WORKSPACE = 500;

export interface InstalledDefinition {
  installationId: string;
  sourceWorkspaceId: string;
  flowSlug: string;
  flowId: string;
  /** The version the installation runs: the pinned one, or the source's live version. */
  version: number;
  literal: string;
  literalSha256: string;
  /** `metadataSha256` of the model: what the installer's trust opt-in is compared with. */
  metadataSha256: string;
  model: FlowModel;
  /** `:requires` slots of that version with no binding in the installation: it needs setup before it can run. */
  missingSlots: string[];
}

const NOT_INSTALLABLE = (ws: string, slug: string) =>
  // One message whether the flow is missing, private or unreleased, so installers learn nothing about private flows.
  new AppError('not_found', `no public released flow ${slug} in workspace ${ws}`);

/** The source flow, only when public and released. */
async function publicSource(
  db: Database,
  sourceWorkspaceId: string,
  where: { slug: string } | { flowId: string },
) {
  const rows = await db
    .select({ id: flows.id, slug: flows.slug, liveVersion: flows.liveVersion })
    .from(flows)
    .where(
      and(
        eq(flows.workspaceId, sourceWorkspaceId),
        'slug' in where ? eq(flows.slug, where.slug) : eq(flows.id, where.flowId),
        eq(flows.isPublic, true),
        sql`${flows.liveVersion} is not null`,
      ),
    )
    .limit(1);
  const row = rows[0];
  return row && row.liveVersion !== null
    ? { id: row.id, slug: row.slug, liveVersion: row.liveVersion }
    : null;
}

/** A version of a public source, only when that version itself was released public. */
async function publicVersion(db: Database, sourceWorkspaceId: string, flowId: string, version: number) {
  if (!Number.isSafeInteger(version) || version < 1) return null;
  const rows = await db
    .select({
      version: flowVersions.version,
      literal: flowVersions.literal,
      literalSha256: flowVersions.literalSha256,
      metadataSha256: flowVersions.metadataSha256,
      model: flowVersions.model,
    })
    .from(flowVersions)
    .where(
      and(
        eq(flowVersions.workspaceId, sourceWorkspaceId),
        eq(flowVersions.flowId, flowId),
        eq(flowVersions.version, version),
        eq(flowVersions.isPublic, true),
      ),
    )
    .limit(1);
  const row = rows[0];
  return row
    ? {
        version: row.version,
        literal: row.literal,
        literalSha256: row.literalSha256,
        metadataSha256: row.metadataSha256 ?? metadataSha256(row.model as FlowModel),
        model: row.model as FlowModel,
      }
    : null;
}

function missingSlots(model: FlowModel, slotBindings: Record<string, string>): string[] {
  return model.requires.map((r) => r.slot).filter((slot) => !slotBindings[slot]);
}

/**
 * Installs a public, released flow of another workspace. It starts enabled only when the version it runs requires
 * no connection slots; otherwise it is disabled until its slots are bound (`updateInstallation`).
 */
export async function installFlow(
  db: Database,
  installerWorkspaceId: string,
  input: {
    sourceWorkspaceId: string;
    flowSlug: string;
    versionPolicy: VersionPolicy;
    pinnedVersion?: number | undefined;
  },
): Promise<InstallationRow> {
  if (input.sourceWorkspaceId === installerWorkspaceId) {
    throw new AppError(
      'invalid_request',
      "a workspace runs its own flows directly; installations are for other workspaces' public flows",
    );
  }
  if (input.versionPolicy === 'pinned' && input.pinnedVersion === undefined) {
    throw new AppError('validation_failed', 'a pinned installation needs pinnedVersion');
  }
  if (input.versionPolicy === 'track-latest' && input.pinnedVersion !== undefined) {
    throw new AppError('validation_failed', 'pinnedVersion only applies to versionPolicy "pinned"');
  }
  const source = await publicSource(db, input.sourceWorkspaceId, { slug: input.flowSlug });
  if (!source) throw NOT_INSTALLABLE(input.sourceWorkspaceId, input.flowSlug);
  const runs = await publicVersion(
    db,
    input.sourceWorkspaceId,
    source.id,
    input.pinnedVersion ?? source.liveVersion,
  );
  if (!runs) {
    throw new AppError(
      'not_found',
      `flow ${input.flowSlug} has no public version ${input.pinnedVersion ?? source.liveVersion}`,
    );
  }
  const [existing] = await db
    .select({ n: count() })
    .from(installations)
    .where(eq(installations.workspaceId, installerWorkspaceId));
  if ((existing?.n ?? 0) >= MAX_INSTALLATIONS_PER_WORKSPACE) {
    throw new AppError(
      'conflict',
      `a workspace has at most ${MAX_INSTALLATIONS_PER_WORKSPACE} installations`,
    );
  }
  const rows = await db
    .insert(installations)
    .values({
      id: newId('inst', 16),
      workspaceId: installerWorkspaceId,
      sourceWorkspaceId: input.sourceWorkspaceId,
      sourceFlowId: source.id,
      sourceFlowSlug: source.slug,
      versionPolicy: input.versionPolicy,
      pinnedVersion: input.versionPolicy === 'pinned' ? runs.version : null,
      enabled: runs.model.requires.length === 0,
      slotBindings: {},
    })
    .returning();
  return rows[0] as InstallationRow;
}

export async function getInstallation(
  db: Database,
  workspaceId: string,
  id: string,
): Promise<InstallationRow | null> {
  const rows = await db
    .select()
    .from(installations)
    .where(and(eq(installations.workspaceId, workspaceId), eq(installations.id, id)))
    .limit(1);
  return rows[0] ?? null;
}

/** The oldest installation of a flow with this slug: what a slug names when no installation id is given. */
export async function findInstallationBySlug(
  db: Database,
  workspaceId: string,
  slug: string,
): Promise<InstallationRow | null> {
  const rows = await db
    .select()
    .from(installations)
    .where(and(eq(installations.workspaceId, workspaceId), eq(installations.sourceFlowSlug, slug)))
    .orderBy(asc(installations.createdAt), asc(installations.id))
    .limit(1);
  return rows[0] ?? null;
}

export async function listInstallations(
  db: Database,
  workspaceId: string,
  page: { limit: number; afterId?: string | undefined },
): Promise<InstallationRow[]> {
  const conds = [eq(installations.workspaceId, workspaceId)];
  if (page.afterId !== undefined) conds.push(gt(installations.id, page.afterId));
  return db
    .select()
    .from(installations)
    .where(and(...conds))
    .orderBy(asc(installations.id))
    .limit(Math.min(Math.max(page.limit, 1), 200));
}

/**
 * The definition an installation runs, read across workspaces: null when the source is no longer public or
 * released, or the version it runs was not released public (the installation cannot run then).
 */
export async function resolveInstalledDefinition(
  db: Database,
  installation: InstallationRow,
): Promise<InstalledDefinition | null> {
  const source = await publicSource(db, installation.sourceWorkspaceId, {
    flowId: installation.sourceFlowId,
  });
  if (!source) return null;
  const version = installation.versionPolicy === 'pinned' ? installation.pinnedVersion : source.liveVersion;
  if (version === null) return null;
  const runs = await publicVersion(db, installation.sourceWorkspaceId, source.id, version);
  if (!runs) return null;
  return {
    installationId: installation.id,
    sourceWorkspaceId: installation.sourceWorkspaceId,
    flowSlug: source.slug,
    flowId: source.id,
    version: runs.version,
    literal: runs.literal,
    literalSha256: runs.literalSha256,
    metadataSha256: runs.metadataSha256,
    model: runs.model,
    missingSlots: missingSlots(runs.model, installation.slotBindings),
  };
}

export interface InstallationPatch {
  enabled?: boolean | undefined;
  trustMetadata?: boolean | undefined;
  /** Only the given slots change; null unbinds. Connections must belong to the installing workspace. */
  slotBindings?: Record<string, string | null> | undefined;
  versionPolicy?: VersionPolicy | undefined;
  pinnedVersion?: number | undefined;
}

/**
 * Changes an installation of `workspaceId`. Enabling (or staying enabled) needs a source that can still run and
 * every required slot bound; bad input changes nothing.
 */
export async function updateInstallation(
  db: Database,
  workspaceId: string,
  id: string,
  patch: InstallationPatch,
): Promise<InstallationRow> {
  const current = await getInstallation(db, workspaceId, id);
  if (!current) throw new AppError('not_found', 'installation not found');

  const versionPolicy = patch.versionPolicy ?? current.versionPolicy;
  let pinnedVersion = versionPolicy === 'pinned' ? (patch.pinnedVersion ?? current.pinnedVersion) : null;
  if (versionPolicy === 'track-latest' && patch.pinnedVersion !== undefined) {
    throw new AppError('validation_failed', 'pinnedVersion only applies to versionPolicy "pinned"');
  }
  if (versionPolicy === 'pinned' && pinnedVersion === null) {
    throw new AppError('validation_failed', 'a pinned installation needs pinnedVersion');
  }
  const next: InstallationRow = { ...current, versionPolicy, pinnedVersion };
  const resolved = await resolveInstalledDefinition(db, next);
  const changesSource = versionPolicy !== current.versionPolicy || pinnedVersion !== current.pinnedVersion;
  if (!resolved && (changesSource || patch.slotBindings !== undefined)) {
    throw new AppError(
      'not_found',
      pinnedVersion !== null && changesSource
        ? `flow ${current.sourceFlowSlug} has no public version ${pinnedVersion}`
        : `flow ${current.sourceFlowSlug} is no longer public and released`,
    );
  }
  if (resolved) pinnedVersion = versionPolicy === 'pinned' ? resolved.version : null;

  const slotBindings = { ...current.slotBindings };
  if (patch.slotBindings !== undefined && resolved) {
    const issues = await checkSlotBindings(
      db,
      workspaceId,
      resolved.model.requires,
      patch.slotBindings,
      'slotBindings',
    );
    if (issues.length > 0) throw new AppError('validation_failed', 'slot bindings are invalid', issues);
    for (const [slot, connectionId] of Object.entries(patch.slotBindings)) {
      if (connectionId === null) delete slotBindings[slot];
      else slotBindings[slot] = connectionId;
    }
  }

  const complete = resolved ? missingSlots(resolved.model, slotBindings).length === 0 : false;
  if (patch.enabled === true) {
    if (!resolved)
      throw new AppError(
        'validation_failed',
        `flow ${current.sourceFlowSlug} is no longer public and released`,
      );
    if (!complete) {
      const missing = missingSlots(resolved.model, slotBindings);
      throw new AppError(
        'validation_failed',
        `bind every required slot before enabling: ${missing.join(', ')}`,
        [{ path: 'slotBindings', message: `unbound: ${missing.join(', ')}` }],
      );
    }
  }
  // The installer's opt-in covers the version reviewed, the one the installation runs after this change: its
  // digest is stored, and any other version the publisher releases (or a re-pin) is untrusted until the next opt-in.
  let trustedMetadataSha256 = current.trustedMetadataSha256;
  if (patch.trustMetadata === true) {
    if (!resolved) {
      throw new AppError(
        'invalid_request',
        `flow ${current.sourceFlowSlug} has no public released version this installation runs, so none to review`,
      );
    }
    trustedMetadataSha256 = metadataSha256(resolved.model);
  } else if (patch.trustMetadata === false) {
    trustedMetadataSha256 = null;
  }
  // Unbinding a required slot of an enabled installation turns it off rather than leaving it half-configured. A
  // source that went private leaves the flag alone: the broker refuses to run it either way.
  const enabled = (patch.enabled ?? current.enabled) && (resolved === null || complete);
  const rows = await db
    .update(installations)
    .set({
      versionPolicy,
      pinnedVersion,
      slotBindings,
      enabled,
      trustMetadata: patch.trustMetadata ?? current.trustMetadata,
      trustedMetadataSha256,
      updatedAt: new Date(),
    })
    .where(and(eq(installations.workspaceId, workspaceId), eq(installations.id, id)))
    .returning();
  return rows[0] as InstallationRow;
}
