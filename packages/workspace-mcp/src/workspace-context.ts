/** The report behind get_workspace_context and the flowgate://workspaces/{id}/mcp resource. */
import type { Capability } from '@flowgate/auth';
import { CAPABILITY_GROUPS } from './capability-groups.js';
import { SERVER_NAME, SERVER_TITLE, type ToolContext } from './context.js';
import { DOCS_META } from './docs/meta.js';
import { LIMITS } from './limits.js';
import type { Narrowing } from './narrowing.js';
import { evaluateTool } from './policy.js';
import { SERVED_PROTOCOL_VERSIONS } from './protocol.js';
import { DEFAULT_MAX_RESULT_BYTES } from './result.js';
import {
  type Blocker,
  capabilityNameSchema,
  TOOLSET_DESCRIPTIONS,
  TOOLSETS,
  type Toolset,
} from './schemas.js';

export interface WorkspaceContextReport {
  workspace: { id: string; name: string };
  principal: { kind: 'service_account' | 'user' | 'operator'; id: string; name: string | null };
  capabilities: Capability[];
  toolsets: {
    active: Toolset[];
    available: { name: Toolset; description: string; tools: string[] }[];
  };
  capabilityGroups: {
    id: string;
    title: string;
    capabilities: Capability[];
    satisfied: boolean;
    missingCapabilities: Capability[];
    use: string;
  }[];
  narrowing: {
    toolsets: Toolset[] | null;
    tools: string[] | null;
    excludeTools: string[];
    readOnly: boolean;
  };
  workspacePolicy: { readOnly: boolean; disabledTools: string[] };
  tools: { visible: string[]; hidden: { tool: string; blockers: Blocker[] }[] };
  limits: Record<string, number>;
  docs: { uri: string; title: string }[];
  protocol: { version: string; supportedVersions: string[] };
  server: { name: string; title: string; version: string };
}

const CAPABILITY_ORDER: readonly Capability[] = capabilityNameSchema.options;

/** Narrowing as plain data for reports. */
export function describeNarrowing(n: Narrowing): WorkspaceContextReport['narrowing'] {
  return {
    toolsets: n.toolsets ? [...n.toolsets] : null,
    tools: n.tools ? [...n.tools] : null,
    excludeTools: [...n.excludeTools],
    readOnly: n.readOnly,
  };
}

export async function buildWorkspaceContext(ctx: ToolContext): Promise<WorkspaceContextReport> {
  const req = ctx.request;
  const info = await ctx.workspace.info();
  const caps = req.capabilities;
  const visible: string[] = [];
  const hidden: WorkspaceContextReport['tools']['hidden'] = [];
  for (const tool of ctx.catalog) {
    const ev = evaluateTool(tool, req);
    if (ev.visible) visible.push(tool.name);
    else hidden.push({ tool: tool.name, blockers: ev.blockers });
  }
  return {
    workspace: { id: req.workspaceId, name: info.name },
    principal: { kind: req.principal.kind, id: req.principal.id, name: req.principal.name },
    capabilities: CAPABILITY_ORDER.filter((c) => caps.has(c)),
    toolsets: {
      active: req.narrowing.toolsets ? [...req.narrowing.toolsets] : [...TOOLSETS],
      available: TOOLSETS.map((name) => ({
        name,
        description: TOOLSET_DESCRIPTIONS[name],
        tools: ctx.catalog.filter((t) => t.toolsets.includes(name)).map((t) => t.name),
      })),
    },
    capabilityGroups: CAPABILITY_GROUPS.map((g) => {
      const missing = g.capabilities.filter((c) => !caps.has(c));
      return {
        id: g.id,
        title: g.title,
        capabilities: [...g.capabilities],
        satisfied: missing.length === 0,
        missingCapabilities: missing,
        use: g.use,
      };
    }),
    narrowing: describeNarrowing(req.narrowing),
    workspacePolicy: {
      readOnly: req.workspacePolicy.readOnly,
      disabledTools: [...req.workspacePolicy.disabledTools],
    },
    tools: { visible, hidden },
    limits: {
      ...LIMITS,
      maxToolResultBytes: req.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      ...(req.limits ?? {}),
    },
    docs: DOCS_META.map((d) => ({ uri: d.uri, title: d.title })),
    protocol: { version: ctx.protocolVersion, supportedVersions: [...SERVED_PROTOCOL_VERSIONS] },
    server: { name: SERVER_NAME, title: SERVER_TITLE, version: ctx.serverVersion },
  };
}
