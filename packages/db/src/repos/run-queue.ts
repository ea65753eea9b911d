import type { StepStatus } from '@flowgate/core';
import { recordLeaseTakeovers } from '@flowgate/telemetry';
import { and, eq, getTableColumns, inArray, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { runSteps, runs } from '../schema.js';
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

/** A `runs` row as a raw statement returns it (snake_case, timestamps as text) in the query builder's shape. */
function runRowOf(raw: Record<string, unknown>): RunRow {
  const row: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(runs))) {
    const value = raw[column.name];
    row[key] =
      value === null || value === undefined
        ? null
        : column.getSQLType().startsWith('timestamp')
          ? column.mapFromDriverValue(value)
          : value;
  }
  return row as RunRow;
}

/**
 * Claims up to `limit` runs for `owner`, oldest first, each leased for `leaseMs`: one statement. Candidates are
 * locked only as many as are wanted (a claim that locked spare rows would make a concurrent claim skip them and come
 * back empty while runs wait); a queued run whose key another run holds is not a candidate, and one that loses the
 * race for its key's slot (to a concurrent claim, or to an older run of the same key in this batch) stays queued.
 */
export async function claimRuns(
  db: Database,
  options: { owner: string; leaseMs: number; limit: number },
): Promise<RunRow[]> {
  const rows = await db.statements.rows<Record<string, unknown>>(sql`
    with c as (
      select r.id, r.workspace_id, r.status as prev_status, r.concurrency_key from runs r
      where (r.status = 'queued' or (r.status = 'waiting' and r.wake_at <= now())
          or (r.status = 'running' and r.lease_expires_at < now()))
        and not (r.status = 'queued' and r.concurrency_key is not null and exists (
          select 1 from run_slots s where s.workspace_id = r.workspace_id and s.concurrency_key = r.concurrency_key))
      order by r.created_at, r.id
      limit ${options.limit}
      for update of r skip locked
    ), slot as (
      insert into run_slots (workspace_id, concurrency_key, run_id)
      select c.workspace_id, c.concurrency_key, c.id from c where c.prev_status = 'queued' and c.concurrency_key is not null
      on conflict do nothing
      returning run_id
    )
    update runs set status = 'running', lease_owner = ${options.owner},
      lease_expires_at = now() + (${options.leaseMs} * interval '1 millisecond'), attempts = runs.attempts + 1,
      started_at = coalesce(runs.started_at, now()), wake_at = null, updated_at = now()
    from c
    where runs.id = c.id
      and (c.prev_status <> 'queued' or c.concurrency_key is null or c.id in (select run_id from slot))
    returning runs.*, c.prev_status`);
  // Sleeping and taken-over runs already hold their slot; a running run is claimable only once its holder's lease
  // expired: another worker takes it over.
  const takeovers = rows.filter((r) => r.prev_status === 'running').length;
  if (rows.length) recordLeaseTakeovers(takeovers);
  return rows
    .map(runRowOf)
    .sort(
      (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
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
  status: StepStatus;
  /** JSON (the stored result of a completed step). */
  result?: unknown;
  error?: { code: string; message: string; stepId?: string } | null;
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

/**
 * Appends events while the lease holds; false when it is lost. With `notifyChannel` the run's id is notified on it
 * when they were written (whoever follows the run reads them then).
 */
export async function appendEvents(
  db: Database,
  lease: Lease,
  events: EventRecord[],
  notifyChannel?: string,
): Promise<boolean> {
  if (events.length === 0) return true;
  const values = events.map(
    (e) =>
      sql`(${lease.workspaceId}, ${lease.runId}, ${e.type}, ${e.stepId ?? null}, ${e.stepType ?? null},
        ${e.status ?? null}, ${e.detail === undefined ? null : JSON.stringify(e.detail)}::jsonb,
        ${(e.at ?? new Date()).toISOString()}::timestamptz)`,
  );
  const insert = sql`
    insert into run_events (workspace_id, run_id, type, step_id, step_type, status, detail, at)
    select v.* from (values ${sql.join(values, sql`, `)})
      as v(workspace_id, run_id, type, step_id, step_type, status, detail, at)
    where ${stillHeld(lease)}
    returning 1 as ok`;
  if (!notifyChannel) {
    const rows = await db.statements.rows<{ ok: number }>(insert);
    return rows.length === events.length;
  }
  // The run's id goes out with the commit, in the same round trip, and only when the events were written.
  const [row] = await db.statements.rows<{ n: number }>(sql`
    with ins as (${insert})
    select n::int as n, case when n > 0 then pg_notify(${notifyChannel}, ${lease.runId}) end as notified
    from (select count(*) as n from ins) c`);
  return Number(row?.n ?? 0) === events.length;
}

/** A completed pure step's journal entry, held by its worker until the attempt's next write. */
export interface CompletedStep {
  stepId: string;
  type: string;
  result: unknown;
  startedAt: Date | null;
  finishedAt: Date;
}

export type RunEnd =
  | { status: 'completed'; result: unknown; resultMime: string }
  | {
      status: 'failed' | 'timed-out' | 'cancelled';
      error: { code: string; message: string; stepId?: string };
    }
  | { status: 'waiting'; wakeAt: Date };

/**
 * Ends an attempt while the lease holds: a final state frees the run's concurrency slot; `waiting` parks the run
 * until its wake time, keeping the slot. The attempt's last journal entries (completed pure steps its worker held
 * back) and events go with it: one statement, one round trip. Returns the run as it now is; null when the lease was
 * lost (another worker owns the run now, or it was cancelled while queued): nothing was written.
 */
export async function finishAttempt(
  db: Database,
  lease: Lease,
  end: RunEnd,
  usage: Record<string, number>,
  event: EventRecord | EventRecord[],
  steps: CompletedStep[] = [],
  /** NOTIFY this channel with the run's id when it applies (delivered at commit, no round trip of its own). */
  notifyChannel?: string,
): Promise<{ run: RunRow; freedSlot: boolean } | null> {
  const events = Array.isArray(event) ? event : [event];
  const set =
    end.status === 'waiting'
      ? sql`status = 'waiting', wake_at = ${iso(end.wakeAt)}::timestamptz`
      : end.status === 'completed'
        ? sql`status = 'completed', result = ${JSON.stringify(end.result)}::jsonb, result_mime = ${end.resultMime},
            error = null, finished_at = now()`
        : sql`status = ${end.status}, error = ${JSON.stringify(end.error)}::jsonb, finished_at = now()`;
  const values = events.map(
    (e, i) =>
      sql`(${i}::int, ${e.type}, ${e.stepId ?? null}, ${e.stepType ?? null}, ${e.status ?? null},
        ${e.detail === undefined || e.detail === null ? null : JSON.stringify(e.detail)}::jsonb, ${iso(e.at)}::timestamptz)`,
  );
  // A journal entry written here counts its step's start, as recordStep does for a pure step (no `running` row).
  const journal = steps.length
    ? sql`, st as (
      insert into run_steps (workspace_id, run_id, step_id, type, status, result, attempts, started_at, finished_at)
      select u.workspace_id, u.id, v.step_id, v.type, 'completed', v.result, 1, v.started_at, v.finished_at
      from u, (values ${sql.join(
        steps.map(
          (s) =>
            sql`(${s.stepId}, ${s.type}, ${JSON.stringify(s.result)}::jsonb, ${iso(s.startedAt)}::timestamptz,
              ${iso(s.finishedAt)}::timestamptz)`,
        ),
        sql`, `,
      )}) as v(step_id, type, result, started_at, finished_at)
      on conflict (run_id, step_id) do update set status = 'completed', result = excluded.result, error = null,
        wake_at = null, attempts = run_steps.attempts + 1,
        started_at = coalesce(run_steps.started_at, excluded.started_at), finished_at = excluded.finished_at
    )`
    : sql``;
  // Every part applies only when the update found the lease held: the statement is atomic, all or nothing.
  const [row] = await db.statements.rows<Record<string, unknown>>(sql`
    with u as (
      update runs set ${set}, lease_owner = null, lease_expires_at = null,
        usage = ${JSON.stringify(usage)}::jsonb, updated_at = now()
      where workspace_id = ${lease.workspaceId} and id = ${lease.runId} and lease_owner = ${lease.owner}
        and status = 'running'
      returning *
    ), freed as (
      delete from run_slots s using u
      where u.status <> 'waiting' and u.concurrency_key is not null
        and s.workspace_id = u.workspace_id and s.run_id = u.id
      returning s.run_id
    ), ev as (
      insert into run_events (workspace_id, run_id, type, step_id, step_type, status, detail, at)
      select u.workspace_id, u.id, v.type, v.step_id, v.step_type, v.status, v.detail, coalesce(v.at, now())
      from u, (values ${sql.join(values, sql`, `)}) as v(ord, type, step_id, step_type, status, detail, at)
      order by v.ord
    )${journal}
    select u.*, (select count(*) from freed)::int as freed_slots
      ${notifyChannel ? sql`, pg_notify(${notifyChannel}, u.id) as notified` : sql``} from u`);
  return row ? { run: runRowOf(row), freedSlot: Number(row.freed_slots) > 0 } : null;
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
