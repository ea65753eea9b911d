import { and, desc, eq, gte, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { feedback } from '../schema.js';

export type FeedbackRow = typeof feedback.$inferSelect;
/** A listed row with `position`, its exact `created_at` as the database prints it (for the next page). */
export type FeedbackListRow = FeedbackRow & { position: string };

export async function insertFeedback(
  db: Database,
  workspaceId: string,
  input: Omit<typeof feedback.$inferInsert, 'workspaceId' | 'createdAt'>,
): Promise<FeedbackRow> {
  const rows = await db
    .insert(feedback)
    .values({ ...input, workspaceId })
    .returning();
  return rows[0] as FeedbackRow;
}

/**
 * A workspace's feedback, newest first, optionally of one area and from an instant on. Pages by the exact
 * (created_at, id) text, like runs: a JS Date would drop the microseconds and skip rows of the same millisecond.
 */
export async function listFeedback(
  db: Database,
  workspaceId: string,
  page: {
    limit: number;
    before?: { createdAt: string; id: string } | undefined;
    area?: string | undefined;
    since?: Date | undefined;
  },
): Promise<FeedbackListRow[]> {
  const b = page.before;
  const rows = await db
    .select({ row: feedback, createdAtText: sql<string>`${feedback.createdAt}::text` })
    .from(feedback)
    .where(
      and(
        eq(feedback.workspaceId, workspaceId),
        b ? sql`(${feedback.createdAt}, ${feedback.id}) < (${b.createdAt}::timestamptz, ${b.id})` : undefined,
        page.area !== undefined ? eq(feedback.area, page.area) : undefined,
        page.since !== undefined ? gte(feedback.createdAt, page.since) : undefined,
      ),
    )
    .orderBy(desc(feedback.createdAt), desc(feedback.id))
    .limit(page.limit);
  return rows.map((r) => ({ ...r.row, position: r.createdAtText }));
}
