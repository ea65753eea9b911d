import { and, desc, eq, gte, inArray, lt, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { executeRows } from '../rows.js';
import { USAGE_DURATION_BOUNDS_MS, usageBatches, usageCalls, usageRuns } from '../schema.js';

export const USAGE_BUCKETS = USAGE_DURATION_BOUNDS_MS.length;
export type UsageCallOutcome = 'ok' | 'error' | 'blocked' | 'rate_limited';

/** What one batch adds to one `usage_calls` row. */
export interface UsageCallDelta {
  workspaceId: string;
  /** Start of the UTC hour. */
  hour: Date;
  method: string;
  tool: string;
  principal: string;
  client: string;
  outcome: UsageCallOutcome;
  count: number;
  /** Calls per duration bucket (`USAGE_DURATION_BOUNDS_MS`), `USAGE_BUCKETS` long. */
  durations: number[];
}

/** What one batch adds to one `usage_runs` row. */
/** What `usage_runs` counts per flow and hour. */
export interface UsageRunCounts {
  started: number;
  completed: number;
  failed: number;
  cancelled: number;
  steps: number;
  httpCalls: number;
  llmTokens: number;
}

/** Every run count at zero, for a row about to be added to. */
export const NO_RUN_COUNTS: Readonly<UsageRunCounts> = Object.freeze({
  started: 0,
  completed: 0,
  failed: 0,
  cancelled: 0,
  steps: 0,
  httpCalls: 0,
  llmTokens: 0,
});

export interface UsageRunDelta extends UsageRunCounts {
  workspaceId: string;
  hour: Date;
  flow: string;
}

export interface UsageBatch {
  /** Unique per batch, kept across retries of it. */
  id: string;
  calls: UsageCallDelta[];
  runs: UsageRunDelta[];
}

/** The bucket a duration falls in: the first whose upper bound it does not exceed. */
export function usageBucketOf(durationMs: number): number {
  for (let i = 0; i < USAGE_BUCKETS; i++) {
    const bound = USAGE_DURATION_BOUNDS_MS[i];
    if (bound === null || bound === undefined || durationMs <= bound) return i;
  }
  return USAGE_BUCKETS - 1;
}

/** Start of the UTC hour `at` falls in. */
export function usageHourOf(at: Date | number): Date {
  const t = typeof at === 'number' ? at : at.getTime();
  return new Date(t - (((t % 3_600_000) + 3_600_000) % 3_600_000));
}

const BUCKET_COLUMNS = ['d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10', 'd11'] as const;

const callKey = (d: UsageCallDelta) =>
  JSON.stringify([d.workspaceId, d.hour.getTime(), d.method, d.tool, d.principal, d.client, d.outcome]);
const runKey = (d: UsageRunDelta) => JSON.stringify([d.workspaceId, d.hour.getTime(), d.flow]);

/** One row per key (a statement may not update one row twice), sorted so concurrent batches lock rows in one order. */
function mergeCalls(deltas: UsageCallDelta[]): UsageCallDelta[] {
  const byKey = new Map<string, UsageCallDelta>();
  for (const d of deltas) {
    const k = callKey(d);
    const seen = byKey.get(k);
    if (!seen) byKey.set(k, { ...d, durations: [...d.durations] });
    else {
      seen.count += d.count;
      for (let i = 0; i < USAGE_BUCKETS; i++)
        seen.durations[i] = (seen.durations[i] ?? 0) + (d.durations[i] ?? 0);
    }
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
}

function mergeRuns(deltas: UsageRunDelta[]): UsageRunDelta[] {
  const byKey = new Map<string, UsageRunDelta>();
  for (const d of deltas) {
    const k = runKey(d);
    const seen = byKey.get(k);
    if (!seen) byKey.set(k, { ...d });
    else {
      seen.started += d.started;
      seen.completed += d.completed;
      seen.failed += d.failed;
      seen.cancelled += d.cancelled;
      seen.steps += d.steps;
      seen.httpCalls += d.httpCalls;
      seen.llmTokens += d.llmTokens;
    }
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, d]) => d);
}

