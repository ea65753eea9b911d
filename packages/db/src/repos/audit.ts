import { and, desc, eq, lt } from 'drizzle-orm';
import type { Database } from '../client.js';
import { auditEntries } from '../schema.js';

export type AuditRow = typeof auditEntries.$inferSelect;
export type NewAuditEntry = typeof auditEntries.$inferInsert;

export async function insertAuditEntries(db: Database, entries: NewAuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.insert(auditEntries).values(entries);
}

/** Newest first; `beforeId` continues a page. */
export async function listAuditEntries(
  db: Database,
  workspaceId: string,
  page: { limit: number; beforeId?: number | undefined },
): Promise<AuditRow[]> {
  const where = page.beforeId
    ? and(eq(auditEntries.workspaceId, workspaceId), lt(auditEntries.id, page.beforeId))
    : eq(auditEntries.workspaceId, workspaceId);
  return db.select().from(auditEntries).where(where).orderBy(desc(auditEntries.id)).limit(page.limit);
}
