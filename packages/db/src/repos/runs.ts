import { and, desc, eq, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { runs } from '../schema.js';

export type RunRow = typeof runs.$inferSelect;
export type RunListRow = RunRow & { position: string };

/**
 * Newest first. `position` is the row's exact (created_at, id) as text: Postgres keeps microseconds, which a
 * JS Date would round away and so skip rows created within the same millisecond.
 */
export async function listRuns(
  db: Database,
  workspaceId: string,
  page: { limit: number; before?: { createdAt: string; id: string } | undefined },
): Promise<RunListRow[]> {
  const b = page.before;
  const where = b
    ? and(
        eq(runs.workspaceId, workspaceId),
        sql`(${runs.createdAt}, ${runs.id}) < (${b.createdAt}::timestamptz, ${b.id})`,
      )
    : eq(runs.workspaceId, workspaceId);
  const rows = await db
    .select({ run: runs, createdAtText: sql<string>`${runs.createdAt}::text` })
    .from(runs)
    .where(where)
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(page.limit);
  return rows.map((r) => ({ ...r.run, position: r.createdAtText }));
}

export async function getRun(db: Database, workspaceId: string, id: string): Promise<RunRow | null> {
  const rows = await db
    .select()
    .from(runs)
    .where(and(eq(runs.workspaceId, workspaceId), eq(runs.id, id)))
    .limit(1);
  return rows[0] ?? null;
}
