import { AppError, isAppError } from '@flowgate/core';
import type { FlowDefinitionRecord, OpenFlow } from '@flowgate/workspace';
import { z } from 'zod';
import {
  type ApprovalGate,
  type ApprovalRecord,
  type ApprovalSubject,
  approvalUsedFailure,
} from '../approval.js';
import { flowSlugArg, versionArg } from '../args.js';
import { LIMITS } from '../limits.js';
import { readinessOutput } from '../readiness-output.js';
import { defineTool, ToolFailure, textArg } from '../tool.js';
import { flowDefinitionUri, flowVersionUri } from '../uris.js';

export const releaseFlowTool = defineTool({
  name: 'release_flow',
  title: 'Release flow',
  description:
    'Make a flow version live for every caller: without version the draft becomes the next immutable ' +
    'version; with version an existing one goes live again (a rollback). Only after the user approved flow, version and ' +
    'note; call check_flow_readiness first. A release changing :discover is refused (publishing is an operator ' +
    'task). Readiness problems in the answer are warnings.',
  toolsets: ['release'],
  capabilities: ['flows.manage'],
  input: z.strictObject({
    flow_slug: flowSlugArg,
    version: versionArg.optional().describe('Existing version to make live; omit to release the draft.'),
    release_note: textArg({ trim: true, min: 1, max: LIMITS.releaseNoteMaxChars })
      .optional()
      .describe('Why this release; shown with the version.'),
  }),
  output: z.strictObject({
    flowSlug: z.string(),
    version: z.number().int(),
    /** False when an existing version went live: a rollback, or a draft identical to the latest version. */
    createdVersion: z.boolean(),
    previousLiveVersion: z.number().int().nullable(),
    liveVersion: z.number().int(),
    releasedAt: z.string(),
    releaseNote: z.string().nullable(),
    resourceUri: z.string(),
    liveDefinitionUri: z.string(),
    /**
     * Readiness of the live target after the release (the released version with the live bindings). Problems do not
     * stop a release: a rollback must go through in an incident, and slots are often bound after a first release.
     */
    readiness: z.strictObject({
      ready: z.boolean(),
      /** The failed and doubtful checks as `check status: message` (strings keep tools/list within its budget). */
      problems: z.array(z.string()),
      nextSteps: z.array(z.string()),
    }),
  }),
  // Replaces what runs live: hosts should confirm. Releasing the draft twice makes two versions.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
}).handle(async (args, ctx) => {
  const flows = ctx.workspace.flows;
  // Releases act on this workspace's own flows only; an installed flow is released by its publisher.
  const open = await flows.open({ slug: args.flow_slug, installationId: null, includeInstalled: false });
  if (!open) {
    throw new AppError(
      'not_found',
      `No flow ${args.flow_slug} in this workspace; find flows with search_flows`,
    );
  }
  const flow = open.record;
  if (args.version === undefined && !flow.hasDraft) {
    throw new AppError(
      'invalid_request',
      `Flow ${flow.slug} has no draft to release; save one with create_flow_draft, or pass an existing version`,
    );
  }
  const candidate = await open.definition(
    args.version === undefined ? { source: 'draft' } : { version: args.version },
  );
  if (!candidate) {
    const available = flow.latestVersion === null ? 'none' : `1–${flow.latestVersion}`;
    throw new AppError(
      'not_found',
      `Flow ${flow.slug} has no version ${args.version}; released versions: ${available}`,
    );
  }
  // Publishing (or withdrawing) a flow for other workspaces is an operator's decision, never an agent's.
  if (candidate.model.discover.public !== flow.isPublic) {
    const what = candidate.model.discover.public ? 'public (installable by other workspaces)' : 'private';
    throw new AppError(
      'invalid_request',
      `Releasing ${args.version === undefined ? 'the draft' : `version ${args.version}`} would make flow ${flow.slug} ${what}; ` +
        'changing :discover visibility is done by an operator with `flowgate flows release`, not through MCP',
    );
  }
  // A client that can show a form is asked here, by the server itself; others rely on their host (annotations).
  const approved = ctx.approval?.canElicit
    ? await confirmOnce(ctx.approval, (state) => flows.approvalUsed(state), open, candidate, args)
    : null;
  // The checks above word the common refusals for agents; the release repeats them and enforces the visibility
  // (and an approved text) under its row lock, so a draft changed since is refused (no check-then-write gap).
  let released: Awaited<ReturnType<typeof flows.release>>;
  try {
    released = await flows.release({
      slug: flow.slug,
      version: args.version ?? null,
      releaseNote: args.release_note ?? null,
      keepVisibility: true,
      expectedLiteralSha256: approved?.textSha256 ?? null,
      // Spent in the release's transaction: of two retries with one accepted state, one releases (any replica).
      approvalUse: approved ? ctx.approval?.spend : null,
    });
  } catch (error) {
    if (isAppError(error) && error.code === 'conflict' && error.issues?.[0]?.path === 'requestState') {
      ctx.approval?.revoke();
      throw approvalUsedFailure('release_flow');
    }
    throw error;
  }
  const resourceUri = flowVersionUri(flow.slug, released.version);
  const after = await flows.open({ slug: flow.slug, installationId: null, includeInstalled: false });
  const readiness = after ? readinessOutput(await after.readiness('live')) : null;
  return {
    output: {
      flowSlug: flow.slug,
      version: released.version,
      createdVersion: released.created,
      previousLiveVersion: released.previousLiveVersion,
      liveVersion: released.version,
      releasedAt: released.releasedAt,
      releaseNote: released.releaseNote,
      resourceUri,
      liveDefinitionUri: flowDefinitionUri(flow.slug, 'live'),
      readiness: readiness
        ? {
            ready: readiness.ready,
            problems: readiness.checks
              .filter((c) => c.status === 'fail' || c.status === 'warn')
              .map((c) => `${c.check} ${c.status}: ${c.message}`),
            nextSteps: readiness.nextSteps,
          }
        : // The flow was released a moment ago; only a concurrent delete would make it vanish.
          { ready: false, problems: [], nextSteps: [] },
    },
    resourceUris: [resourceUri],
  };
});

