import { eq } from 'drizzle-orm';
import type { Database } from '../client.js';
import { workspaceMcpPolicies } from '../schema.js';

export interface WorkspacePolicy {
  readOnly: boolean;
  disabledTools: string[];
  allowedOrigins: string[];
  allowedIps: string[];
  updatedAt: Date | null;
}

export const DEFAULT_POLICY: WorkspacePolicy = {
  readOnly: false,
  disabledTools: [],
  allowedOrigins: [],
  allowedIps: [],
  updatedAt: null,
};

export async function getPolicy(db: Database, workspaceId: string): Promise<WorkspacePolicy> {
  const rows = await db.select().from(workspaceMcpPolicies).where(eq(workspaceMcpPolicies.workspaceId, workspaceId)).limit(1);
  const row = rows[0];
  if (!row) return DEFAULT_POLICY;
  return {
    readOnly: row.readOnly,
    disabledTools: row.disabledTools,
    allowedOrigins: row.allowedOrigins,
    allowedIps: row.allowedIps,
    updatedAt: row.updatedAt,
  };
}

/** Partial update: fields left undefined keep their stored value. */
export async function putPolicy(
  db: Database,
  workspaceId: string,
  patch: Partial<Omit<WorkspacePolicy, 'updatedAt'>>,
): Promise<WorkspacePolicy> {
  const current = await getPolicy(db, workspaceId);
  const next = {
    readOnly: patch.readOnly ?? current.readOnly,
    disabledTools: patch.disabledTools ?? current.disabledTools,
    allowedOrigins: patch.allowedOrigins ?? current.allowedOrigins,
    allowedIps: patch.allowedIps ?? current.allowedIps,
    updatedAt: new Date(),
  };
  await db
    .insert(workspaceMcpPolicies)
    .values({ workspaceId, ...next })
    .onConflictDoUpdate({ target: workspaceMcpPolicies.workspaceId, set: next });
  return next;
}
