/**
 * The workspace's quotas as the work they bound sees them. Run starts take their unit inside the run insert
 * (runs/index.ts); this side serves the MCP tool calls (taken when a call is admitted) and reads where each stands.
 */
import { QUOTA_NAMES, QuotaExceeded, type QuotaName, quotaPeriod } from '@flowgate/core';
import { repos } from '@flowgate/db';
import type { UseCaseContext } from './scope.js';

export interface QuotaStanding {
  quota: QuotaName;
  /** null: no quota. */
  limit: number | null;
  /** Counted in this period while a limit is set (0 otherwise). */
  used: number;
  periodStart: string;
  resetsAt: string;
}

export interface QuotaUseCases {
  /**
   * Takes one MCP tool call of today's `toolCallsPerDay` when the caller's view of the policy has that quota (the
   * gateway's cached policy; nothing is read or written without one). The stored limit decides.
   * Throws `QuotaExceeded` when the day's calls are used up.
   */
  admitToolCall(limit: number | null): Promise<void>;
  /** Every quota with what this period used of it, for display beside the usage. */
  standing(): Promise<QuotaStanding[]>;
}

export function quotaUseCases(ctx: UseCaseContext): QuotaUseCases {
  const { db, workspaceId } = ctx;
  return {
    async admitToolCall(cachedLimit) {
      if (cachedLimit === null) return;
      const now = ctx.now();
      const period = quotaPeriod('toolCallsPerDay', now);
      // The cached limit may be seconds old; the stored one bounds the count.
      const limit = await repos.quotaLimit(db, workspaceId, 'toolCallsPerDay');
      if (limit === null) return;
      if (!(await repos.takeQuota(db, workspaceId, 'toolCallsPerDay', period, limit)))
        throw new QuotaExceeded('toolCallsPerDay', limit, now);
    },
    async standing() {
      const now = ctx.now();
      const { quotas } = await repos.getPolicy(db, workspaceId);
      return Promise.all(
        QUOTA_NAMES.map(async (quota) => {
          const period = quotaPeriod(quota, now);
          const limit = quotas[quota];
          return {
            quota,
            limit,
            used: limit === null ? 0 : await repos.quotaUsed(db, workspaceId, quota, period),
            periodStart: period.start.toISOString(),
            resetsAt: period.resetsAt.toISOString(),
          };
        }),
      );
    },
  };
}
