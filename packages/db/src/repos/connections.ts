import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Database, Executor } from '../client.js';
import { bindings, connections, flows, installations } from '../schema.js';

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

export interface ConnectionPatch {
  name?: string;
  baseUrl?: string;
  authType?: string;
  /** Null removes the stored secret (auth type none). The old ciphertext is overwritten, not kept. */
  secretCiphertext?: string | null;
  config?: Record<string, string>;
  status?: ConnectionRow['status'];
  /** Null clears the last health check when a change the repository cannot see makes it stale (fixed headers). */
  health?: null;
}

/**
 * Renames, moves, re-authenticates, rotates or disables a connection. A change of target or credential clears the
 * last health check, which described the old one. Null when the connection is not in this workspace.
 */
export async function updateConnection(
  db: Database,
  workspaceId: string,
  id: string,
  patch: ConnectionPatch,
): Promise<ConnectionRow | null> {
  const staleHealth =
    patch.baseUrl !== undefined || patch.secretCiphertext !== undefined || patch.authType !== undefined;
  const rows = await db
    .update(connections)
    .set({ ...patch, ...(staleHealth ? { health: null } : {}), updatedAt: new Date() })
    .where(and(eq(connections.workspaceId, workspaceId), eq(connections.id, id)))
    .returning();
  return rows[0] ?? null;
}

/** What uses a connection: flow slot bindings (own flows) and installation slot bindings. */
export interface ConnectionUsage {
  flowBindings: Array<{ flowSlug: string; target: 'live' | 'draft'; slot: string }>;
  installationBindings: Array<{ installationId: string; flowSlug: string; slot: string }>;
}

export async function connectionUsage(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<ConnectionUsage> {
  const flowBindings = await db
    .select({ flowSlug: flows.slug, target: bindings.target, slot: bindings.slot })
    .from(bindings)
    .innerJoin(flows, and(eq(flows.id, bindings.flowId), eq(flows.workspaceId, bindings.workspaceId)))
    .where(and(eq(bindings.workspaceId, workspaceId), eq(bindings.connectionId, id)))
    .orderBy(asc(flows.slug), asc(bindings.target), asc(bindings.slot));
  const rows = await db
    .select({
      id: installations.id,
      flowSlug: installations.sourceFlowSlug,
      slotBindings: installations.slotBindings,
    })
    .from(installations)
    .where(
      and(
        eq(installations.workspaceId, workspaceId),
        sql`exists (select 1 from jsonb_each_text(${installations.slotBindings}) b where b.value = ${id})`,
      ),
    )
    .orderBy(asc(installations.id));
  const installationBindings = rows.flatMap((r) =>
    Object.entries(r.slotBindings)
      .filter(([, connectionId]) => connectionId === id)
      .map(([slot]) => ({ installationId: r.id, flowSlug: r.flowSlug, slot }))
      .sort((a, b) => a.slot.localeCompare(b.slot)),
  );
  return { flowBindings, installationBindings };
}

/**
 * Deletes a connection with its secret, in one transaction with the look-up of what is bound to it. While bound and
 * not `force`, nothing is deleted and the bindings are returned. With `force`, flow bindings go with the connection
 * (foreign key) and installations bound to it lose those slots and are disabled, as unbinding a required slot does.
 * Null when the connection is not in this workspace.
 */
export async function deleteConnection(
  db: Database,
  workspaceId: string,
  id: string,
  options: { force: boolean },
): Promise<{ deleted: boolean; usage: ConnectionUsage } | null> {
  return db.transaction(async (tx) => {
    const usage = await connectionUsage(tx, workspaceId, id);
    const bound = usage.flowBindings.length + usage.installationBindings.length > 0;
    if (bound && !options.force) {
      const exists = await tx
        .select({ id: connections.id })
        .from(connections)
        .where(and(eq(connections.workspaceId, workspaceId), eq(connections.id, id)));
      return exists.length > 0 ? { deleted: false, usage } : null;
    }
    const byInstallation = new Map<string, string[]>();
    for (const b of usage.installationBindings) {
      byInstallation.set(b.installationId, [...(byInstallation.get(b.installationId) ?? []), b.slot]);
    }
    for (const [installationId, slots] of byInstallation) {
      let remove = sql`${installations.slotBindings}`;
      for (const slot of slots) remove = sql`(${remove} - ${slot}::text)`;
      await tx
        .update(installations)
        .set({ slotBindings: remove, enabled: false, updatedAt: new Date() })
        .where(and(eq(installations.workspaceId, workspaceId), eq(installations.id, installationId)));
    }
    const rows = await tx
      .delete(connections)
      .where(and(eq(connections.workspaceId, workspaceId), eq(connections.id, id)))
      .returning({ id: connections.id });
    // Usage is read in this workspace only, so an id that is not here unbound nothing above.
    return rows.length > 0 ? { deleted: true, usage } : null;
  });
}

export async function getConnectionByName(
  db: Database,
  workspaceId: string,
  name: string,
): Promise<ConnectionRow | null> {
  const rows = await db
    .select()
    .from(connections)
    .where(and(eq(connections.workspaceId, workspaceId), eq(connections.name, name)))
    .limit(1);
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
