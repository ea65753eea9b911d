import { NO_QUOTAS, type QuotaLimits } from '@flowgate/core';
import { eq } from 'drizzle-orm';
import type { Database } from '../client.js';
import { workspaceMcpPolicies } from '../schema.js';

export interface WorkspacePolicy {
  readOnly: boolean;
  disabledTools: string[];
  allowedOrigins: string[];
  allowedIps: string[];
  /** null: the deployment default. */
  rateLimitPerMinute: number | null;
  /** Each null: no quota. */
  quotas: QuotaLimits;
  updatedAt: Date | null;
}

/** A change to the policy: fields left undefined keep their stored value, quotas each on its own. */
export type WorkspacePolicyPatch = Partial<Omit<WorkspacePolicy, 'updatedAt' | 'quotas'>> & {
  quotas?: Partial<QuotaLimits> | undefined;
};

export const DEFAULT_POLICY: WorkspacePolicy = {
  readOnly: false,
  disabledTools: [],
  allowedOrigins: [],
  allowedIps: [],
  rateLimitPerMinute: null,
  quotas: NO_QUOTAS,
  updatedAt: null,
};

type PolicyRow = typeof workspaceMcpPolicies.$inferSelect;

function policyOf(row: PolicyRow): WorkspacePolicy {
  return {
    readOnly: row.readOnly,
    disabledTools: row.disabledTools,
    allowedOrigins: row.allowedOrigins,
    allowedIps: row.allowedIps,
    rateLimitPerMinute: row.rateLimitPerMinute,
    quotas: {
      runsPerMonth: row.quotaRunsPerMonth,
      llmTokensPerMonth: row.quotaLlmTokensPerMonth,
      toolCallsPerDay: row.quotaToolCallsPerDay,
    },
    updatedAt: row.updatedAt,
  };
}

export async function getPolicy(db: Database, workspaceId: string): Promise<WorkspacePolicy> {
  const rows = await db
    .select()
    .from(workspaceMcpPolicies)
    .where(eq(workspaceMcpPolicies.workspaceId, workspaceId))
    .limit(1);
  const row = rows[0];
  return row ? policyOf(row) : DEFAULT_POLICY;
}

/**
 * Partial update in one statement: fields left undefined keep their stored value, so two admins changing
 * different fields at the same time cannot undo each other's change.
 */
export async function putPolicy(
  db: Database,
  workspaceId: string,
  patch: WorkspacePolicyPatch,
): Promise<WorkspacePolicy> {
  const now = new Date();
  const set: Partial<typeof workspaceMcpPolicies.$inferInsert> = { updatedAt: now };
  if (patch.readOnly !== undefined) set.readOnly = patch.readOnly;
  if (patch.disabledTools !== undefined) set.disabledTools = patch.disabledTools;
  if (patch.allowedOrigins !== undefined) set.allowedOrigins = patch.allowedOrigins;
  if (patch.allowedIps !== undefined) set.allowedIps = patch.allowedIps;
  if (patch.rateLimitPerMinute !== undefined) set.rateLimitPerMinute = patch.rateLimitPerMinute;
  const quotas = patch.quotas ?? {};
  if (quotas.runsPerMonth !== undefined) set.quotaRunsPerMonth = quotas.runsPerMonth;
  if (quotas.llmTokensPerMonth !== undefined) set.quotaLlmTokensPerMonth = quotas.llmTokensPerMonth;
  if (quotas.toolCallsPerDay !== undefined) set.quotaToolCallsPerDay = quotas.toolCallsPerDay;
  const rows = await db
    .insert(workspaceMcpPolicies)
    .values({
      workspaceId,
      readOnly: set.readOnly ?? DEFAULT_POLICY.readOnly,
      disabledTools: set.disabledTools ?? DEFAULT_POLICY.disabledTools,
      allowedOrigins: set.allowedOrigins ?? DEFAULT_POLICY.allowedOrigins,
      allowedIps: set.allowedIps ?? DEFAULT_POLICY.allowedIps,
      rateLimitPerMinute: set.rateLimitPerMinute ?? DEFAULT_POLICY.rateLimitPerMinute,
      quotaRunsPerMonth: set.quotaRunsPerMonth ?? null,
      quotaLlmTokensPerMonth: set.quotaLlmTokensPerMonth ?? null,
      quotaToolCallsPerDay: set.quotaToolCallsPerDay ?? null,
      updatedAt: now,
    })
    .onConflictDoUpdate({ target: workspaceMcpPolicies.workspaceId, set })
    .returning();
  return policyOf(rows[0] as PolicyRow);
}
