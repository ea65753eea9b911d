import { and, asc, eq, gt } from 'drizzle-orm';
import type { Database } from '../client.js';
import { serviceAccounts } from '../schema.js';

export type ServiceAccountRow = typeof serviceAccounts.$inferSelect;

export async function createServiceAccount(
  db: Database,
  workspaceId: string,
  input: { id: string; name: string; capabilities: string[] },
): Promise<ServiceAccountRow> {
  const rows = await db
    .insert(serviceAccounts)
    .values({ ...input, workspaceId })
    .returning();
  return rows[0] as ServiceAccountRow;
}

export async function listServiceAccounts(
  db: Database,
  workspaceId: string,
  page: { limit: number; afterId?: string | undefined },
): Promise<ServiceAccountRow[]> {
  const where = page.afterId
    ? and(eq(serviceAccounts.workspaceId, workspaceId), gt(serviceAccounts.id, page.afterId))
    : eq(serviceAccounts.workspaceId, workspaceId);
  return db.select().from(serviceAccounts).where(where).orderBy(asc(serviceAccounts.id)).limit(page.limit);
}

export async function getServiceAccount(
  db: Database,
  workspaceId: string,
  id: string,
): Promise<ServiceAccountRow | null> {
  const rows = await db
    .select()
    .from(serviceAccounts)
    .where(and(eq(serviceAccounts.workspaceId, workspaceId), eq(serviceAccounts.id, id)))
    .limit(1);
  return rows[0] ?? null;
}

export async function updateServiceAccount(
  db: Database,
  workspaceId: string,
  id: string,
  patch: {
    name?: string | undefined;
    status?: 'active' | 'disabled' | undefined;
    capabilities?: string[] | undefined;
  },
): Promise<ServiceAccountRow | null> {
  const set: Partial<typeof serviceAccounts.$inferInsert> = { updatedAt: new Date() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.status !== undefined) set.status = patch.status;
  if (patch.capabilities !== undefined) set.capabilities = patch.capabilities;
  const rows = await db
    .update(serviceAccounts)
    .set(set)
    .where(and(eq(serviceAccounts.workspaceId, workspaceId), eq(serviceAccounts.id, id)))
    .returning();
  return rows[0] ?? null;
}
