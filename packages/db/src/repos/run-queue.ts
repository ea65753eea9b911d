import { recordLeaseTakeovers } from '@flowgate/telemetry';
import { and, asc, eq, inArray, lt, lte, notInArray, or, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { type RunStatus, runEvents, runSlots, runSteps, runs } from '../schema.js';
import type { RunRow } from './runs.js';

/**
 * The run queue: how workers claim runs, hold them, write what they did and hand them back. Every worker shares one
 * database; nothing else coordinates them.
 *
 * - A claim takes runs that are queued, sleeping and due, or running under an expired lease (the worker holding it
 *   died or stalled), with `FOR UPDATE SKIP LOCKED`, so concurrent claims never take the same run.
 * - A claimed run carries a lease (owner + expiry) its worker renews. Every write about the run — journal entries,
 *   events, the final state — is fenced by the lease: it applies only while that worker still holds it, so a worker
 *   that lost its lease (and whose run was taken over) can no longer record anything.
 * - `:concurrency`: a run with a key may start only by taking the key's row in `run_slots`; its primary key makes two
 *   claims of one key wait for each other, and the loser skips the run. The slot is held while the run runs or
 *   sleeps and freed when it ends.
 */

export interface Lease {
  runId: string;
  workspaceId: string;
  owner: string;
}

/** Dates travel as ISO text: both drivers send text parameters the same way. */
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

const leaseUntil = (leaseMs: number): SQL => sql`now() + (${leaseMs} * interval '1 millisecond')`;

/** The live-run conditions a worker may claim. */
const CLAIMABLE = or(
  eq(runs.status, 'queued'),
  and(eq(runs.status, 'waiting'), lte(runs.wakeAt, sql`now()`)),
  and(eq(runs.status, 'running'), lt(runs.leaseExpiresAt, sql`now()`)),
);

/** Runs waiting for a worker: queued, due to wake, or held under an expired lease (the queue-depth metric). */
export async function countClaimable(db: Database): Promise<number> {
  const [row] = await db.select({ n: sql<number>`count(*)::int` }).from(runs).where(CLAIMABLE);
  return Number(row?.n ?? 0);
}

/** Claims up to `limit` runs for `owner`, oldest first, each leased for `leaseMs`. */
export async function claimRuns(
  db: Database,
  options: { owner: string; leaseMs: number; limit: number },
): Promise<RunRow[]> {
  return db.transaction(async (tx) => {
    const claimed: string[] = [];
    const seen: string[] = [];
    let takeovers = 0;
    // Candidates are locked only as many at a time as are still wanted: a claim that locked spare rows would make a
    // concurrent claim skip them and come back empty while runs wait. Runs whose key is busy are passed over (and
    // stay locked until commit, unclaimable anyway), so the next batch looks further; bounded like one 4× read.
    for (let batch = 0; batch < 4 && claimed.length < options.limit; batch++) {
      const candidates = await tx
        .select({
          id: runs.id,
          workspaceId: runs.workspaceId,
          status: runs.status,
          concurrencyKey: runs.concurrencyKey,
        })
        .from(runs)
        .where(seen.length ? and(CLAIMABLE, notInArray(runs.id, seen)) : CLAIMABLE)
        .orderBy(asc(runs.createdAt), asc(runs.id))
        .limit(options.limit - claimed.length)
        .for('update', { skipLocked: true });
      if (candidates.length === 0) break;
      for (const c of candidates) {
        seen.push(c.id);
        // Sleeping and taken-over runs already hold their slot; only a queued run must take one.
        if (c.status === 'queued' && c.concurrencyKey !== null) {
          const slot = await tx
            .insert(runSlots)
            .values({ workspaceId: c.workspaceId, concurrencyKey: c.concurrencyKey, runId: c.id })
            .onConflictDoNothing()
            .returning({ runId: runSlots.runId });
          if (slot.length === 0) continue;
        }
        claimed.push(c.id);
        // A running run is claimable only once its holder's lease expired: another worker takes it over.
        if (c.status === 'running') takeovers++;
      }
    }
    if (claimed.length === 0) return [];
    recordLeaseTakeovers(takeovers);
    return tx
      .update(runs)
      .set({
        status: 'running',
        leaseOwner: options.owner,
        leaseExpiresAt: leaseUntil(options.leaseMs),
        attempts: sql`${runs.attempts} + 1`,
        startedAt: sql`coalesce(${runs.startedAt}, now())`,
        wakeAt: null,
        updatedAt: sql`now()`,
      })
      .where(inArray(runs.id, claimed))
      .returning();
  });
}

/**
 * Extends a lease. Null when the lease is lost (taken over, or the run ended): the worker must stop recording.
 * `cancelRequested` tells it to stop the run.
 */
export async function renewLease(
  db: Database,
  lease: Lease,
  leaseMs: number,
): Promise<{ cancelRequested: boolean } | null> {
  const rows = await db
    .update(runs)
    .set({ leaseExpiresAt: leaseUntil(leaseMs), updatedAt: sql`now()` })
    .where(held(lease))
    .returning({ cancelRequested: runs.cancelRequested });
  return rows[0] ?? null;
}

function held(lease: Lease): SQL | undefined {
  return and(
    eq(runs.workspaceId, lease.workspaceId),
    eq(runs.id, lease.runId),
    eq(runs.leaseOwner, lease.owner),
    eq(runs.status, 'running'),
  );
}

/** `where exists` the lease, for single-statement fenced writes. */
function stillHeld(lease: Lease): SQL {
  return sql`exists (select 1 from runs r where r.workspace_id = ${lease.workspaceId} and r.id = ${lease.runId}
    and r.lease_owner = ${lease.owner} and r.status = 'running')`;
}

/** The journal entries replay reads: completed results and durable waits. */
export async function loadJournal(
  db: Database,
  workspaceId: string,
  runId: string,
): Promise<
  Array<{
    stepId: string;
    type: string;
    status: 'completed' | 'waiting';
    result: unknown;
    wakeAt: Date | null;
  }>
> {
  const rows = await db
    .select({
      stepId: runSteps.stepId,
      type: runSteps.type,
      status: runSteps.status,
      result: runSteps.result,
      wakeAt: runSteps.wakeAt,
    })
    .from(runSteps)
    .where(
      and(
        eq(runSteps.workspaceId, workspaceId),
        eq(runSteps.runId, runId),
        inArray(runSteps.status, ['completed', 'waiting']),
      ),
    );
  return rows as Array<{
    stepId: string;
    type: string;
    status: 'completed' | 'waiting';
    result: unknown;
    wakeAt: Date | null;
  }>;
}

export interface StepRecord {
  stepId: string;
  type: string;
  status: 'running' | 'completed' | 'waiting' | 'failed';
  /** JSON (the stored result of a completed step). */
  result?: unknown;
  error?: { code: string; message: string } | null;
  wakeAt?: Date | null;
  startedAt?: Date | null;
  finishedAt?: Date | null;
  /** This write also counts a start: a step with no `running` row of its own (a pure step) starts and ends in one. */
  countsStart?: boolean;
}

/**
 * Writes one step row (insert or update) while the lease holds. False when the lease is lost: nothing was written.
 * A step that starts again (after a crash) keeps its first start time and counts one more attempt.
 */
export async function recordStep(db: Database, lease: Lease, step: StepRecord): Promise<boolean> {
  const result = step.result === undefined ? null : JSON.stringify(step.result);
  const error = step.error ? JSON.stringify(step.error) : null;
  const startsCounted = step.status === 'running' || step.countsStart === true ? 1 : 0;
  const rows = await db.statements.rows<{ ok: number }>(sql`
    insert into run_steps (workspace_id, run_id, step_id, type, status, result, error, wake_at, attempts, started_at, finished_at)
    select ${lease.workspaceId}, ${lease.runId}, ${step.stepId}, ${step.type}, ${step.status}, ${result}::jsonb,
      ${error}::jsonb, ${iso(step.wakeAt)}::timestamptz, ${startsCounted},
      ${iso(step.startedAt)}::timestamptz, ${iso(step.finishedAt)}::timestamptz
    where ${stillHeld(lease)}
    on conflict (run_id, step_id) do update set
      status = excluded.status,
      result = coalesce(excluded.result, run_steps.result),
      error = excluded.error,
      wake_at = excluded.wake_at,
      attempts = run_steps.attempts + ${startsCounted},
      started_at = coalesce(run_steps.started_at, excluded.started_at),
      finished_at = excluded.finished_at
    returning 1 as ok`);
  return rows.length > 0;
}

export interface EventRecord {
  type: string;
  stepId?: string | null;
  stepType?: string | null;
  status?: string | null;
  detail?: unknown;
  at?: Date;
}

/** Appends events while the lease holds; false when it is lost. */
export async function appendEvents(db: Database, lease: Lease, events: EventRecord[]): Promise<boolean> {
  if (events.length === 0) return true;
  const values = events.map(
    (e) =>
      sql`(${lease.workspaceId}, ${lease.runId}, ${e.type}, ${e.stepId ?? null}, ${e.stepType ?? null},
        ${e.status ?? null}, ${e.detail === undefined ? null : JSON.stringify(e.detail)}::jsonb,
        ${(e.at ?? new Date()).toISOString()}::timestamptz)`,
  );
  const rows = await db.statements.rows<{ ok: number }>(sql`
    insert into run_events (workspace_id, run_id, type, step_id, step_type, status, detail, at)
    select v.* from (values ${sql.join(values, sql`, `)})
      as v(workspace_id, run_id, type, step_id, step_type, status, detail, at)
    where ${stillHeld(lease)}
    returning 1 as ok`);
  return rows.length === events.length;
}

export type RunEnd =
  | { status: 'completed'; result: unknown; resultMime: string }
  | { status: 'failed' | 'timed-out' | 'cancelled'; error: { code: string; message: string } }
  | { status: 'waiting'; wakeAt: Date };

/**
 * Ends an attempt while the lease holds: a final state frees the run's concurrency slot; `waiting` parks the run
 * until its wake time, keeping the slot. The last event is written in the same transaction. Null when the lease was
 * lost (another worker owns the run now, or it was cancelled while queued).
 */
export async function finishAttempt(
  db: Database,
  lease: Lease,
  end: RunEnd,
  usage: Record<string, number>,
  event: EventRecord | EventRecord[],
): Promise<{ run: RunRow; freedSlot: boolean } | null> {
  const events = Array.isArray(event) ? event : [event];
  return db.transaction(async (tx) => {
    const common = { leaseOwner: null, leaseExpiresAt: null, usage, updatedAt: sql`now()` };
    const set =
      end.status === 'waiting'
        ? { ...common, status: 'waiting' as RunStatus, wakeAt: end.wakeAt }
        : end.status === 'completed'
          ? {
              ...common,
              status: 'completed' as RunStatus,
              result: end.result,
              resultMime: end.resultMime,
              error: null,
              finishedAt: sql`now()`,
            }
          : { ...common, status: end.status as RunStatus, error: end.error, finishedAt: sql`now()` };
    const [run] = await tx.update(runs).set(set).where(held(lease)).returning();
    if (!run) return null;
    let freedSlot = false;
    // Only a run with a concurrency key can hold a slot.
    if (end.status !== 'waiting' && run.concurrencyKey !== null) {
      const freed = await tx
        .delete(runSlots)
        .where(and(eq(runSlots.workspaceId, lease.workspaceId), eq(runSlots.runId, lease.runId)))
        .returning({ runId: runSlots.runId });
      freedSlot = freed.length > 0;
    }
    // The attempt's last events (those its worker held back, then the end) in one statement.
    await tx.insert(runEvents).values(
      events.map((e) => ({
        workspaceId: lease.workspaceId,
        runId: lease.runId,
        type: e.type,
        stepId: e.stepId ?? null,
        stepType: e.stepType ?? null,
        status: e.status ?? null,
        detail: e.detail ?? null,
        ...(e.at ? { at: e.at } : {}),
      })),
    );
    return { run, freedSlot };
  });
}

/** Hands a run back before its lease ends (graceful shutdown): any worker may take it over at once, by replay. */
export async function releaseLease(db: Database, lease: Lease): Promise<boolean> {
  const rows = await db
    .update(runs)
    .set({ leaseOwner: null, leaseExpiresAt: sql`now() - interval '1 millisecond'`, updatedAt: sql`now()` })
    .where(held(lease))
    .returning({ id: runs.id });
  return rows.length > 0;
}

/**
 * When the next run may become claimable without anyone starting one: the earliest due sleep or lease expiry (now,
 * when something is claimable already). Null when nothing is live.
 */
export async function nextDueAt(db: Database): Promise<Date | null> {
  // A queued run whose key another run holds is not due: it becomes claimable when that run ends (which wakes workers).
  const [row] = await db.statements.rows<{ due: number | null }>(sql`
    select (extract(epoch from least(
      (select now() from runs q where q.status = 'queued' and (q.concurrency_key is null or not exists (
        select 1 from run_slots s where s.workspace_id = q.workspace_id and s.concurrency_key = q.concurrency_key))
        limit 1),
      (select min(wake_at) from runs where status = 'waiting'),
      (select min(lease_expires_at) from runs where status = 'running')
    )) * 1000)::float8 as due`);
  return row?.due == null ? null : new Date(row.due);
}
