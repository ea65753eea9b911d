import type { Database } from '../client.js';
import { feedback } from '../schema.js';

export type FeedbackRow = typeof feedback.$inferSelect;

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
