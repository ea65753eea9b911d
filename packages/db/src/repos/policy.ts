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
  updatedAt: Date | null;
}

export const DEFAULT_POLICY: WorkspacePolicy = {
  readOnly: false,
  disabledTools: [],
  allowedOrigins: [],
  allowedIps: [],
  rateLimitPerMinute: null,
  updatedAt: null,
};

export async function getPolicy(db: Database, workspaceId: string): Promise<WorkspacePolicy> {
  const rows = await db
    .select()
    .from(workspaceMcpPolicies)
    .where(eq(workspaceMcpPolicies.workspaceId, workspaceId))
    .limit(1);
  const row = rows[0];
  if (!row) return DEFAULT_POLICY;
  return {
    readOnly: row.readOnly,
    disabledTools: row.disabledTools,
    allowedOrigins: row.allowedOrigins,
    allowedIps: row.allowedIps,
    rateLimitPerMinute: row.rateLimitPerMinute,
    updatedAt: row.updatedAt,
  };
}

/**
 * Partial update in one statement: fields left undefined keep their stored value, so two admins changing
 * different fields at the same time cannot undo each other's change.
 */
export async function putPolicy(
  db: Database,
  workspaceId: string,
  patch: Partial<Omit<WorkspacePolicy, 'updatedAt'>>,
): Promise<WorkspacePolicy> {
  const now = new Date();
  const set: Partial<typeof workspaceMcpPolicies.$inferInsert> = { updatedAt: now };
  if (patch.readOnly !== undefined) set.readOnly = patch.readOnly;
  if (patch.disabledTools !== undefined) set.disabledTools = patch.disabledTools;
  if (patch.allowedOrigins !== undefined) set.allowedOrigins = patch.allowedOrigins;
  if (patch.allowedIps !== undefined) set.allowedIps = patch.allowedIps;
  if (patch.rateLimitPerMinute !== undefined) set.rateLimitPerMinute = patch.rateLimitPerMinute;
  const rows = await db
    .insert(workspaceMcpPolicies)
    .values({
      workspaceId,
      readOnly: set.readOnly ?? DEFAULT_POLICY.readOnly,
      disabledTools: set.disabledTools ?? DEFAULT_POLICY.disabledTools,
      allowedOrigins: set.allowedOrigins ?? DEFAULT_POLICY.allowedOrigins,
      allowedIps: set.allowedIps ?? DEFAULT_POLICY.allowedIps,
      rateLimitPerMinute: set.rateLimitPerMinute ?? DEFAULT_POLICY.rateLimitPerMinute,
      updatedAt: now,
    })
    .onConflictDoUpdate({ target: workspaceMcpPolicies.workspaceId, set })
    .returning();
  const row = rows[0] as typeof workspaceMcpPolicies.$inferSelect;
  return {
    readOnly: row.readOnly,
    disabledTools: row.disabledTools,
    allowedOrigins: row.allowedOrigins,
    allowedIps: row.allowedIps,
    rateLimitPerMinute: row.rateLimitPerMinute,
    updatedAt: row.updatedAt,
  };
}
