import { and, eq, gt, isNull, lt } from 'drizzle-orm';
import type { Database } from '../client.js';
import { consoleSessions } from '../schema.js';

export type ConsoleSessionRow = typeof consoleSessions.$inferSelect;

export async function insertConsoleSession(
  db: Database,
  input: {
    idHash: string;
    kind: 'session' | 'code';
    principal: unknown;
    workspaces: string[];
    expiresAt: Date;
  },
): Promise<void> {
  await db.insert(consoleSessions).values(input);
}

/** The row of that id and kind while it is live: not revoked, not expired. */
const live = (idHash: string, kind: 'session' | 'code', now: Date) =>
  and(
    eq(consoleSessions.idHash, idHash),
    eq(consoleSessions.kind, kind),
    isNull(consoleSessions.revokedAt),
    gt(consoleSessions.expiresAt, now),
  );

/** The live row of that kind (not expired, not revoked), or null. */
export async function getConsoleSession(
  db: Database,
  idHash: string,
  kind: 'session' | 'code',
  now: Date,
): Promise<ConsoleSessionRow | null> {
  const rows = await db
    .select()
    .from(consoleSessions)
    .where(live(idHash, kind, now))
    .limit(1);
  return rows[0] ?? null;
}

/**
 * Marks a live row revoked and returns it; null when it was already used, revoked or expired. One statement, so a
 * one-time code raced by two requests is traded exactly once.
 */
export async function revokeConsoleSession(
  db: Database,
  idHash: string,
  kind: 'session' | 'code',
  now: Date,
): Promise<ConsoleSessionRow | null> {
  const rows = await db
    .update(consoleSessions)
    .set({ revokedAt: now })
    .where(live(idHash, kind, now))
    .returning();
  return rows[0] ?? null;
}

/** Deletes rows (sessions, codes, used or not) that expired before `before`; returns how many went. */
export async function pruneConsoleSessions(db: Database, before: Date): Promise<number> {
  const rows = await db
    .delete(consoleSessions)
    .where(lt(consoleSessions.expiresAt, before))
    .returning({ idHash: consoleSessions.idHash });
  return rows.length;
}
