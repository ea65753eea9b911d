import { AppError } from '@flowgate/core';
import type { releaseFlowTool } from '../catalog.js';
import { flowDefinitionUri, flowVersionUri } from '../flow-views.js';
import type { ToolHandler } from './types.js';

export const releaseFlow: ToolHandler<typeof releaseFlowTool> = async (args, ctx) => {
  const services = ctx.request.services;
  // Releases act on this workspace's own flows only; an installed flow is released by its publisher.
  const flow = await services.getFlow({
    slug: args.flow_slug,
    installationId: null,
    includeInstalled: false,
  });
  if (!flow)
    throw new AppError(
      'not_found',
      `No flow ${args.flow_slug} in this workspace; find flows with search_flows`,
    );
  if (args.version === undefined && !flow.hasDraft) {
    throw new AppError(
      'invalid_request',
      `Flow ${flow.slug} has no draft to release; save one with create_flow_draft, or pass an existing version`,
    );
  }
  const available = flow.latestVersion === null ? 'none' : `1–${flow.latestVersion}`;
  const candidate = await services.getFlowDefinition({
    slug: flow.slug,
    installationId: null,
    includeInstalled: false,
    selector: args.version === undefined ? { source: 'draft' } : { version: args.version },
  });
  if (!candidate) {
    throw new AppError(
      'not_found',
      `Flow ${flow.slug} has no version ${args.version}; released versions: ${available}`,
    );
  }
  // Publishing (or withdrawing) a flow for other workspaces is a marketplace decision, outside MCP (seed 003/004).
  if (candidate.model.discover.public !== flow.isPublic) {
    const what = candidate.model.discover.public ? 'public (installable by other workspaces)' : 'private';
    throw new AppError(
      'invalid_request',
      `Releasing ${args.version === undefined ? 'the draft' : `version ${args.version}`} would make flow ${flow.slug} ${what}; ` +
        'changing :discover visibility is done by an operator with `flowgate flows release`, not through MCP',
    );
  }
  const released = await services.releaseFlow({
    slug: flow.slug,
    version: args.version ?? null,
    releaseNote: args.release_note ?? null,
    // The check above is advisory; the release re-checks this value under its lock (no check-then-write gap).
    expectedPublic: flow.isPublic,
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
};
