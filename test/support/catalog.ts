import { GRANTED_BY_FULL } from '@flowgate/auth';
import { CATALOG, TOOL_NAMES, type Toolset } from '@flowgate/workspace-mcp';

/**
 * Expected tool sets computed from the catalog's metadata with the narrowing rules of docs/mcp-surface.md,
 * independently of the policy code, so these tests keep holding as tools join the catalog.
 */

/** Every capability a tool can be gated by (all but `workspace.full`, which stands for them). */
export const ALL_CAPABILITIES = GRANTED_BY_FULL;

export const ALL_TOOLS: readonly string[] = TOOL_NAMES;

/** Catalog order, restricted to `names`. */
export function inCatalogOrder(names: Iterable<string>): string[] {
  const set = new Set(names);
  return ALL_TOOLS.filter((n) => set.has(n));
}

/** Tools in any of these toolsets. */
export function inToolsets(...toolsets: Toolset[]): string[] {
  return CATALOG.filter((t) => t.toolsets.some((ts) => toolsets.includes(ts))).map((t) => t.name);
}

/** Tools whose capability gate these capabilities satisfy. */
export function allowedBy(capabilities: readonly string[]): string[] {
  return CATALOG.filter((t) => t.capabilities.every((c) => capabilities.includes(c))).map((t) => t.name);
}

/** The capabilities a tool needs that are not in `capabilities`. */
export function missingFor(tool: string, capabilities: readonly string[]): string[] {
  const def = CATALOG.find((t) => t.name === tool);
  if (!def) throw new Error(`not in the catalog: ${tool}`);
  return def.capabilities.filter((c) => !capabilities.includes(c));
}

/** What X-MCP-Readonly keeps: tools that change nothing, plus send_feedback. */
export function readOnlyKept(): string[] {
  return CATALOG.filter((t) => !t.mutating || t.readOnlyExempt).map((t) => t.name);
}

export function without(names: readonly string[], ...drop: string[]): string[] {
  return names.filter((n) => !drop.includes(n));
}
