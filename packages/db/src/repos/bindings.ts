import { and, eq, inArray } from 'drizzle-orm';
import type { Database } from '../client.js';
import { bindings, flows } from '../schema.js';

/** Which flow slots each connection is bound to (for connection listings). */
export async function listBindingsForConnections(
  db: Database,
  workspaceId: string,
  connectionIds: string[],
): Promise<Array<{ connectionId: string; flowSlug: string; slot: string; target: string }>> {
  if (connectionIds.length === 0) return [];
  return db
    .select({
      connectionId: bindings.connectionId,
      flowSlug: flows.slug,
      slot: bindings.slot,
      target: bindings.target,
    })
    .from(bindings)
    .innerJoin(flows, and(eq(flows.id, bindings.flowId), eq(flows.workspaceId, bindings.workspaceId)))
    .where(and(eq(bindings.workspaceId, workspaceId), inArray(bindings.connectionId, connectionIds)))
    .limit(1000);
}