const BUCKETS_SQL = BUCKET_COLUMNS.join(', ');
const BUCKET_TYPES = BUCKET_COLUMNS.map((c) => `${c} int`).join(', ');
const BUCKET_ADDS = BUCKET_COLUMNS.map((c) => `${c} = usage_calls.${c} + excluded.${c}`).join(', ');

/**
 * The whole batch in one statement (data-modifying CTEs): the batch id's insert gates both upserts, and a statement
 * is atomic on its own. One round trip, so on the embedded database (one connection) no transaction stays open
 * across messages while the gateway's other statements wait behind it.
 */
const APPLY_BATCH = (id: string, calls: string, runs: string) => sql`
  with fresh as (
    insert into usage_batches (id) values (${id}) on conflict do nothing returning id
  ), calls as (
    insert into usage_calls (workspace_id, hour, method, tool, principal, client, outcome, count, ${sql.raw(BUCKETS_SQL)})
    select c.workspace_id, c.hour, c.method, c.tool, c.principal, c.client, c.outcome, c.count, ${sql.raw(BUCKETS_SQL)}
    from jsonb_to_recordset(${calls}::jsonb) as c(workspace_id text, hour timestamptz, method text, tool text,
      principal text, client text, outcome text, count int, ${sql.raw(BUCKET_TYPES)})
    where exists (select 1 from fresh)
    order by c.workspace_id, c.hour, c.method, c.tool, c.principal, c.client, c.outcome
    on conflict (workspace_id, hour, method, tool, principal, client, outcome) do update
      set count = usage_calls.count + excluded.count, ${sql.raw(BUCKET_ADDS)}
  ), runs as (
    insert into usage_runs (workspace_id, hour, flow, started, completed, failed, cancelled, steps, http_calls, llm_tokens)
    select r.workspace_id, r.hour, r.flow, r.started, r.completed, r.failed, r.cancelled, r.steps, r.http_calls,
      r.llm_tokens
    from jsonb_to_recordset(${runs}::jsonb) as r(workspace_id text, hour timestamptz, flow text, started int,
      completed int, failed int, cancelled int, steps int, http_calls int, llm_tokens bigint)
    where exists (select 1 from fresh)
    order by r.workspace_id, r.hour, r.flow
    on conflict (workspace_id, hour, flow) do update set
      started = usage_runs.started + excluded.started, completed = usage_runs.completed + excluded.completed,
      failed = usage_runs.failed + excluded.failed, cancelled = usage_runs.cancelled + excluded.cancelled,
      steps = usage_runs.steps + excluded.steps, http_calls = usage_runs.http_calls + excluded.http_calls,
      llm_tokens = usage_runs.llm_tokens + excluded.llm_tokens
  )
  select count(*)::int as applied from fresh`;

function callRows(deltas: UsageCallDelta[]): string {
  return JSON.stringify(
    deltas.map((d) => {
      const row: Record<string, unknown> = {
        workspace_id: d.workspaceId,
        hour: d.hour.toISOString(),
        method: d.method,
        tool: d.tool,
        principal: d.principal,
        client: d.client,
        outcome: d.outcome,
        count: d.count,
      };
      for (const [b, column] of BUCKET_COLUMNS.entries()) row[column] = d.durations[b] ?? 0;
      return row;
    }),
  );
}

function runRows(deltas: UsageRunDelta[]): string {
  return JSON.stringify(
    deltas.map((d) => ({
      workspace_id: d.workspaceId,
      hour: d.hour.toISOString(),
      flow: d.flow,
      started: d.started,
      completed: d.completed,
      failed: d.failed,
      cancelled: d.cancelled,
      steps: d.steps,
      http_calls: d.httpCalls,
      llm_tokens: d.llmTokens,
    })),
  );
}

