import { LIVE_RUN_STATUSES, type QuotaPeriod, type RunStatus } from '@flowgate/core';
import { currentTraceparent, recordRunStarted } from '@flowgate/telemetry';
import { and, asc, desc, eq, gt, inArray, or, sql } from 'drizzle-orm';
import type { Executor as AnyExecutor, Database } from '../client.js';
import { executeRows } from '../rows.js';
import { runEvents, runSlots, runSteps, runs } from '../schema.js';
import { quotaLimitValue, releaseQuota, takeQuota } from './quotas.js';

/**
 * Runs as a workspace sees them: created by a start, read, listed and cancelled — every statement scoped by the
 * workspace id. What workers do with runs (claim, lease, journal, finish) is in run-queue.ts.
 */

export type RunRow = typeof runs.$inferSelect;
export type RunListRow = RunRow & { position: string };
export type RunStepRow = typeof runSteps.$inferSelect;
export type RunEventRow = typeof runEvents.$inferSelect;

export interface NewRun {
  id: string;
  flowId: string;
  flowSlug: string;
  definitionWorkspaceId: string;
  installationId: string | null;
  version: number | null;
  target: 'live' | 'draft';
  draftLiteral: string | null;
  toolName: string | null;
  invocation: string;
  input: unknown;
  secretInputs: string[];
  concurrencyKey: string | null;
  principalType: string | null;
  principalId: string | null;
  idempotencyKey: string | null;
  deadlineAt: Date | null;
  /** The starting request's `traceparent`; the active span's when absent. */
  traceContext?: string | null;
}

/** Advisory-lock namespace of the live-runs cap (the second key is the workspace id's hash). */
const LIVE_RUNS_LOCK_SPACE = 727_002;

/** What a capped start answers when the workspace is at its cap: nothing was inserted. */
export interface LiveRunsCapReached {
  capReached: true;
  live: number;
}

/** What a capped start answers when the workspace used its `runsPerMonth` quota: nothing was inserted. */
export interface RunsQuotaReached {
  quotaReached: true;
  limit: number;
}

/** The bounds of a capped start: the live-runs cap, and the period the `runsPerMonth` quota is counted in. */
export interface RunStartLimits {
  maxLive: number;
  runsQuotaPeriod?: QuotaPeriod;
}

/**
 * Queues a run. With an idempotency key already used in the workspace, nothing is inserted and the existing run is
 * returned (`created: false`), whatever the arguments: a retried start never makes a second run.
 *
 * With `lease`, the run is inserted as a claim by that worker would leave it (running, first attempt, leased): a
 * worker in the starting process takes it without a queue round. Only for a run without a concurrency key (a claim
 * takes the key's slot). Should that worker die, its lease expires and another worker takes the run over.
 *
 * With `maxLive`, the workspace's live runs are counted and the run inserted in one transaction holding a
 * per-workspace advisory lock: concurrent starts queue on the lock, so the cap holds exactly (a separate count and
 * insert let 200 concurrent starts overrun a cap of 20). At the cap a retry of an earlier start still gets its run.
 */
