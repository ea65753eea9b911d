import { and, count, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { kvEntries } from '../schema.js';

/** The `:kv` step's store: one namespace per workspace, entries with an optional time to live. */

/** Entries one workspace may hold; a put beyond it is refused. */
export const MAX_KV_ENTRIES_PER_WORKSPACE = 10_000;

const live = () => or(isNull(kvEntries.expiresAt), gt(kvEntries.expiresAt, sql`now()`));

export async function kvGet(
  db: Database,
  workspaceId: string,
  key: string,
): Promise<{ value: unknown } | null> {
  const [row] = await db
    .select({ value: kvEntries.value })
    .from(kvEntries)
    .where(and(eq(kvEntries.workspaceId, workspaceId), eq(kvEntries.key, key), live()))
    .limit(1);
  return row ? { value: row.value } : null;
}

/** Stores a value; false when the workspace is full (expired entries are removed first and do not count). */
export async function kvPut(
  db: Database,
  workspaceId: string,
  key: string,
  value: unknown,
  ttlSeconds?: number,
): Promise<boolean> {
  const expiresAt = ttlSeconds === undefined ? null : sql`now() + (${ttlSeconds} * interval '1 second')`;
  return db.transaction(async (tx) => {
    const [exists] = await tx
      .select({ key: kvEntries.key })
      .from(kvEntries)
      .where(and(eq(kvEntries.workspaceId, workspaceId), eq(kvEntries.key, key)))
      .limit(1);
    if (!exists) {
      await tx
        .delete(kvEntries)
        .where(and(eq(kvEntries.workspaceId, workspaceId), sql`${kvEntries.expiresAt} <= now()`));
      const [n] = await tx
        .select({ n: count() })
        .from(kvEntries)
        .where(eq(kvEntries.workspaceId, workspaceId));
      if ((n?.n ?? 0) >= MAX_KV_ENTRIES_PER_WORKSPACE) return false;
    }
    await tx
      .insert(kvEntries)
      .values({ workspaceId, key, value, expiresAt, updatedAt: sql`now()` })
      .onConflictDoUpdate({
        target: [kvEntries.workspaceId, kvEntries.key],
        set: { value, expiresAt, updatedAt: sql`now()` },
      });
    return true;
  });
}

export async function kvDelete(db: Database, workspaceId: string, key: string): Promise<void> {
  await db.delete(kvEntries).where(and(eq(kvEntries.workspaceId, workspaceId), eq(kvEntries.key, key)));
}