/**
 * Adds a batch to the rollups, once: its id is recorded in the same statement, so a batch retried after its
 * acknowledgement was lost adds nothing again. `duplicate` when it had already been applied.
 */
export async function applyUsageBatch(db: Database, batch: UsageBatch): Promise<'applied' | 'duplicate'> {
  const [row] = await executeRows<{ applied: number | string }>(
    db,
    APPLY_BATCH(batch.id, callRows(mergeCalls(batch.calls)), runRows(mergeRuns(batch.runs))),
  );
  return Number(row?.applied ?? 0) > 0 ? 'applied' : 'duplicate';
}

/**
 * Deletes rollup hours before `before`, one hour per statement (oldest first), so a large prune (a shortened
 * retention) holds neither many locks nor a long transaction at once; returns how many rows went.
 */
export async function pruneUsageBefore(db: Database, before: Date): Promise<number> {
  let deleted = 0;
  for (const table of [usageCalls, usageRuns] as const) {
    for (;;) {
      const [oldest] = await db
        .select({
          hour: sql<Date | null>`min(${table.hour})`.mapWith((v) => (v === null ? null : new Date(v))),
        })
        .from(table)
        .where(lt(table.hour, before));
      const hour = oldest?.hour;
      if (!hour) break;
      const rows = await db.delete(table).where(eq(table.hour, hour)).returning({ hour: table.hour });
      deleted += rows.length;
    }
  }
  return deleted;
}

/** Forgets batch ids applied before `before` (no retry comes that late); returns how many went. */
export async function pruneUsageBatchesBefore(db: Database, before: Date): Promise<number> {
  const rows = await db
    .delete(usageBatches)
    .where(lt(usageBatches.appliedAt, before))
    .returning({ id: usageBatches.id });
  return rows.length;
}

// ---- reads ----

export type UsageUnit = 'hour' | 'day';
export type UsageCallDimension = 'method' | 'tool' | 'principal' | 'client' | 'outcome';

export interface UsageRange {
  /** Inclusive; hours starting at or after it. */
  from: Date;
  /** Exclusive. */
  to: Date;
}

const num = (expr: SQL) => sql`coalesce(${expr}, 0)`.mapWith(Number);
const epochOf = (unit: UsageUnit, column: SQL | typeof usageCalls.hour | typeof usageRuns.hour) =>
  sql`extract(epoch from date_trunc(${sql.raw(`'${unit}'`)}, ${column}, 'UTC'))::float8`.mapWith(Number);

const callDimension = (dim: UsageCallDimension) =>
  ({
    method: usageCalls.method,
    tool: usageCalls.tool,
    principal: usageCalls.principal,
    client: usageCalls.client,
    outcome: usageCalls.outcome,
  })[dim];

const callsWhere = (workspaceId: string, range: UsageRange, dim: UsageCallDimension) =>
  and(
    eq(usageCalls.workspaceId, workspaceId),
    gte(usageCalls.hour, range.from),
    lt(usageCalls.hour, range.to),
    // Tools are what `tools/call` calls; other methods have none.
    dim === 'tool' ? eq(usageCalls.method, 'tools/call') : undefined,
  );

/** The groups of one dimension with most calls, most first; at most `limit`. */
export async function topUsageCallGroups(
  db: Database,
  workspaceId: string,
  range: UsageRange,
  dim: UsageCallDimension,
  limit: number,
): Promise<Array<{ group: string; count: number }>> {
  const column = callDimension(dim);
  const count = num(sql`sum(${usageCalls.count})`);
  return db
    .select({ group: column, count })
    .from(usageCalls)
    .where(callsWhere(workspaceId, range, dim))
    .groupBy(column)
    .orderBy(desc(count), column)
    .limit(limit);
}

export interface UsageCallPointRow {
  /** Epoch seconds of the bucket's start. */
  epoch: number;
  group: string;
  count: number;
  errors: number;
  durations: number[];
}

