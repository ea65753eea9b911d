/** Internal to the flow repositories (not re-exported from `repos`): the row lock writers of one flow take first. */
import { and, eq } from 'drizzle-orm';
import type { Transaction } from '../client.js';
import { flows } from '../schema.js';
import type { FlowRow } from './flows.js';

/** The flow, locked for the rest of the transaction, so concurrent releases and trust changes of it run one by one. */
export async function lockFlow(tx: Transaction, workspaceId: string, slug: string): Promise<FlowRow | null> {
  const [flow] = await tx
    .select()
    .from(flows)
    .where(and(eq(flows.workspaceId, workspaceId), eq(flows.slug, slug)))
    .for('update')
    .limit(1);
  return flow ?? null;
}
