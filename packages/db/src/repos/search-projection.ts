import type { FlowModel } from '@flowgate/flows';
import { and, eq } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { flowTools, type ToolSummary, type VersionSummary } from '../schema.js';
import { literalSha256, metadataSha256 } from './flow-digests.js';

/**
 * What a definition projects into the rows search and listings read instead of the model: the flow's search text, one
 * `flow_tools` row per `:mcp` interface, a released version's summary and digests. Every write of a definition keeps
 * these in step in the same transaction (saveDraft, releaseFlow, importFlows).
 */

/** Search text is for matching only; longer authored text adds nothing a query could usefully hit. */
const MAX_SEARCH_TEXT = 8192;

const squash = (parts: Array<string | undefined | null>) =>
  parts
    .filter((p): p is string => typeof p === 'string' && p.length > 0)
    .join(' ')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_SEARCH_TEXT);

/** What `searchFlows` matches for a flow: slug, name, description, tags and tool names. */
export function flowSearchText(model: FlowModel): string {
  return squash([
    model.slug,
    model.name,
    model.description,
    ...model.tags,
    ...model.interfaces.mcp.map((m) => m.toolName),
  ]);
}

/** One row per `:mcp` interface; search text = tool name, slug, flow name and description, interface text, tags. */
export function toolRowsFromModel(model: FlowModel): ToolSummary[] {
  return model.interfaces.mcp.map((m) => ({
    toolName: m.toolName,
    invocation: m.invocation,
    title: m.title ?? m.label ?? null,
    description: m.description ?? null,
    flowName: model.name ?? null,
    searchText: squash([
      m.toolName,
      model.slug,
      model.name,
      model.description,
      m.title,
      m.label,
      m.description,
      ...model.tags,
    ]),
  }));
}

/** What search keeps of a released version (`flow_versions.summary`). */
export function versionSummary(model: FlowModel): VersionSummary {
  return {
    name: model.name ?? null,
    description: model.description ?? null,
    tags: [...model.tags],
    searchText: flowSearchText(model),
    tools: toolRowsFromModel(model),
  };
}

/** The columns a new version row derives from its definition. */
export function newVersionColumns(literal: string, model: FlowModel) {
  return {
    literal,
    model,
    literalSha256: literalSha256(literal),
    metadataSha256: metadataSha256(model),
    summary: versionSummary(model),
    isPublic: model.discover.public,
  };
}

export async function replaceToolRows(
  db: Executor,
  workspaceId: string,
  flow: { id: string; slug: string },
  source: 'draft' | 'live',
  model: FlowModel,
  version: number | null,
): Promise<void> {
  await db
    .delete(flowTools)
    .where(
      and(
        eq(flowTools.workspaceId, workspaceId),
        eq(flowTools.flowId, flow.id),
        eq(flowTools.source, source),
      ),
    );
  const rows = toolRowsFromModel(model);
  if (rows.length === 0) return;
  await db
    .insert(flowTools)
    .values(rows.map((r) => ({ ...r, workspaceId, flowId: flow.id, flowSlug: flow.slug, source, version })));
}
