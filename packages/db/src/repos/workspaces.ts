import { asc, eq, gt } from 'drizzle-orm';
import type { Database } from '../client.js';
import { workspaces } from '../schema.js';

export type WorkspaceRow = typeof workspaces.$inferSelect;

/** Returns null when the id is taken (callers answer 409). */
export async function createWorkspace(
  db: Database,
  input: { id: string; name: string },
): Promise<WorkspaceRow | null> {
  const rows = await db.insert(workspaces).values(input).onConflictDoNothing().returning();
  return rows[0] ?? null;
}

export async function getWorkspace(db: Database, id: string): Promise<WorkspaceRow | null> {
  const rows = await db.select().from(workspaces).where(eq(workspaces.id, id)).limit(1);
  return rows[0] ?? null;
}

/** By id, for the operator's console; `afterId` continues a page. */
export async function listWorkspaces(
  db: Database,
  page: { limit: number; afterId?: string | undefined },
): Promise<WorkspaceRow[]> {
  return db
    .select()
    .from(workspaces)
    .where(page.afterId ? gt(workspaces.id, page.afterId) : undefined)
    .orderBy(asc(workspaces.id))
    .limit(page.limit);
}
