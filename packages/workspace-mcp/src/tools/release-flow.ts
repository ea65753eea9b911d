import { AppError } from '@flowgate/core';
import { z } from 'zod';
import { flowSlugArg, versionArg } from '../args.js';
import { LIMITS } from '../limits.js';
import { defineTool, textArg } from '../tool.js';
import { flowDefinitionUri, flowVersionUri } from '../uris.js';

export const releaseFlowTool = defineTool({
  name: 'release_flow',
  title: 'Release flow',
  description:
    'Release a flow to the workspace live target: without version the current draft becomes the next ' +
    'immutable numbered version and goes live; with version an existing released version goes live again ' +
    '(e.g. a rollback). Optional release_note is stored with it. This changes what runs for every caller of ' +
    'the flow: call check_flow_readiness first and call release_flow only after the user approved the flow, ' +
    'version and note. A release that would make the flow public or private (:discover) is refused here: ' +
    'publishing is an operator task. Afterwards get_flow_definition with source "live" shows what runs.',
  toolsets: ['release'],
  capabilities: ['flows.manage'],
  input: z.strictObject({
    flow_slug: flowSlugArg,
    version: versionArg.optional().describe('Existing version to make live. Omit to release the draft.'),
    release_note: textArg({ trim: true, min: 1, max: LIMITS.releaseNoteMaxChars })
      .optional()
      .describe('Why this release: shown to reviewers with the version.'),
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
  // The checks above word the common refusals for agents; the release repeats them and enforces the visibility
  // under its row lock, so a draft changed since is refused (no check-then-write gap).
  const released = await flows.release({
    slug: flow.slug,
    version: args.version ?? null,
    releaseNote: args.release_note ?? null,
    keepVisibility: true,
  });
  const resourceUri = flowVersionUri(flow.slug, released.version);
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
    },
    resourceUris: [resourceUri],
  };
});