export async function createRun(
  db: Database,
  workspaceId: string,
  run: NewRun,
  lease?: { owner: string; leaseMs: number },
): Promise<{ run: RunRow; created: boolean }>;
export async function createRun(
  db: Database,
  workspaceId: string,
  run: NewRun,
  lease: { owner: string; leaseMs: number } | undefined,
  limit: RunStartLimits,
): Promise<{ run: RunRow; created: boolean } | LiveRunsCapReached | RunsQuotaReached>;
export async function createRun(
  db: Database,
  workspaceId: string,
  run: NewRun,
  lease?: { owner: string; leaseMs: number },
  limit?: RunStartLimits,
): Promise<{ run: RunRow; created: boolean } | LiveRunsCapReached | RunsQuotaReached> {
  if (lease && run.concurrencyKey !== null) throw new Error('a keyed run is started by a claim');
  const outcome = limit
    ? await oneAtATime(db, workspaceId, () =>
        db.transaction(async (tx) => {
          await tx.execute(
            sql`select pg_advisory_xact_lock(${LIVE_RUNS_LOCK_SPACE}, hashtext(${workspaceId}))`,
          );
          // Read after the lock (a statement of its own: its snapshot must see every start that held it before).
          const period = limit.runsQuotaPeriod;
          const { live, quota } = await liveRunsAndQuota(tx, workspaceId, period !== undefined);
          const existing = async () =>
            run.idempotencyKey === null ? null : await byIdempotencyKey(tx, workspaceId, run.idempotencyKey);
          if (live >= limit.maxLive) {
            const found = await existing();
            return found ? { run: found, created: false } : { capReached: true as const, live };
          }
          // The quota unit is taken in the insert's transaction: a start that is refused or rolled back uses none.
          if (
            period &&
            quota !== null &&
            !(await takeQuota(tx, workspaceId, 'runsPerMonth', period, quota))
          ) {
            const found = await existing();
            return found ? { run: found, created: false } : { quotaReached: true as const, limit: quota };
          }
          const inserted = await insertRun(tx, workspaceId, run, lease);
          // A retry of an earlier start made no run: its unit goes back.
          if (period && quota !== null && !inserted.created)
            await releaseQuota(tx, workspaceId, 'runsPerMonth', period);
          return inserted;
        }),
      )
    : await insertRun(db, workspaceId, run, lease);
  if ('run' in outcome && outcome.created) recordRunStarted();
  return outcome;
}

/** Capped starts waiting in this process, per database and workspace: the tail of each queue. */
const capQueues = new WeakMap<Database, Map<string, Promise<void>>>();

/**
 * Runs `fn` after every capped start of the workspace queued before it in this process, first come first served.
 * Concurrent starts would otherwise each take a pooled connection only to wait on the workspace's advisory lock: 50
 * of them held a pool of 10, and every other statement (claims, run ends, reads) queued behind them. The advisory lock
 * still orders starts across processes; here at most one connection per workspace waits on it.
 */
export async function oneAtATime<T>(db: Database, workspaceId: string, fn: () => Promise<T>): Promise<T> {
  let queues = capQueues.get(db);
  if (!queues) {
    queues = new Map();
    capQueues.set(db, queues);
  }
  const before = queues.get(workspaceId);
  let done!: () => void;
  const mine = new Promise<void>((resolve) => {
    done = resolve;
  });
  queues.set(workspaceId, mine);
  try {
    await before;
    return await fn();
  } finally {
    done();
    // The last in line leaves no entry behind: the map is as large as the workspaces starting runs now.
    if (queues.get(workspaceId) === mine) queues.delete(workspaceId);
  }
}

/** The query surface a run insert needs; the database or an open transaction. */
type Executor = Pick<Database, 'select' | 'insert'>;

async function insertRun(
  db: Executor,
  workspaceId: string,
  run: NewRun,
  lease: { owner: string; leaseMs: number } | undefined,
): Promise<{ run: RunRow; created: boolean }> {
  const state = lease
    ? {
        status: 'running' as const,
        leaseOwner: lease.owner,
        leaseExpiresAt: sql`now() + (${lease.leaseMs} * interval '1 millisecond')`,
        attempts: 1,
        startedAt: sql`now()`,
      }
    : { status: 'queued' as const };
  const inserted = await db
    .insert(runs)
    .values({ ...run, traceContext: run.traceContext ?? currentTraceparent(), workspaceId, ...state })
    .onConflictDoNothing()
    .returning();
  if (inserted[0]) return { run: inserted[0], created: true };
  if (run.idempotencyKey === null) throw new Error('run id collision');
  const existing = await byIdempotencyKey(db, workspaceId, run.idempotencyKey);
  if (!existing) throw new Error('idempotent run vanished');
  return { run: existing, created: false };
}

async function byIdempotencyKey(db: Executor, workspaceId: string, key: string): Promise<RunRow | null> {
  const [existing] = await db
    .select()
    .from(runs)
    .where(and(eq(runs.workspaceId, workspaceId), eq(runs.idempotencyKey, key)))
    .limit(1);
  return existing ?? null;
}

export async function getRun(db: Database, workspaceId: string, id: string): Promise<RunRow | null> {
  const rows = await db
    .select()
    .from(runs)
    .where(and(eq(runs.workspaceId, workspaceId), eq(runs.id, id)))
    .limit(1);
  return rows[0] ?? null;
}

