/**
 * Finding a flow, a definition or a flow tool for an agent: the workspace's lookups, with `not_found` answers that
 * say what exists and which tool to use next.
 */
import { AppError } from '@flowgate/core';
import { closest } from '@flowgate/flows';
import type { FlowDefinitionRecord, FlowSelector, OpenFlow } from '@flowgate/workspace';
import { includeInstalled, type ToolContext } from './context.js';
import type { ResolvedFlowTool } from './flow-outputs.js';

function didYouMean(name: string, names: readonly string[]): string {
  const near = closest(name, names);
  return near === undefined ? '' : ` (did you mean ${near}?)`;
}

function notFound(message: string): AppError {
  return new AppError('not_found', message);
}

/** A visible flow or a `not_found` error naming what to do next. */
export async function requireFlow(
  ctx: ToolContext,
  slug: string,
  installationId: string | null,
): Promise<OpenFlow> {
  const flow = await ctx.workspace.flows.open({
    slug,
    installationId,
    includeInstalled: includeInstalled(ctx),
  });
  if (flow) return flow;
  if (installationId !== null && !includeInstalled(ctx)) {
    throw notFound(
      `No installation ${installationId} of flow ${slug} is visible: installed flows need the installations.read capability`,
    );
  }
  throw notFound(
    installationId === null
      ? `No flow ${slug} in this workspace${await ctx.workspace.flows.suggestSlug(slug)}; find flows with search_flows`
      : `No installation ${installationId} of flow ${slug}; find installed flows with search_flows`,
  );
}

export async function requireDefinition(
  flow: OpenFlow,
  selector: FlowSelector,
): Promise<FlowDefinitionRecord> {
  const def = await flow.definition(selector);
  if (def) return def;
  const { record } = flow;
  const installationId = record.installation?.id ?? null;
  const what = 'version' in selector ? `version ${selector.version}` : `${selector.source} definition`;
  const have: string[] = [];
  if (record.installation) {
    if (record.installation.activeVersion !== null)
      have.push(`active (version ${record.installation.activeVersion})`);
  } else {
    if (record.hasDraft) have.push('draft');
    if (record.liveVersion !== null) have.push(`live (version ${record.liveVersion})`);
    if (record.latestVersion !== null) have.push(`versions 1–${record.latestVersion}`);
  }
  throw notFound(
    `Flow ${record.slug}${installationId ? ` (installation ${installationId})` : ''} has no ${what}; available: ${have.length ? have.join(', ') : 'nothing released or drafted'}`,
  );
}

/**
 * The target a flow tool uses by default: live when a live (or an installation's active) version exists, else the
 * draft.
 */
export function defaultTarget(flow: OpenFlow): 'live' | 'draft' {
  const r = flow.record;
  if (r.installation) return 'live';
  return r.liveVersion !== null || !r.hasDraft ? 'live' : 'draft';
}

/**
 * A flow MCP interface on the selected target (default: `defaultTarget`), checked against the definition that target
 * runs now: search results are advisory, the definition decides.
 */
export async function resolveFlowTool(
  ctx: ToolContext,
  args: { slug: string; toolName: string; installationId: string | null; target: 'live' | 'draft' | null },
): Promise<ResolvedFlowTool & { open: OpenFlow }> {
  const open = await requireFlow(ctx, args.slug, args.installationId);
  const flow = open.record;
  if (flow.installation && args.target === 'draft') {
    throw new AppError(
      'invalid_request',
      'An installed flow has no draft to target: installations run released versions only; omit target',
    );
  }
  const target = args.target ?? defaultTarget(open);
  if (!flow.installation && target === 'live' && flow.liveVersion === null) {
    throw notFound(
      `Flow ${flow.slug} has no released (live) version yet; inspect the draft with target "draft", or release it with release_flow`,
    );
  }
  const definition = await requireDefinition(open, { source: flow.installation ? 'active' : target });
  const iface = definition.model.interfaces.mcp.find((m) => m.toolName === args.toolName);
  if (!iface) {
    const names = definition.model.interfaces.mcp.map((m) => m.toolName);
    throw notFound(
      `Flow ${flow.slug} (${target}) has no MCP tool ${args.toolName}${didYouMean(args.toolName, names)}; its tools: ${names.length ? names.join(', ') : 'none'}`,
    );
  }
  return {
    open,
    flow,
    definition,
    target,
    toolName: iface.toolName,
    invocation: iface.invocation,
    title: iface.title ?? null,
    description: iface.description ?? null,
  };
}
