import { and, asc, eq, gt, inArray } from 'drizzle-orm';
import type { Database } from '../client.js';
import { connections } from '../schema.js';

export type ConnectionRow = typeof connections.$inferSelect;
/** Everything about a connection except its ciphertext: the only shape read paths hand out. */
export type ConnectionView = Omit<ConnectionRow, 'secretCiphertext'> & { hasSecret: boolean };

export function toConnectionView(row: ConnectionRow): ConnectionView {
  const { secretCiphertext, ...rest } = row;
  return { ...rest, hasSecret: secretCiphertext !== null };
}

export async function createConnection(
  db: Database,
  workspaceId: string,
  input: {
    id: string;
    name: string;
    type: ConnectionRow['type'];
    baseUrl: string | null;
    authType: string;
    secretCiphertext: string | null;
    config: Record<string, string>;
  },
): Promise<ConnectionRow | null> {
  const rows = await db
    .insert(connections)
    .values({ ...input, workspaceId })
    .onConflictDoNothing()
    .returning();
  return rows[0] ?? null;
}

export async function listConnections(
  db: Database,
  workspaceId: string,
  page: { limit: number; afterId?: string | undefined; ids?: string[] | undefined },
): Promise<ConnectionRow[]> {
  const conds = [eq(connections.workspaceId, workspaceId)];
  if (page.afterId) conds.push(gt(connections.id, page.afterId));
  if (page.ids) conds.push(inArray(connections.id, page.ids.length ? page.ids : ['']));
  return db
    .select()
    .from(connections)
    .where(and(...conds))
    .orderBy(asc(connections.id))
    .limit(page.limit);
}

export async function getConnection(
  db: Database,
  workspaceId: string,
  id: string,
): Promise<ConnectionRow | null> {
  const rows = await db
    .select()
    .from(connections)
    .where(and(eq(connections.workspaceId, workspaceId), eq(connections.id, id)))
    .limit(1);
  return rows[0] ?? null;
}

/**
 * Moves a connection (base URL) or rotates its secret. The last health check described the old target or
 * credential, so it is cleared. Null when the connection is not in this workspace.
 */
export async function updateConnection(
  db: Database,
  workspaceId: string,
  id: string,
  patch: { baseUrl?: string; secretCiphertext?: string },
): Promise<ConnectionRow | null> {
  const rows = await db
    .update(connections)
    .set({ ...patch, health: null })
    .where(and(eq(connections.workspaceId, workspaceId), eq(connections.id, id)))
    .returning();
  return rows[0] ?? null;
}

export async function setConnectionHealth(
  db: Database,
  workspaceId: string,
  id: string,
  health: NonNullable<ConnectionRow['health']>,
): Promise<void> {
  await db
    .update(connections)
    .set({ health })
    .where(and(eq(connections.workspaceId, workspaceId), eq(connections.id, id)));
}
