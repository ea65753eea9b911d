import { AppError } from '@flowgate/core';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../client.js';
import { flows, flowVersions } from '../schema.js';
import { metadataSha256 } from './flow-digests.js';
import { lockFlow } from './flow-lock.js';
import { getVersionModel } from './flow-versions.js';
import type { FlowRow } from './flows.js';

/**
 * Metadata trust pins of own flows (docs/flows.md, "Metadata safety"): an opt-in is pinned to the metadata digest of
 * the version an admin reviewed. Installations pin theirs in installations.ts.
 */

/**
 * Workspace admin opt-in (docs/flows.md, "Metadata safety"): show this flow's authored text to models. The opt-in
 * covers exactly what the admin reviewed, the live version as it is now: its metadata digest is stored, and the text
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
    const flow = await lockFlow(tx, workspaceId, slug);
    if (!flow) return null;
    let digest: string | null = null;
    if (trusted) {
      const live =
        flow.liveVersion === null
          ? null
          : await getVersionModel(tx, flow.workspaceId, flow.id, flow.liveVersion);
      if (live === null) {
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
