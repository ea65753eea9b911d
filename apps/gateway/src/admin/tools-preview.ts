import { capabilitySchema, effectiveCapabilities } from '@flowgate/auth';
import { AppError } from '@flowgate/core';
import {
  CATALOG,
  evaluateTool,
  narrowingHeadersFrom,
  parseNarrowingHeaders,
  TOOL_NAMES,
} from '@flowgate/workspace-mcp';
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../context.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import { query } from './validation.js';
import { type AdminWorkspaces, workspaceOf } from './workspace-of.js';

/** One X-MCP-* header's value as a query parameter; empty is the same as absent. */
const header = z.string().max(4000).optional();
const previewQuery = z.object({
  'x-mcp-toolsets': header,
  'x-mcp-tools': header,
  'x-mcp-exclude-tools': header,
  'x-mcp-readonly': header,
});

/**
 * The tools/list preview (docs/admin-api.md): what a service account's keys would be shown with the given X-MCP-*
 * headers, through the same narrowing parser and `evaluateTool` as the MCP endpoint, against the current policy.
 */
export function toolsPreviewRoutes(deps: AdminWorkspaces) {
  return new Hono<AppEnv>().get(
    '/service-accounts/:sa/tools-preview',
    requireWorkspaceAdmin,
    query(previewQuery, () => new AppError('invalid_request', 'X-MCP-* values are at most 4,000 characters')),
    async (c) => {
      const headers: Record<string, string | undefined> = c.req.valid('query');
      const workspace = workspaceOf(c, deps);
      const [account, policy] = await Promise.all([
        workspace.serviceAccounts.get(c.req.param('sa')),
        workspace.policy.get(),
      ]);
      const narrowing = parseNarrowingHeaders(
        narrowingHeadersFrom((name) => headers[name] || undefined),
        TOOL_NAMES,
      );
      if (!narrowing.ok) throw new AppError('invalid_request', narrowing.error.message);
      const granted = account.capabilities.flatMap((cap) => {
        const parsed = capabilitySchema.safeParse(cap);
        return parsed.success ? [parsed.data] : [];
      });
      const ctx = {
        capabilities: account.status === 'active' ? effectiveCapabilities(granted) : new Set<never>(),
        narrowing: narrowing.narrowing,
        workspacePolicy: policy,
      };
      const tools = CATALOG.map((tool) => ({ name: tool.name, ...evaluateTool(tool, ctx) }));
      return c.json({
        serviceAccount: { id: account.id, name: account.name, status: account.status },
        visible: tools.filter((t) => t.visible).map((t) => t.name),
        hidden: tools.filter((t) => !t.visible).map((t) => ({ name: t.name, blockers: t.blockers })),
      });
    },
  );
}
