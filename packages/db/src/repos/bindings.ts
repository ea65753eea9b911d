import { AppError, type ErrorIssue } from '@flowgate/core';
import type { FlowModel, RequiresSlot } from '@flowgate/flows';
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Database, Executor } from '../client.js';
import { bindings, connections, flows } from '../schema.js';
import { definitionOf, getFlow } from './flows.js';

/**
 * Slot bindings: which connection of the workspace each slot of a flow's live or draft target uses. Connections of
 * another workspace are never accepted (checkSlotBindings is shared with installations).
 */

export type BindingTarget = 'live' | 'draft';

const MAX_BINDINGS_PER_CALL = 64;

/** Where the connection a run of a target uses for one slot was bound. */
export interface RunBinding {
  connectionId: string;
  /** `draft` when the draft has its own binding for the slot, else `live`. */
  boundFor: BindingTarget;
}

/**
 * The slot bindings a run of a flow's target uses, each with where it was bound. A live run uses the live bindings.
 * A draft run uses the draft's own binding for a slot, else the live one, slot by slot: an agent can test an edit of
 * a flow whose slots are bound for live without binding them again, and a draft binding never reaches a live run.
 */
export async function getRunBindings(
  db: Database,
  workspaceId: string,
  flowId: string,
  target: BindingTarget,
): Promise<Record<string, RunBinding>> {
  const targets: BindingTarget[] = target === 'draft' ? ['live', 'draft'] : ['live'];
  const rows = await db
    .select({ slot: bindings.slot, connectionId: bindings.connectionId, target: bindings.target })
    .from(bindings)
    .where(
      and(
        eq(bindings.workspaceId, workspaceId),
        eq(bindings.flowId, flowId),
        inArray(bindings.target, targets),
      ),
    )
    .orderBy(asc(bindings.slot));
  const out: Record<string, RunBinding> = {};
  for (const r of rows) {
    const boundFor = r.target;
    // A draft binding wins over the live one for the same slot, whichever row came first.
    if (out[r.slot]?.boundFor === 'draft') continue;
    out[r.slot] = { connectionId: r.connectionId, boundFor };
  }
  return out;
}

/** The slot → connection map a run of a flow's target uses (see `getRunBindings`). */
export async function getFlowBindingsById(
  db: Database,
  workspaceId: string,
  flowId: string,
  target: BindingTarget,
): Promise<Record<string, string>> {
  const resolved = await getRunBindings(db, workspaceId, flowId, target);
  return Object.fromEntries(Object.entries(resolved).map(([slot, b]) => [slot, b.connectionId]));
}

export async function getFlowBindings(
  db: Database,
  workspaceId: string,
  slug: string,
  target: BindingTarget,
): Promise<Record<string, string> | null> {
  const flow = await getFlow(db, workspaceId, slug);
  if (!flow) return null;
  return bindingsOf(db, workspaceId, flow.id, target);
}

async function bindingsOf(db: Executor, workspaceId: string, flowId: string, target: BindingTarget) {
  const rows = await db
    .select({ slot: bindings.slot, connectionId: bindings.connectionId })
    .from(bindings)
    .where(
      and(eq(bindings.workspaceId, workspaceId), eq(bindings.flowId, flowId), eq(bindings.target, target)),
    )
    .orderBy(asc(bindings.slot));
  const out: Record<string, string> = {};
  for (const r of rows) out[r.slot] = r.connectionId;
  return out;
}

/**
 * Checks slot → connection pairs against the slots a definition declares and the connections of `workspaceId`
 * (never another workspace's): every problem is reported, nothing is written. Shared with installations.
 */
export async function checkSlotBindings(
  db: Executor,
  workspaceId: string,
  declared: ReadonlyArray<Pick<RequiresSlot, 'slot' | 'type'>>,
  slots: Record<string, string | null>,
  pathPrefix: string,
): Promise<ErrorIssue[]> {
  const issues: ErrorIssue[] = [];
  const entries = Object.entries(slots);
  if (entries.length > MAX_BINDINGS_PER_CALL) {
    return [{ path: pathPrefix, message: `at most ${MAX_BINDINGS_PER_CALL} slots per request` }];
  }
  const ids = [...new Set(entries.map(([, id]) => id).filter((id): id is string => typeof id === 'string'))];
  const found = ids.length
    ? await db
        .select({ id: connections.id, type: connections.type })
        .from(connections)
        .where(and(eq(connections.workspaceId, workspaceId), inArray(connections.id, ids)))
    : [];
  const typeOf = new Map(found.map((c) => [c.id, c.type]));
  for (const [slot, connectionId] of entries) {
    const path = `${pathPrefix}.${slot}`;
    const decl = declared.find((d) => d.slot === slot);
    if (!decl) {
      const names = declared.map((d) => d.slot);
      issues.push({
        path,
        message: names.length
          ? `the flow does not require a slot ${slot}; it requires: ${names.join(', ')}`
          : `the flow requires no slots`,
      });
      continue;
    }
    if (connectionId === null) continue;
    const type = typeOf.get(connectionId);
    // Same message whether the id is unknown or belongs to another workspace.
    if (!type) issues.push({ path, message: `connection ${connectionId} not found in this workspace` });
    else if (type !== decl.type)
      issues.push({
        path,
        message: `slot ${slot} needs a ${decl.type} connection; ${connectionId} is ${type}`,
      });
  }
  return issues;
}

/**
 * Binds (or, with null, unbinds) slots of a flow's target to connections of the same workspace. Only the given slots
 * change. The `draft` target accepts the draft's slots; `live` accepts the live version's and the draft's, so bindings
 * can be prepared before a release. Returns every binding of the target afterwards.
 */
export async function setFlowBindings(
  db: Database,
  workspaceId: string,
  slug: string,
  target: BindingTarget,
  slots: Record<string, string | null>,
): Promise<Record<string, string>> {
  const flow = await getFlow(db, workspaceId, slug);
  if (!flow) throw new AppError('not_found', `flow ${slug} not found`);
  const declared: RequiresSlot[] = [];
  const add = (model: FlowModel | null | undefined) => {
    for (const r of model?.requires ?? []) if (!declared.some((d) => d.slot === r.slot)) declared.push(r);
  };
  if (target === 'live' && flow.liveVersion !== null) add((await definitionOf(db, flow, 'live'))?.model);
  add(flow.draftModel as FlowModel | null);
  const issues = await checkSlotBindings(db, workspaceId, declared, slots, 'slots');
  if (issues.length > 0) throw new AppError('validation_failed', 'bindings are invalid', issues);
  return db.transaction(async (tx) => {
    const now = new Date();
    for (const [slot, connectionId] of Object.entries(slots)) {
      const where = and(
        eq(bindings.workspaceId, workspaceId),
        eq(bindings.flowId, flow.id),
        eq(bindings.target, target),
        eq(bindings.slot, slot),
      );
      if (connectionId === null) await tx.delete(bindings).where(where);
      else {
        await tx
          .insert(bindings)
          .values({ workspaceId, flowId: flow.id, target, slot, connectionId, updatedAt: now })
          .onConflictDoUpdate({
            target: [bindings.workspaceId, bindings.flowId, bindings.target, bindings.slot],
            set: { connectionId, updatedAt: now },
          });
      }
    }
    return bindingsOf(tx, workspaceId, flow.id, target);
  });
}

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