/**
 * Calls per time bucket and group; groups outside `keep` (when given) fold into `other`.
 */
export async function usageCallSeries(
  db: Database,
  workspaceId: string,
  range: UsageRange,
  unit: UsageUnit,
  dim: UsageCallDimension,
  fold: { keep: string[]; other: string } | null,
): Promise<UsageCallPointRow[]> {
  const column = callDimension(dim);
  const group: SQL<string> = fold
    ? sql<string>`case when ${inArray(column, fold.keep.length > 0 ? fold.keep : [''])} then ${column} else ${fold.other} end`
    : sql<string>`${column}`;
  const epoch = epochOf(unit, usageCalls.hour);
  const rows = await db
    .select({
      epoch,
      group: group.mapWith(String),
      count: num(sql`sum(${usageCalls.count})`),
      errors: num(sql`sum(case when ${usageCalls.outcome} = 'error' then ${usageCalls.count} else 0 end)`),
      ...Object.fromEntries(BUCKET_COLUMNS.map((c) => [c, num(sql`sum(${sql.identifier(c)})`)])),
    })
    .from(usageCalls)
    .where(callsWhere(workspaceId, range, dim))
    .groupBy(sql`1`, sql`2`)
    .orderBy(sql`1`, sql`2`);
  return rows.map((r) => {
    const row = r as unknown as Record<string, number> & { group: string };
    return {
      epoch: Number(row.epoch),
      group: row.group,
      count: Number(row.count),
      errors: Number(row.errors),
      durations: BUCKET_COLUMNS.map((c) => row[c] ?? 0),
    };
  });
}

export interface UsageRunPointRow extends UsageRunCounts {
  epoch: number;
  flow: string;
}

/** The flows with most runs started, most first; at most `limit`. */
export async function topUsageFlows(
  db: Database,
  workspaceId: string,
  range: UsageRange,
  limit: number,
): Promise<Array<{ flow: string; started: number }>> {
  const started = num(sql`sum(${usageRuns.started})`);
  return db
    .select({ flow: usageRuns.flow, started })
    .from(usageRuns)
    .where(runsWhere(workspaceId, range))
    .groupBy(usageRuns.flow)
    .orderBy(desc(started), usageRuns.flow)
    .limit(limit);
}

const runsWhere = (workspaceId: string, range: UsageRange) =>
  and(eq(usageRuns.workspaceId, workspaceId), gte(usageRuns.hour, range.from), lt(usageRuns.hour, range.to));

/** Runs per time bucket and flow; flows outside `keep` (when given) fold into `other`. */
export async function usageRunSeries(
  db: Database,
  workspaceId: string,
  range: UsageRange,
  unit: UsageUnit,
  fold: { keep: string[]; other: string } | null,
): Promise<UsageRunPointRow[]> {
  const flow: SQL<string> = fold
    ? sql<string>`case when ${inArray(usageRuns.flow, fold.keep.length > 0 ? fold.keep : [''])} then ${usageRuns.flow} else ${fold.other} end`
    : sql<string>`${usageRuns.flow}`;
  return db
    .select({
      epoch: epochOf(unit, usageRuns.hour),
      flow: flow.mapWith(String),
      started: num(sql`sum(${usageRuns.started})`),
      completed: num(sql`sum(${usageRuns.completed})`),
      failed: num(sql`sum(${usageRuns.failed})`),
      cancelled: num(sql`sum(${usageRuns.cancelled})`),
      steps: num(sql`sum(${usageRuns.steps})`),
      httpCalls: num(sql`sum(${usageRuns.httpCalls})`),
      llmTokens: num(sql`sum(${usageRuns.llmTokens})`),
    })
    .from(usageRuns)
    .where(runsWhere(workspaceId, range))
    .groupBy(sql`1`, sql`2`)
    .orderBy(sql`1`, sql`2`);
}

