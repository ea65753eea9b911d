import { and, desc, eq, lt, or } from 'drizzle-orm';
import type { Database } from '../client.js';
import { runs } from '../schema.js';

export type RunRow = typeof runs.$inferSelect;

/** Newest first; the cursor is the last row's (createdAt, id). */
export async function listRuns(
  db: Database,
  workspaceId: string,
  page: { limit: number; before?: { createdAt: Date; id: string } | undefined },
): Promise<RunRow[]> {
  const b = page.before;
  const where = b
    ? and(eq(runs.workspaceId, workspaceId), or(lt(runs.createdAt, b.createdAt), and(eq(runs.createdAt, b.createdAt), lt(runs.id, b.id))))
    : eq(runs.workspaceId, workspaceId);
  return db.select().from(runs).where(where).orderBy(desc(runs.createdAt), desc(runs.id)).limit(page.limit);
}

export async function getRun(db: Database, workspaceId: string, id: string): Promise<RunRow | null> {
  const rows = await db.select().from(runs).where(and(eq(runs.workspaceId, workspaceId), eq(runs.id, id))).limit(1);
  return rows[0] ?? null;
}
