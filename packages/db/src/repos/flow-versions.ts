import { AppError } from '@flowgate/core';
import type { FlowModel } from '@flowgate/flows';
import { and, desc, eq, lt } from 'drizzle-orm';
import type { Database, Executor } from '../client.js';
import { approvalUses, flows, flowVersions } from '../schema.js';
import { literalSha256 } from './flow-digests.js';
import { lockFlow } from './flow-lock.js';
import { type FlowLimits, MAX_VERSIONS_PER_FLOW } from './flows.js';
import { newVersionColumns, replaceToolRows } from './search-projection.js';

/**
 * A flow's immutable versions and the live pointer: listing and reading versions, and releasing (a new version from
 * the draft, or a rollback to an existing one). Scoped by the workspace id passed first.
 */

export type FlowVersionRow = typeof flowVersions.$inferSelect;

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
 * The model of one released version, read in the workspace that owns the flow (for an installation, the source
 * workspace: the run row names it).
 */
export async function getVersionModel(
  db: Executor,
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
    /**
     * The sha256 of the definition text the caller had approved (the draft's, or the version's): enforced under the row
     * lock, so a draft saved after the approval is refused with `conflict` and nothing is released.
     */
    expectedLiteralSha256?: string | undefined;
    /**
     * The approval this release spends (the SHA-256 of an accepted sealed `requestState` and when it expires): recorded
     * in this transaction, so of any number of releases presenting it, on any replica, exactly one commits; the others
     * are refused with `conflict` (issue path `requestState`) and release nothing.
     */
    approvalUse?: { stateSha256: string; expiresAt: Date } | undefined;
    limits?: FlowLimits | undefined;
  } = {},
): Promise<ReleaseResult> {
  if (options.releaseNote !== undefined && options.releaseNote.length > 2000) {
    throw new AppError('validation_failed', 'a release note is at most 2000 characters');
  }
  return db.transaction(async (tx) => {
    const flow = await lockFlow(tx, workspaceId, slug);
    if (!flow) throw new AppError('not_found', `flow ${slug} not found`);
    if (options.approvalUse) await spendApproval(tx, workspaceId, options.approvalUse);

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
    const assertLiteral = (literal: string) => {
      const expected = options.expectedLiteralSha256;
      if (expected === undefined) return;
      const actual = literalSha256(literal);
      if (actual !== expected) {
        throw new AppError(
          'conflict',
          `flow ${slug}: the definition to release changed since it was approved (approved sha256 ${expected}, ` +
            `now ${actual}); nothing was released`,
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
      assertLiteral(row.literal);
      assertVisibility(model);
      releaseNote = row.releaseNote;
    } else {
      if (flow.draftLiteral === null || flow.draftModel === null) {
        throw new AppError('invalid_request', `flow ${slug} has no draft to release`);
      }
      assertLiteral(flow.draftLiteral);
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

export const APPROVAL_USED_MESSAGE = 'this approval was already used: it releases once';

/**
 * Records an approval as spent, or refuses it when it already is. The primary key decides between concurrent
 * spenders: the second insert waits for the first's transaction and then conflicts (or, if that one rolled back,
 * succeeds), on PGlite and Postgres alike. Expired rows of the workspace go first: they can no longer be presented.
 */
async function spendApproval(
  tx: Executor,
  workspaceId: string,
  use: { stateSha256: string; expiresAt: Date },
): Promise<void> {
  await tx
    .delete(approvalUses)
    .where(and(eq(approvalUses.workspaceId, workspaceId), lt(approvalUses.expiresAt, new Date())));
  const inserted = await tx
    .insert(approvalUses)
    .values({ workspaceId, stateSha256: use.stateSha256, expiresAt: use.expiresAt })
    .onConflictDoNothing()
    .returning({ stateSha256: approvalUses.stateSha256 });
  if (inserted.length === 0)
    throw new AppError('conflict', APPROVAL_USED_MESSAGE, [
      { path: 'requestState', message: 'already used' },
    ]);
}

/** Whether an approval (the SHA-256 of its sealed state) has already released something in this workspace. */
export async function approvalUsed(db: Executor, workspaceId: string, stateSha256: string): Promise<boolean> {
  const rows = await db
    .select({ stateSha256: approvalUses.stateSha256 })
    .from(approvalUses)
    .where(and(eq(approvalUses.workspaceId, workspaceId), eq(approvalUses.stateSha256, stateSha256)))
    .limit(1);
  return rows.length > 0;
}
