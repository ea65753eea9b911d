/**
 * Writing flows: drafts and releases. The MCP tools and the admin API call these same use cases, so a definition is
 * validated the same way whoever saves it, and a release follows the same rules whoever makes it.
 */
import { AppError } from '@flowgate/core';
import { repos } from '@flowgate/db';
import {
  type Diagnostic,
  isKeyword,
  mapGet,
  readEdn,
  type ValidationSummary,
  validateFlow,
} from '@flowgate/flows';
import type { UseCaseContext } from '../scope.js';
import { ownRecord } from './lookup.js';
import type { FlowRecord } from './records.js';

export type DraftOutcome =
  | {
      status: 'saved';
      created: boolean;
      flow: FlowRecord;
      diagnostics: Diagnostic[];
      summary: ValidationSummary;
    }
  /** Nothing saved: the definition has error diagnostics (`summary` counts them all, past the returned ones). */
  | { status: 'invalid'; diagnostics: Diagnostic[]; summary: ValidationSummary }
  /**
   * Nothing saved: the definition is valid but names another flow than the caller meant; `diagnostics` starts with a
   * positioned `invalid_slug` error.
   */
  | { status: 'slug_mismatch'; definitionSlug: string; expectedSlug: string; diagnostics: Diagnostic[] };

/** Where `:slug` sits in the text, for a positioned slug-mismatch diagnostic. */
function slugDiagnostic(text: string, definitionSlug: string, expectedSlug: string): Diagnostic {
  const read = readEdn(text);
  const node = read.ok && read.value.kind === 'map' ? mapGet(read.value, 'slug') : undefined;
  const loc = node && isKeyword(node) ? node.loc : undefined;
  return {
    severity: 'error',
    code: 'invalid_slug',
    message: `the definition's :slug :${definitionSlug} does not match the flow it is saved as (${expectedSlug})`,
    path: ':slug',
    line: loc?.line ?? null,
    column: loc?.column ?? null,
    hint: `save it as flow ${definitionSlug}, or change :slug to :${expectedSlug}`,
  };
}

/**
 * Validates a definition and, only when it has no error, creates or replaces the draft of the flow its `:slug`
 * names. With `expectedSlug`, a definition naming another flow is refused (a guard against overwriting the wrong
 * flow). Live versions never change here.
 */
export async function saveDraft(
  ctx: UseCaseContext,
  input: { literal: string; expectedSlug: string | null },
): Promise<DraftOutcome> {
  const result = validateFlow(input.literal);
  if (!result.valid || !result.model)
    return { status: 'invalid', diagnostics: result.diagnostics, summary: result.summary };
  const model = result.model;
  if (input.expectedSlug !== null && model.slug !== input.expectedSlug) {
    return {
      status: 'slug_mismatch',
      definitionSlug: model.slug,
      expectedSlug: input.expectedSlug,
      diagnostics: [slugDiagnostic(input.literal, model.slug, input.expectedSlug), ...result.diagnostics],
    };
  }
  const saved = await repos.saveDraft(ctx.db, ctx.workspaceId, { literal: input.literal, model });
  const live = saved.flow.liveVersion !== null ? await repos.definitionOf(ctx.db, saved.flow, 'live') : null;
  return {
    status: 'saved',
    created: saved.created,
    flow: ownRecord(saved.flow, live),
    diagnostics: result.diagnostics,
    summary: result.summary,
  };
}

export interface ReleaseOutcome {
  flowSlug: string;
  version: number;
  /** False when an existing version went live: a rollback, or a draft identical to the latest version. */
  created: boolean;
  previousLiveVersion: number | null;
  releasedAt: string;
  /**
   * The note the released version holds: for an unchanged draft, a note given is stored on the reused version; a
   * rollback keeps the version's own note.
   */
  releaseNote: string | null;
}

/**
 * Releases an own flow: without `version` the draft becomes the next immutable version (or the latest one, when
 * identical) and goes live; with `version` that existing version goes live (a rollback). With `keepVisibility`, a
 * release that would make the flow public or private (`:discover`) is refused — publishing is decided by a workspace
 * admin or the operator — and the visibility checked is enforced again under the release's row lock.
 */
export async function release(
  ctx: UseCaseContext,
  input: {
    slug: string;
    version: number | null;
    releaseNote: string | null;
    keepVisibility: boolean;
    /** The approved definition text's sha256: a different text under the release's row lock releases nothing. */
    expectedLiteralSha256?: string | null;
    /** The approval this release spends: recorded under the release's transaction, once (repos.releaseFlow). */
    approvalUse?: { stateSha256: string; expiresAt: Date } | null;
  },
): Promise<ReleaseOutcome> {
  const flow = await repos.getFlow(ctx.db, ctx.workspaceId, input.slug);
  if (!flow) throw new AppError('not_found', `No flow ${input.slug} in this workspace`);
  let expectedPublic: boolean | undefined;
  if (input.keepVisibility) {
    if (input.version === null && flow.draftLiteral === null) {
      throw new AppError('invalid_request', `Flow ${flow.slug} has no draft to release`);
    }
    const candidate = await repos.definitionOf(
      ctx.db,
      flow,
      input.version === null ? 'draft' : { version: input.version },
    );
    if (!candidate) {
      const available = flow.latestVersion === null ? 'none' : `1–${flow.latestVersion}`;
      throw new AppError(
        'not_found',
        `Flow ${flow.slug} has no version ${input.version}; released versions: ${available}`,
      );
    }
    if (candidate.model.discover.public !== flow.isPublic) {
      const what = candidate.model.discover.public ? 'public (installable by other workspaces)' : 'private';
      const which = input.version === null ? 'the draft' : `version ${input.version}`;
      throw new AppError(
        'invalid_request',
        `Releasing ${which} would make flow ${flow.slug} ${what}; changing :discover visibility is done by a ` +
          'workspace admin or the operator (`flowgate flows release`)',
      );
    }
    expectedPublic = flow.isPublic;
  }
  const released = await repos.releaseFlow(ctx.db, ctx.workspaceId, flow.slug, {
    version: input.version ?? undefined,
    releaseNote: input.releaseNote ?? undefined,
    expectedPublic,
    expectedLiteralSha256: input.expectedLiteralSha256 ?? undefined,
    approvalUse: input.approvalUse ?? undefined,
  });
  return {
    flowSlug: released.flowSlug,
    version: released.version,
    created: released.created,
    previousLiveVersion: released.previousLiveVersion,
    releasedAt: ctx.now().toISOString(),
    releaseNote: released.releaseNote,
  };
}
