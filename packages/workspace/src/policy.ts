/** The workspace's MCP policy: what its callers may see and do, and where they may call from. */
import { QUOTA_NAMES, type QuotaLimits, type QuotaName } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { audited } from './audit.js';
import type { UseCaseContext } from './scope.js';

export interface PolicyRecord {
  readOnly: boolean;
  disabledTools: string[];
  allowedOrigins: string[];
  allowedIps: string[];
  /** null: the deployment default. */
  rateLimitPerMinute: number | null;
  /** Each null: no quota (runs started per UTC month, LLM tokens per UTC month, MCP tool calls per UTC day). */
  quotas: QuotaLimits;
  /** null while the workspace runs on the defaults. */
  updatedAt: string | null;
}

/** Fields left out keep their stored value; so do quotas left out of `quotas`. */
export type PolicyChange = {
  [K in keyof Omit<PolicyRecord, 'updatedAt' | 'quotas'>]?: PolicyRecord[K] | undefined;
} & { quotas?: { [K in QuotaName]?: number | null | undefined } | undefined };

export interface PolicyUseCases {
  get(): Promise<PolicyRecord>;
  put(change: PolicyChange): Promise<PolicyRecord>;
}

function policyRecord(p: repos.WorkspacePolicy): PolicyRecord {
  return { ...p, quotas: { ...p.quotas }, updatedAt: p.updatedAt?.toISOString() ?? null };
}

export function policyUseCases(ctx: UseCaseContext): PolicyUseCases {
  return {
    async get() {
      return policyRecord(await repos.getPolicy(ctx.db, ctx.workspaceId));
    },
    put(change) {
      return audited(ctx, 'mcp_policy.update', { ok: () => ({ arguments: change }) }, async () => {
        const policy = await repos.putPolicy(ctx.db, ctx.workspaceId, change);
        // A removed quota stops counting; set again, it counts from then rather than from a stale figure.
        for (const quota of QUOTA_NAMES) {
          if (change.quotas?.[quota] === null) await repos.clearQuotaCounters(ctx.db, ctx.workspaceId, quota);
        }
        ctx.deps.changes?.workspaceChanged(ctx.workspaceId);
        return policyRecord(policy);
      });
    },
  };
}
