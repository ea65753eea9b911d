import { AppError } from '@flowgate/core';
import type { PolicyRecord } from '@flowgate/workspace';
import { type Context, Hono } from 'hono';
import type { AppEnv } from '../context.js';
import { ipAllowed } from '../middleware/ip.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import { mcpPolicyBody } from './schemas.js';
import { jsonBody } from './validation.js';
import { type AdminWorkspaces, workspaceOf } from './workspace-of.js';

function policyView(p: PolicyRecord) {
  return {
    readOnly: p.readOnly,
    disabledTools: p.disabledTools,
    allowedOrigins: p.allowedOrigins,
    allowedIps: p.allowedIps,
    rateLimitPerMinute: p.rateLimitPerMinute,
    quotas: {
      runsPerMonth: p.quotas.runsPerMonth,
      llmTokensPerMonth: p.quotas.llmTokensPerMonth,
      toolCallsPerDay: p.quotas.toolCallsPerDay,
    },
    updatedAt: p.updatedAt,
  };
}

/**
 * A workspace principal saving an allowlist without its own address would lock itself out of the workspace (the
 * operator is not subject to it on admin calls, see ipAllowlist). The address is the request's, so this is the edge's
 * check, made before the use case.
 */
function refuseSelfLockout(c: Context<AppEnv>, ips: readonly string[] | undefined): void {
  if (c.get('access').principal.kind === 'operator' || ips === undefined || ips.length === 0) return;
  const own = c.get('clientIp');
  if (own === null || !ipAllowed(own, ips)) {
    throw new AppError(
      'invalid_request',
      `allowedIps must include your current address (${own ?? 'unknown'}), or you would lock yourself out; the operator token can set any list`,
    );
  }
}

/**
 * The workspace's MCP policy (docs/admin-api.md); a change reaches the workspace cache at once. Beside it, where each
 * quota stands this period.
 */
export function policyRoutes(deps: AdminWorkspaces & { toolNames: readonly string[] }) {
  const admin = requireWorkspaceAdmin;
  return (
    new Hono<AppEnv>()
      .get('/mcp-policy', admin, async (c) => c.json(policyView(await workspaceOf(c, deps).policy.get())))
      .put('/mcp-policy', admin, jsonBody(mcpPolicyBody(deps.toolNames)), async (c) => {
        const body = c.req.valid('json');
        refuseSelfLockout(c, body.allowedIps);
        return c.json(policyView(await workspaceOf(c, deps).policy.put(body)));
      })
      // What this period used of each quota, from the counters that enforce them (not the usage rollups).
      .get('/quotas', admin, async (c) => c.json({ items: await workspaceOf(c, deps).quotas.standing() }))
  );
}
