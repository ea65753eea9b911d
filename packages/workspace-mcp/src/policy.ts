/**
 * The one decision of whether a tool is available: capabilities ∩ narrowing ∩ workspace policy. tools/list
 * and tools/call both use `evaluateTool`, so a tool is callable exactly when it is listed.
 */
import type { Capability } from '@flowgate/auth';
import { type Narrowing, NO_NARROWING } from './narrowing.js';
import type { Blocker, Toolset } from './schemas.js';
import type { AnyToolDefinition } from './tool.js';

export interface WorkspacePolicy {
  /** Workspace-wide read-only mode set by an admin: hides mutating tools (send_feedback stays). */
  readonly readOnly: boolean;
  /** Per-tool disable list set by an admin. */
  readonly disabledTools: readonly string[];
  /** The workspace's daily bound on tools/call (null or absent: none); counted when a call is admitted. */
  readonly quotas?: { readonly toolCallsPerDay: number | null };
}

export const OPEN_WORKSPACE_POLICY: WorkspacePolicy = Object.freeze({ readOnly: false, disabledTools: [] });

export interface PolicyContext {
  /** Expanded capabilities (no `workspace.full`). */
  readonly capabilities: ReadonlySet<Capability>;
  readonly narrowing: Narrowing;
  readonly workspacePolicy: WorkspacePolicy;
}

export interface ToolEvaluation {
  visible: boolean;
  blockers: Blocker[];
}

type PolicyTool = Pick<
  AnyToolDefinition,
  'name' | 'toolsets' | 'capabilities' | 'mutating' | 'readOnlyExempt'
>;

function hiddenByReadOnly(tool: PolicyTool): boolean {
  return tool.mutating && !tool.readOnlyExempt;
}

/** Blockers that come from narrowing alone (headers, or tools/list params). Appends to `out`. */
export function narrowingBlockers(tool: PolicyTool, narrowing: Narrowing, out: Blocker[]): void {
  if (narrowing.readOnly && hiddenByReadOnly(tool)) out.push({ reason: 'read_only_policy' });
  const { toolsets, tools } = narrowing;
  const inToolsets = toolsets === null || tool.toolsets.some((t) => toolsets.includes(t));
  const inTools = tools?.includes(tool.name) ?? false;
  // X-MCP-Tools alone keeps only the named tools; together with X-MCP-Toolsets it adds them.
  if (toolsets !== null && !inToolsets && !inTools) {
    out.push({
      reason: 'toolset_policy',
      toolToolsets: [...tool.toolsets] as Toolset[],
      activeToolsets: [...toolsets],
    });
  }
  if (tools !== null && !inTools && !(toolsets !== null && inToolsets))
    out.push({ reason: 'include_tools_policy' });
  if (narrowing.excludeTools.includes(tool.name)) out.push({ reason: 'exclude_tools_policy' });
}

export function evaluateTool(tool: PolicyTool, ctx: PolicyContext): ToolEvaluation {
  const blockers: Blocker[] = [];
  let missing: Capability[] | null = null;
  for (const cap of tool.capabilities) {
    if (ctx.capabilities.has(cap)) continue;
    if (missing === null) missing = [];
    missing.push(cap);
  }
  if (missing)
    blockers.push({ reason: 'missing_service_account_capabilities', missingCapabilities: missing });
  narrowingBlockers(tool, ctx.narrowing, blockers);
  if (ctx.workspacePolicy.readOnly && hiddenByReadOnly(tool))
    blockers.push({ reason: 'workspace_read_only_policy' });
  if (ctx.workspacePolicy.disabledTools.includes(tool.name))
    blockers.push({ reason: 'workspace_disabled_tool' });
  return { visible: blockers.length === 0, blockers };
}

/** The listed (and therefore callable) tools of a list, in its order. */
export function visibleOf<T extends PolicyTool>(tools: readonly T[], ctx: PolicyContext): T[] {
  return tools.filter((tool) => evaluateTool(tool, ctx).visible);
}

/**
 * Visible-set keys of requests without narrowing, by the identity of what decides them: the list, the caller's
 * capabilities and the workspace policy, objects the auth and workspace caches hand out unchanged until they change.
 */
const unnarrowedKeys = new WeakMap<
  readonly PolicyTool[],
  WeakMap<ReadonlySet<Capability>, WeakMap<WorkspacePolicy, string>>
>();

/**
 * The key of a visible set: one character per tool of the list, so it works for any number of tools. `extra` is a
 * further narrowing (tools/list params) that can only hide more.
 */
export function visibilityKey(
  tools: readonly PolicyTool[],
  ctx: PolicyContext,
  extra?: Narrowing | null,
): string {
  if (extra || ctx.narrowing !== NO_NARROWING) return computeVisibilityKey(tools, ctx, extra);
  let byCapabilities = unnarrowedKeys.get(tools);
  if (!byCapabilities) {
    byCapabilities = new WeakMap();
    unnarrowedKeys.set(tools, byCapabilities);
  }
  let byPolicy = byCapabilities.get(ctx.capabilities);
  if (!byPolicy) {
    byPolicy = new WeakMap();
    byCapabilities.set(ctx.capabilities, byPolicy);
  }
  let key = byPolicy.get(ctx.workspacePolicy);
  if (key === undefined) {
    key = computeVisibilityKey(tools, ctx, null);
    byPolicy.set(ctx.workspacePolicy, key);
  }
  return key;
}

function computeVisibilityKey(
  tools: readonly PolicyTool[],
  ctx: PolicyContext,
  extra: Narrowing | null | undefined,
): string {
  let key = '';
  for (const tool of tools) {
    let visible = evaluateTool(tool, ctx).visible;
    if (visible && extra) {
      const more: Blocker[] = [];
      narrowingBlockers(tool, extra, more);
      visible = more.length === 0;
    }
    key += visible ? '1' : '0';
  }
  return key;
}

function blockerText(b: Blocker): string {
  switch (b.reason) {
    case 'missing_service_account_capabilities':
      return `the token lacks ${b.missingCapabilities.join(', ')} (grant it to the principal)`;
    case 'read_only_policy':
      return 'X-MCP-Readonly hides tools that change state';
    case 'toolset_policy':
      return `X-MCP-Toolsets (${b.activeToolsets.join(', ')}) includes none of its toolsets (${b.toolToolsets.join(', ')})`;
    case 'include_tools_policy':
      return 'X-MCP-Tools does not name it';
    case 'exclude_tools_policy':
      return 'X-MCP-Exclude-Tools names it';
    case 'workspace_read_only_policy':
      return 'the workspace is in read-only mode (set by an admin)';
    case 'workspace_disabled_tool':
      return 'a workspace admin disabled it';
  }
}

/** Human text for a blocked call's content block: what hides the tool and how to fix it. */
export function describeBlockers(toolName: string, blockers: readonly Blocker[]): string {
  const parts = blockers.map(blockerText);
  return `${toolName} is not available: ${parts.join('; ')}. See structuredContent.details.blockers; read flowgate://mcp-docs/tool-safety.`;
}
