/**
 * The tool catalog: the single source of truth for every tool the workspace MCP endpoint lists, the server card
 * publishes and the docs tabulate. Each tool is one module in tools/ (spec and handler together); this is the list
 * of them, in listing order. Only tools whose behaviour exists are listed.
 */
import { type HiddenTools, hiddenAmong } from './guidance.js';
import { type Icon, toolsetIcons, toolsetIconUrl } from './icons.js';
import { evaluateTool, type PolicyContext, visibleOf } from './policy.js';
import type { Toolset } from './schemas.js';
import { TOOLSETS } from './schemas.js';
import type { AnyToolDefinition } from './tool.js';
import { callFlowToolTool } from './tools/call-flow-tool.js';
import { checkConnectionsTool } from './tools/check-connections.js';
import { checkFlowReadinessTool } from './tools/check-flow-readiness.js';
import { createFlowDraftTool } from './tools/create-flow-draft.js';
import { getFlowDefinitionTool } from './tools/get-flow-definition.js';
import { getRunStatusTool } from './tools/get-run-status.js';
import { getStepReferenceTool } from './tools/get-step-reference.js';
import { getWorkspaceContextTool } from './tools/get-workspace-context.js';
import { inspectFlowToolTool } from './tools/inspect-flow-tool.js';
import { inspectRunStepTool } from './tools/inspect-run-step.js';
import { listConnectionsTool } from './tools/list-connections.js';
import { releaseFlowTool } from './tools/release-flow.js';
import { searchFlowToolsTool } from './tools/search-flow-tools.js';
import { searchFlowsTool } from './tools/search-flows.js';
import { sendFeedbackTool } from './tools/send-feedback.js';
import { validateFlowDefinitionTool } from './tools/validate-flow-definition.js';

/** Listing order of tools/list and the server card. */
export const CATALOG = Object.freeze([
  getWorkspaceContextTool,
  searchFlowsTool,
  searchFlowToolsTool,
  listConnectionsTool,
  checkConnectionsTool,
  inspectFlowToolTool,
  callFlowToolTool,
  getRunStatusTool,
  inspectRunStepTool,
  checkFlowReadinessTool,
  getStepReferenceTool,
  sendFeedbackTool,
  validateFlowDefinitionTool,
  getFlowDefinitionTool,
  createFlowDraftTool,
  releaseFlowTool,
] as const);

export type CatalogTool = (typeof CATALOG)[number];

/** The toolset whose icon a tool shows: its first. */
function iconToolset(tool: AnyToolDefinition): Toolset {
  return tool.toolsets[0] ?? 'context';
}

/**
 * A tool's icon: its first toolset's (icons.ts). Defined here, once, for everything that shows catalog content
 * (prompts and resources take the icon of the first tool they use), as a data URI.
 */
export function toolIcons(tool: AnyToolDefinition): Icon[] {
  return toolsetIcons(iconToolset(tool));
}

/**
 * The same icon as tools/list and the server card carry it: the gateway's URL of that SVG under `base` (the
 * deployment's public URL), the shortest form, so 16 of them fit the tools/list token budget.
 */
export function toolIconUrls(tool: AnyToolDefinition, base: string): Icon[] {
  return toolsetIconUrl(base, iconToolset(tool));
}

/** The icon of the first catalog tool among `names`; the context icon when none is named (docs, overview). */
export function iconsForTools(names: readonly string[]): Icon[] {
  const tool = names.map((n) => BY_NAME.get(n)).find((t) => t !== undefined);
  return tool ? toolIcons(tool) : toolsetIcons('context');
}
export type ToolName = CatalogTool['name'];

/** The catalog as a plain list (what handlers see through their context). */
export const CATALOG_TOOLS: readonly AnyToolDefinition[] = CATALOG;

export const TOOL_NAMES: readonly ToolName[] = Object.freeze(CATALOG.map((t) => t.name));

const BY_NAME: ReadonlyMap<string, CatalogTool> = new Map(CATALOG.map((t) => [t.name, t]));

export function getTool(name: string): CatalogTool | undefined {
  return BY_NAME.get(name);
}

export function isToolName(name: string): name is ToolName {
  return BY_NAME.has(name);
}

/** Tools of a list in each toolset (toolsets with no tool yet have an empty list). */
export function toolsByToolset(
  tools: readonly AnyToolDefinition[],
): Readonly<Record<Toolset, readonly string[]>> {
  return Object.freeze(
    Object.fromEntries(
      TOOLSETS.map((ts) => [ts, tools.filter((t) => t.toolsets.includes(ts)).map((t) => t.name)]),
    ),
  ) as Record<Toolset, string[]>;
}

export const TOOLS_BY_TOOLSET = toolsByToolset(CATALOG_TOOLS) as Readonly<
  Record<Toolset, readonly ToolName[]>
>;

/**
 * True when neither the workspace policy (disabledTools, read-only) nor narrowing hides any of `names`: gates the
 * resources and prompts that expose those tools' content. Capabilities are not checked here — each resource and
 * prompt has its own capability gate.
 */
export function toolsAllowedByPolicy(names: readonly string[], ctx: PolicyContext): boolean {
  for (const name of names) {
    const tool = CATALOG.find((t) => t.name === name);
    if (!tool) return false;
    if (!evaluateTool(tool, { ...ctx, capabilities: new Set(tool.capabilities) }).visible) return false;
  }
  return true;
}

/** The listed (and therefore callable) catalog tools for a caller, in catalog order. */
export function visibleTools(ctx: PolicyContext): CatalogTool[] {
  return visibleOf(CATALOG, ctx);
}

/** Catalog tools the caller cannot see: what its instructions, prompts and docs must not name (guidance.ts). */
export function hiddenCatalogTools(ctx: PolicyContext): HiddenTools {
  return hiddenAmong(
    TOOL_NAMES,
    visibleTools(ctx).map((t) => t.name),
  );
}
