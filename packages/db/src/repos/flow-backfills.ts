import type { FlowModel } from '@flowgate/flows';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { flowVersions } from '../schema.js';
import { metadataSha256 } from './flow-digests.js';
import { versionSummary } from './search-projection.js';

/**
 * Fills columns that rows written by older versions lack. Each is idempotent; `runBackfills` (maintenance.ts) runs
 * them once per database and records that it did.
 */

/**
 * Fills `summary` for versions released before it existed; run once per database by `runBackfills`. Idempotent,
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

/**
 * Fills `flow_versions.metadata_sha256` for versions released before it existed, then moves opt-ins pinned to a
 * literal digest (before migration 0012) to the metadata digest of the version they pinned, so no review is lost.
 * Run once per database by `runBackfills`; idempotent (a metadata digest never equals a literal digest, so a moved pin is not moved again).
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
