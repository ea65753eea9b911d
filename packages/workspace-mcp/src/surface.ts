/**
 * What one MCP endpoint serves: its tools (in listing order), whether it serves resources and prompts, and what it
 * tells a client at initialize. The workspace endpoint serves the catalog; a per-flow endpoint serves that flow's
 * own MCP interfaces as direct tools plus the run tools (flow-surface.ts). Dispatch, policy and audit are the same for
 * both, so a tool is callable exactly when it is listed on either.
 */
import { utf8Bytes } from '@flowgate/core';
import { CATALOG, TOOL_NAMES, toolIconUrls } from './catalog.js';
import { guideDescriptions, guideProse, type HiddenTools, hiddenAmong } from './guidance.js';
import type { AnyToolDefinition, ToolDescriptor } from './tool.js';

export interface McpSurface {
  readonly tools: readonly AnyToolDefinition[];
  /** Names narrowing may mention (X-MCP-Tools, X-MCP-Exclude-Tools and the tools/list params). */
  readonly toolNames: readonly string[];
  find(name: string): AnyToolDefinition | undefined;
  /**
   * `{"tools":[…]}` for a visibility key (one character per tool), as text and as its UTF-8 bytes (cached together, so
   * an answer is written without encoding ≈ 25 KB again). With `iconBase` (a revision whose `Tool` has `icons`) each
   * tool carries its icon's URL under that base.
   */
  toolsList(key: string, iconBase: string | null): { json: string; bytes: Uint8Array };
  /** One listed tool as tools/list sends it (guidance applied, icon under `iconBase` when given). */
  listed(tool: AnyToolDefinition, hidden: HiddenTools, iconBase: string | null): ToolDescriptor;
  readonly servesResources: boolean;
  readonly servesPrompts: boolean;
  /** The tool names a caller with this visibility key cannot see (every catalog name counts, on any endpoint). */
  hiddenFor(key: string): HiddenTools;
  /** What initialize and server/discover say, naming only the tools visible under `key`. */
  instructions(workspaceId: string, key: string): string;
  /** A per-flow endpoint's flow: its tasks are that flow's runs only (tasks.ts). */
  readonly flowSlug: string | null;
  /**
   * This endpoint's surface built again from what runs now (a per-flow endpoint's changes with each release of its
   * flow); null once it serves nothing. Absent where the surface never changes (the workspace endpoint).
   */
  readonly reload?: () => Promise<McpSurface | null>;
}

export function surfaceOf(
  tools: readonly AnyToolDefinition[],
  options: {
    resources: boolean;
    prompts: boolean;
    instructions: (workspaceId: string) => string;
    cacheLists: boolean;
    /** More names narrowing accepts beyond the served ones (they match nothing here). */
    alsoNarrowable?: readonly string[];
    flowSlug?: string;
    reload?: () => Promise<McpSurface | null>;
  },
): McpSurface {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const served = tools.map((t) => t.name);
  const cache = new Map<string, { json: string; bytes: Uint8Array }>();
  // Catalog names count everywhere: a per-flow endpoint's guidance must not name catalog tools it lacks either.
  const known = [...new Set([...served, ...(options.alsoNarrowable ?? []), ...TOOL_NAMES])];
  const hiddenFor = (key: string): HiddenTools =>
    hiddenAmong(
      known,
      tools.filter((_, i) => key[i] === '1').map((t) => t.name),
    );
  const instructionsCache = new Map<string, string>();
  const listed = (tool: AnyToolDefinition, hidden: HiddenTools, iconBase: string | null): ToolDescriptor => {
    const descriptor = guideDescriptions(tool.descriptor, hidden);
    return iconBase === null ? descriptor : { ...descriptor, icons: toolIconUrls(tool, iconBase) };
  };
  const entry = (key: string, iconBase: string | null) => {
    // One process serves one public URL; the base is in the key anyway (tests run several gateways in one process).
    const cacheKey = iconBase === null ? key : `${key}\u0000${iconBase}`;
    const hit = cache.get(cacheKey);
    if (hit !== undefined) return hit;
    const hidden = hiddenFor(key);
    const json = JSON.stringify({
      tools: tools.filter((_, i) => key[i] === '1').map((t) => listed(t, hidden, iconBase)),
    });
    const made = { json, bytes: utf8Bytes(json) };
    listSerialisations++;
    if (options.cacheLists) {
      if (cache.size >= TOOLS_LIST_CACHE_MAX) cache.delete(cache.keys().next().value as string);
      cache.set(cacheKey, made);
    }
    return made;
  };
  return {
    tools,
    toolNames: [...served, ...(options.alsoNarrowable ?? []).filter((n) => !byName.has(n))],
    find: (name) => byName.get(name),
    toolsList: entry,
    listed,
    servesResources: options.resources,
    servesPrompts: options.prompts,
    hiddenFor,
    instructions: (workspaceId, key) => {
      const cacheKey = `${workspaceId}\u0000${key}`;
      const hit = instructionsCache.get(cacheKey);
      if (hit !== undefined) return hit;
      const text = guideProse(options.instructions(workspaceId), hiddenFor(key));
      if (instructionsCache.size >= TOOLS_LIST_CACHE_MAX)
        instructionsCache.delete(instructionsCache.keys().next().value as string);
      instructionsCache.set(cacheKey, text);
      return text;
    },
    flowSlug: options.flowSlug ?? null,
    ...(options.reload ? { reload: options.reload } : {}),
  };
}

export const TOOLS_LIST_CACHE_MAX = 128;
let listSerialisations = 0;

/** For tests: how many times a tools list was serialised (the workspace surface's cache makes repeats free). */
export function toolsListSerialisationCount(): number {
  return listSerialisations;
}

/** The workspace endpoint: the catalog, resources and prompts; lists serialised once per visible set. */
export const WORKSPACE_SURFACE: McpSurface = surfaceOf(CATALOG, {
  resources: true,
  prompts: true,
  cacheLists: true,
  instructions: (workspaceId) =>
    // Sentences stand alone: the ones naming a hidden tool are dropped (guidance.ts) and the rest still reads.
    `Flowgate workspace MCP server for workspace ${workspaceId}. Start with get_workspace_context (your capabilities, ` +
    'the visible tools and why others are hidden). Read flowgate://mcp-docs/overview for discovery, narrowing ' +
    'headers, blockers, pagination and errors. Ask the user before calling tools that change state, and never put ' +
    'secrets in arguments. When something is unclear, use send_feedback.',
});