/**
 * Newest first, optionally of one status and one flow. `position` is the row's exact (created_at, id) as text:
 * Postgres keeps microseconds, which a JS Date would round away and so skip rows created within the same millisecond.
 */
export async function listRuns(
  db: Database,
  workspaceId: string,
  page: {
    limit: number;
    before?: { createdAt: string; id: string } | undefined;
    status?: RunStatus | undefined;
    flowSlug?: string | undefined;
    /** Only the runs this principal started (MCP tasks/list shows a caller its own runs). */
    principal?: { type: string; id: string } | undefined;
  },
): Promise<RunListRow[]> {
  const conds = [eq(runs.workspaceId, workspaceId)];
  const b = page.before;
  if (b) conds.push(sql`(${runs.createdAt}, ${runs.id}) < (${b.createdAt}::timestamptz, ${b.id})`);
  if (page.status) conds.push(eq(runs.status, page.status));
  if (page.flowSlug) conds.push(eq(runs.flowSlug, page.flowSlug));
  if (page.principal)
    conds.push(eq(runs.principalType, page.principal.type), eq(runs.principalId, page.principal.id));
  const rows = await db
    .select({ run: runs, createdAtText: sql<string>`${runs.createdAt}::text` })
    .from(runs)
    .where(and(...conds))
    .orderBy(desc(runs.createdAt), desc(runs.id))
    .limit(page.limit);
  return rows.map((r) => ({ ...r.run, position: r.createdAtText }));
}

/** The steps of a run in the order they started (journal and failures). */
export async function listRunSteps(
  db: Database,
  workspaceId: string,
  runId: string,
  page: { limit: number },
): Promise<RunStepRow[]> {
  return db
    .select()
    .from(runSteps)
    .where(and(eq(runSteps.workspaceId, workspaceId), eq(runSteps.runId, runId)))
    .orderBy(asc(runSteps.startedAt), asc(runSteps.stepId))
    .limit(page.limit);
}

export async function getRunStep(
  db: Database,
  workspaceId: string,
  runId: string,
  stepId: string,
): Promise<RunStepRow | null> {
  const rows = await db
    .select()
    .from(runSteps)
    .where(and(eq(runSteps.workspaceId, workspaceId), eq(runSteps.runId, runId), eq(runSteps.stepId, stepId)))
    .limit(1);
  return rows[0] ?? null;
}

/** Events oldest first; `afterId` continues a page, `stepId` keeps one step's. */
export async function listRunEvents(
  db: Database,
  workspaceId: string,
  runId: string,
  page: { limit: number; afterId?: number | undefined; stepId?: string | undefined },
): Promise<RunEventRow[]> {
  const conds = [eq(runEvents.workspaceId, workspaceId), eq(runEvents.runId, runId)];
  if (page.afterId !== undefined) conds.push(gt(runEvents.id, page.afterId));
  if (page.stepId !== undefined) conds.push(eq(runEvents.stepId, page.stepId));
  return db
    .select()
    .from(runEvents)
    .where(and(...conds))
    .orderBy(asc(runEvents.id))
    .limit(page.limit);
}

/** Step ends (`step_completed`, `step_failed`) after `afterId`, oldest first: ids and statuses only, never detail. */
export async function listRunStepEnds(
  db: Database,
  workspaceId: string,
  runId: string,
  page: { limit: number; afterId: number | null },
): Promise<Array<{ id: number; stepId: string | null; status: string | null }>> {
  const conds = [
    eq(runEvents.workspaceId, workspaceId),
    eq(runEvents.runId, runId),
    inArray(runEvents.type, ['step_completed', 'step_failed']),
  ];
  if (page.afterId !== null) conds.push(gt(runEvents.id, page.afterId));
  return db
    .select({ id: runEvents.id, stepId: runEvents.stepId, status: runEvents.status })
    .from(runEvents)
    .where(and(...conds))
    .orderBy(asc(runEvents.id))
    .limit(page.limit);
}

/**
 * Cancels a run: a queued or waiting run ends `cancelled` at once (its concurrency slot is freed); a running run is
 * marked, and the worker holding it stops it at its next lease renewal. A finished run is returned unchanged.
 * `stopping` is true when the run was running and will end shortly; `ended` when this call ended it.
 */
