import { and, desc, eq, gte, inArray, lt, lte, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { auditEntries, workspaces } from '../schema.js';

export type AuditRow = typeof auditEntries.$inferSelect;
export type NewAuditEntry = typeof auditEntries.$inferInsert;

/** Writes the entries; returns their ids in the order given (the queue folds later repeats into them). */
export async function insertAuditEntries(db: Database, entries: NewAuditEntry[]): Promise<number[]> {
  if (entries.length === 0) return [];
  const rows = await db.insert(auditEntries).values(entries).returning({ id: auditEntries.id });
  return rows.map((r) => r.id);
}

/** Adds repeats to a row already written. */
export async function addAuditRepeats(db: Database, id: number, repeats: number): Promise<void> {
  if (repeats <= 0) return;
  await db
    .update(auditEntries)
    .set({ count: sql`${auditEntries.count} + ${repeats}` })
    .where(eq(auditEntries.id, id));
}

/** Optional narrowing of an audit listing (the console's filters); every field is an exact match. */
export interface AuditFilter {
  keyId?: string | undefined;
  action?: string | undefined;
  outcome?: 'ok' | 'error' | 'blocked' | 'denied' | undefined;
  /** Entries at or after this instant. */
  since?: Date | undefined;
  /** Entries before this instant. */
  until?: Date | undefined;
}

/** Newest first; `beforeId` continues a page. */
export async function listAuditEntries(
  db: Database,
  workspaceId: string,
  page: { limit: number; beforeId?: number | undefined },
  filter: AuditFilter = {},
): Promise<AuditRow[]> {
  const where = and(
    eq(auditEntries.workspaceId, workspaceId),
    page.beforeId ? lt(auditEntries.id, page.beforeId) : undefined,
    filter.keyId !== undefined ? eq(auditEntries.keyId, filter.keyId) : undefined,
    filter.action !== undefined ? eq(auditEntries.action, filter.action) : undefined,
    filter.outcome !== undefined ? eq(auditEntries.outcome, filter.outcome) : undefined,
    filter.since !== undefined ? gte(auditEntries.at, filter.since) : undefined,
    filter.until !== undefined ? lt(auditEntries.at, filter.until) : undefined,
  );
  return db.select().from(auditEntries).where(where).orderBy(desc(auditEntries.id)).limit(page.limit);
}

/** Deleted in slices, so a large prune holds neither many locks nor a long transaction at once. */
const PRUNE_SLICE = 5_000;

async function deleteWhere(db: Database, where: SQL | undefined): Promise<number> {
  let deleted = 0;
  for (;;) {
    const slice = db.select({ id: auditEntries.id }).from(auditEntries).where(where).limit(PRUNE_SLICE);
    const rows = await db
      .delete(auditEntries)
      .where(inArray(auditEntries.id, slice))
      .returning({ id: auditEntries.id });
    deleted += rows.length;
    if (rows.length < PRUNE_SLICE) return deleted;
  }
}

/** Deletes entries older than `before`; returns how many went. */
export function pruneAuditBefore(db: Database, before: Date): Promise<number> {
  return deleteWhere(db, lt(auditEntries.at, before));
}

/**
 * Keeps each workspace's newest `maxRows` entries and deletes the rest; returns how many went. Walks the
 * (workspace_id, id) index from the newest row, so a workspace under the cap costs at most `maxRows` index steps.
 */
export async function pruneAuditOverCap(db: Database, maxRows: number): Promise<number> {
  const ids = await db.select({ id: workspaces.id }).from(workspaces);
  let deleted = 0;
  for (const { id: workspaceId } of ids) {
    const boundary = await db
      .select({ id: auditEntries.id })
      .from(auditEntries)
      .where(eq(auditEntries.workspaceId, workspaceId))
      .orderBy(desc(auditEntries.id))
      .offset(maxRows)
      .limit(1);
    const newestDropped = boundary[0];
    if (!newestDropped) continue;
    deleted += await deleteWhere(
      db,
      and(eq(auditEntries.workspaceId, workspaceId), lte(auditEntries.id, newestDropped.id)),
    );
  }
  return deleted;
}