/**
 * The approval of this call, checked against what stands now. A state refused as stale because a release happened
 * since is, when that release was its own, refused as used: the clearer answer to a replayed accept.
 */
async function confirmOnce(
  gate: ApprovalGate,
  used: (stateSha256: string) => Promise<boolean>,
  open: OpenFlow,
  candidate: FlowDefinitionRecord,
  args: { flow_slug: string; version?: number | undefined; release_note?: string | undefined },
): Promise<ApprovalRecord | null> {
  const subject = await approvalSubject(open, candidate, args);
  try {
    return gate.confirm(subject);
  } catch (error) {
    const presented = gate.presentedState();
    if (
      error instanceof ToolFailure &&
      error.code === 'approval_stale' &&
      presented !== null &&
      (await used(presented))
    )
      throw approvalUsedFailure('release_flow');
    throw error;
  }
}

/**
 * What the approval form shows: the flow, the version it becomes (or the version pointed to again), the definition
 * text's sha256 and the readiness the live target will have, all computed without changing anything.
 */
async function approvalSubject(
  open: OpenFlow,
  candidate: FlowDefinitionRecord,
  args: { flow_slug: string; version?: number | undefined; release_note?: string | undefined },
): Promise<ApprovalSubject> {
  const flow = open.record;
  let version: number;
  let what: string;
  if (candidate.version !== null) {
    version = candidate.version;
    what = `version ${version} (an existing version) goes live again`;
  } else {
    // A draft identical to the latest version reuses it; otherwise it becomes the next version.
    const latest =
      flow.latestVersion === null ? null : await open.definition({ version: flow.latestVersion });
    const reused = latest !== null && latest.literalSha256 === candidate.literalSha256;
    version = reused ? (flow.latestVersion as number) : (flow.latestVersion ?? 0) + 1;
    what = reused
      ? `the draft is identical to version ${version}, which goes live`
      : `the draft becomes version ${version} and goes live`;
  }
  const readiness = await open.readinessIfLive(candidate, version);
  const problems = readiness.checks.filter((c) => c.status === 'fail' || c.status === 'warn').length;
  const live = flow.liveVersion === null ? 'no version is live yet' : `live now: version ${flow.liveVersion}`;
  const lines = [
    `Release flow ${flow.slug}: ${what} for every caller (${live}).`,
    `Definition sha256: ${candidate.literalSha256}`,
    `Readiness after release: ${readiness.ready ? 'ready' : 'NOT ready'}, ${problems} problem(s).`,
  ];
  if (args.release_note !== undefined) lines.push(`Release note: ${args.release_note}`);
  return {
    tool: 'release_flow',
    args,
    textSha256: candidate.literalSha256,
    standing: `live ${flow.liveVersion ?? 'none'}, latest ${flow.latestVersion ?? 'none'}`,
    message: lines.join('\n'),
    title: `Release ${flow.slug} as version ${version}`,
  };
}