export async function cancelRun(
  db: Database,
  workspaceId: string,
  runId: string,
): Promise<{ run: RunRow; stopping: boolean; freedSlot: boolean; ended: boolean } | null> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(runs)
      .where(and(eq(runs.workspaceId, workspaceId), eq(runs.id, runId)))
      .for('update')
      .limit(1);
    if (!row) return null;
    if (row.status === 'queued' || row.status === 'waiting') {
      const [done] = await tx
        .update(runs)
        .set({
          status: 'cancelled',
          error: { code: 'run_cancelled', message: 'the run was cancelled' },
          finishedAt: new Date(),
          updatedAt: new Date(),
          wakeAt: null,
        })
        .where(and(eq(runs.workspaceId, workspaceId), eq(runs.id, runId)))
        .returning();
      const freed = await tx
        .delete(runSlots)
        .where(and(eq(runSlots.workspaceId, workspaceId), eq(runSlots.runId, runId)))
        .returning();
      await tx.insert(runEvents).values({
        workspaceId,
        runId,
        type: 'run_cancelled',
        status: 'cancelled',
        detail: { before: row.status },
      });
      return { run: done as RunRow, stopping: false, freedSlot: freed.length > 0, ended: true };
    }
    if (row.status === 'running') {
      const [marked] = await tx
        .update(runs)
        .set({ cancelRequested: true, updatedAt: new Date() })
        .where(and(eq(runs.workspaceId, workspaceId), eq(runs.id, runId)))
        .returning();
      return { run: marked as RunRow, stopping: true, freedSlot: false, ended: false };
    }
    return { run: row, stopping: false, freedSlot: false, ended: false };
  });
}

/**
 * Ends the queued runs of older versions that share a `:concurrency` key with a newer start (`:on-new-version
 * :supersede`): they will never run.
 */
export async function supersedeQueuedRuns(
  db: Database,
  workspaceId: string,
  concurrencyKey: string,
  newVersion: number,
): Promise<string[]> {
  const rows = await db
    .update(runs)
    .set({
      status: 'cancelled',
      error: { code: 'run_superseded', message: 'a newer version of the flow was started with the same key' },
      finishedAt: new Date(),
      updatedAt: new Date(),
    })
    .where(
      and(
        eq(runs.workspaceId, workspaceId),
        eq(runs.concurrencyKey, concurrencyKey),
        eq(runs.status, 'queued'),
        sql`coalesce(${runs.version}, 0) < ${newVersion}`,
      ),
    )
    .returning({ id: runs.id });
  const ids = rows.map((r) => r.id);
  if (ids.length) {
    await db.insert(runEvents).values(
      ids.map((runId) => ({
        workspaceId,
        runId,
        type: 'run_cancelled',
        status: 'cancelled',
        detail: { reason: 'superseded' },
      })),
    );
  }
  return ids;
}

/** How many runs of a workspace are live (queued, running, waiting): the bound on what one workspace may queue. */
/**
 * The workspace's live runs. Spelled as ORed equalities, not `in (...)`: each matches a live status's partial index,
 * so the count reads only live runs (with `in`, the plan scans every run the workspace ever had).
 */
function liveRunsOf(workspaceId: string) {
  return and(eq(runs.workspaceId, workspaceId), or(...LIVE_RUN_STATUSES.map((s) => eq(runs.status, s))));
}

export async function countLiveRuns(db: Executor, workspaceId: string): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(runs).where(liveRunsOf(workspaceId));
  return row?.n ?? 0;
}

/** The live runs and, when asked, the runs-per-month quota (null: none), in one round trip. */
async function liveRunsAndQuota(
  db: AnyExecutor,
  workspaceId: string,
  withQuota: boolean,
): Promise<{ live: number; quota: number | null }> {
  const quota = withQuota ? quotaLimitValue(workspaceId, 'runsPerMonth') : sql`null::int`;
  const [row] = await executeRows<{ live: number; quota: number | null }>(
    db,
    sql`select (select count(*)::int from ${runs} where ${liveRunsOf(workspaceId)}) as live, ${quota} as quota`,
  );
  return {
    live: Number(row?.live ?? 0),
    quota: row?.quota === null || row?.quota === undefined ? null : Number(row.quota),
  };
}