export interface UsageTotals {
  calls: number;
  errors: number;
  runs: number;
  llmTokens: number;
}

/** One workspace's totals over the range. */
export async function usageTotals(
  db: Database,
  workspaceId: string,
  range: UsageRange,
): Promise<UsageTotals> {
  const [calls] = await db
    .select({
      calls: num(sql`sum(${usageCalls.count})`),
      errors: num(sql`sum(case when ${usageCalls.outcome} = 'error' then ${usageCalls.count} else 0 end)`),
    })
    .from(usageCalls)
    .where(callsWhere(workspaceId, range, 'method'));
  const [runs] = await db
    .select({ runs: num(sql`sum(${usageRuns.started})`), llmTokens: num(sql`sum(${usageRuns.llmTokens})`) })
    .from(usageRuns)
    .where(runsWhere(workspaceId, range));
  return {
    calls: calls?.calls ?? 0,
    errors: calls?.errors ?? 0,
    runs: runs?.runs ?? 0,
    llmTokens: runs?.llmTokens ?? 0,
  };
}

export interface WorkspaceUsageRow extends UsageTotals {
  workspaceId: string;
  /** Calls per UTC day, keyed by the day's epoch seconds. */
  daily: Map<number, number>;
}

/**
 * Every workspace with usage in the range (the operator's view), most calls first, at most `limit`: totals, and calls
 * per day for the ones returned.
 */
export async function usageByWorkspace(
  db: Database,
  range: UsageRange,
  limit: number,
): Promise<WorkspaceUsageRow[]> {
  const inCalls = and(gte(usageCalls.hour, range.from), lt(usageCalls.hour, range.to));
  const inRuns = and(gte(usageRuns.hour, range.from), lt(usageRuns.hour, range.to));
  const calls = await db
    .select({
      workspaceId: usageCalls.workspaceId,
      calls: num(sql`sum(${usageCalls.count})`),
      errors: num(sql`sum(case when ${usageCalls.outcome} = 'error' then ${usageCalls.count} else 0 end)`),
    })
    .from(usageCalls)
    .where(inCalls)
    .groupBy(usageCalls.workspaceId);
  const runs = await db
    .select({
      workspaceId: usageRuns.workspaceId,
      runs: num(sql`sum(${usageRuns.started})`),
      llmTokens: num(sql`sum(${usageRuns.llmTokens})`),
    })
    .from(usageRuns)
    .where(inRuns)
    .groupBy(usageRuns.workspaceId);
  const byId = new Map<string, WorkspaceUsageRow>();
  const row = (workspaceId: string) => {
    let r = byId.get(workspaceId);
    if (!r) {
      r = { workspaceId, calls: 0, errors: 0, runs: 0, llmTokens: 0, daily: new Map() };
      byId.set(workspaceId, r);
    }
    return r;
  };
  for (const c of calls) Object.assign(row(c.workspaceId), { calls: c.calls, errors: c.errors });
  for (const r of runs) Object.assign(row(r.workspaceId), { runs: r.runs, llmTokens: r.llmTokens });
  const ranked = [...byId.values()]
    .sort((a, b) => b.calls - a.calls || b.runs - a.runs || (a.workspaceId < b.workspaceId ? -1 : 1))
    .slice(0, limit);
  if (ranked.length === 0) return [];
  const daily = await db
    .select({
      workspaceId: usageCalls.workspaceId,
      epoch: epochOf('day', usageCalls.hour),
      calls: num(sql`sum(${usageCalls.count})`),
    })
    .from(usageCalls)
    .where(
      and(
        inCalls,
        inArray(
          usageCalls.workspaceId,
          ranked.map((r) => r.workspaceId),
        ),
      ),
    )
    .groupBy(sql`1`, sql`2`);
  for (const d of daily) byId.get(d.workspaceId)?.daily.set(d.epoch, d.calls);
  return ranked;
}
