/** The report behind get_workspace_context and the flowgate://workspaces/{id}/mcp resource. */
import type { Capability } from '@flowgate/auth';
import type { z } from 'zod';
import { CAPABILITY_GROUPS, CATALOG, type getWorkspaceContextTool, TOOLS_BY_TOOLSET } from './catalog.js';
import { SERVER_NAME, SERVER_TITLE, type ToolContext } from './context.js';
import { DOCS_META } from './docs/meta.js';
import { LIMITS } from './limits.js';
import { describeNarrowing } from './narrowing.js';
import { evaluateTool } from './policy.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from './protocol.js';
import { capabilityNameSchema, TOOLSET_DESCRIPTIONS, TOOLSETS } from './schemas.js';

export type WorkspaceContextReport = z.output<(typeof getWorkspaceContextTool)['output']>;

const CAPABILITY_ORDER: readonly Capability[] = capabilityNameSchema.options;

export async function buildWorkspaceContext(ctx: ToolContext): Promise<WorkspaceContextReport> {
  const req = ctx.request;
  const info = await req.services.workspaceInfo();
  const caps = req.capabilities;
  const visible: string[] = [];
  const hidden: WorkspaceContextReport['tools']['hidden'] = [];
  for (const tool of CATALOG) {
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
        tools: [...TOOLS_BY_TOOLSET[name]],
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
    limits: { ...LIMITS, ...(req.limits ?? {}) },
    docs: DOCS_META.map((d) => ({ uri: d.uri, title: d.title })),
    protocol: { version: ctx.protocolVersion, supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS] },
    server: { name: SERVER_NAME, title: SERVER_TITLE, version: ctx.serverVersion },
  };
}
