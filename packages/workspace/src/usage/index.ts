/**
 * Reading usage: the hourly rollups the gateway's usage meter writes (calls by method, tool, key, client and
 * outcome; runs by flow), as series per hour or day. Durations come from fixed buckets, so percentiles are
 * interpolated within the bucket they fall in.
 */
import { AppError } from '@flowgate/core';
import { type Database, repos, USAGE_DURATION_BOUNDS_MS } from '@flowgate/db';
import { z } from 'zod';

export const USAGE_GROUPS = ['tool', 'method', 'key', 'client', 'flow', 'outcome'] as const;
export type UsageGroupBy = (typeof USAGE_GROUPS)[number];
export const USAGE_GRANULARITIES = ['hour', 'day'] as const;
export type UsageGranularity = (typeof USAGE_GRANULARITIES)[number];
export const USAGE_OUTCOMES = ['ok', 'error', 'blocked', 'rate_limited'] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

/** Longest range one query spans. */
export const MAX_USAGE_SPAN_DAYS = 400;
/** Longest range an hourly query spans (744 hours), so an answer stays small. */
export const MAX_HOURLY_SPAN_DAYS = 31;
/** Groups per answer: past it the least used fold into `USAGE_OTHER_GROUP`. */
export const MAX_USAGE_GROUPS = 200;
export const USAGE_OTHER_GROUP = '(other)';
/** The group of calls whose client did not say its name (group_by=client) or whose tool was unknown (tool). */
export const USAGE_UNKNOWN_CLIENT = '(unknown)';
/** Workspaces one operator answer ranks. */
export const MAX_USAGE_WORKSPACES = 200;

export interface UsageQuery {
  from: Date;
  to: Date;
  granularity: UsageGranularity;
  groupBy: UsageGroupBy;
}

export interface UsagePoint {
  /** ISO start of the hour/day bucket (UTC). */
  time: string;
  /** Tool name, method, key id (or `jwt:<sub>`), client name (or `(unknown)`), flow slug, outcome, or `(other)`. */
  group: string;
  /** MCP calls (for group_by=flow: runs started). */
  count: number;
  /** Calls whose outcome is `error` (tool result isError or JSON-RPC error); for group_by=flow: runs failed. */
  errors: number;
  /** From fixed duration buckets; null when count=0 or not applicable (flow). */
  p50Ms: number | null;
  p95Ms: number | null;
  /** group_by=flow only. */
  runs?: { started: number; completed: number; failed: number; cancelled: number };
  steps?: number;
  httpCalls?: number;
  llmTokens?: number;
}

export interface UsageSeries {
  /** The range answered: `from` and `to` aligned outward to the granularity. */
  from: string;
  to: string;
  granularity: UsageGranularity;
  groupBy: UsageGroupBy;
  /** Time, then group order; buckets without usage are absent. */
  points: UsagePoint[];
  /** Over the whole range, whatever the grouping: calls, call errors, runs started, LLM tokens. */
  totals: { calls: number; errors: number; runs: number; llmTokens: number };
}

export interface WorkspaceUsage {
  workspaceId: string;
  calls: number;
  errors: number;
  runs: number;
  llmTokens: number;
  /** Calls per UTC day of the (aligned) range, oldest first, zeros included: for a sparkline. */
  daily: number[];
}

export interface UsageUseCases {
  /** This workspace's usage only. Rejects with `invalid_usage_query` when the query is out of bounds. */
  series(query: UsageQuery): Promise<UsageSeries>;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

const rangeSchema = z
  .object({
    from: z.date(),
    to: z.date(),
    granularity: z.enum(USAGE_GRANULARITIES),
  })
  .refine((q) => !Number.isNaN(q.from.getTime()) && !Number.isNaN(q.to.getTime()), {
    message: 'from and to must be valid dates',
    path: ['from'],
  })
  .refine((q) => q.from.getTime() < q.to.getTime(), { message: 'from must be before to', path: ['from'] })
  .refine((q) => q.to.getTime() - q.from.getTime() <= MAX_USAGE_SPAN_DAYS * DAY_MS, {
    message: `at most ${MAX_USAGE_SPAN_DAYS} days`,
    path: ['to'],
  })
  .refine(
    (q) => q.granularity !== 'hour' || q.to.getTime() - q.from.getTime() <= MAX_HOURLY_SPAN_DAYS * DAY_MS,
    {
      message: `hourly series span at most ${MAX_HOURLY_SPAN_DAYS} days; use granularity=day`,
      path: ['granularity'],
    },
  );

const seriesSchema = z.object({
  from: z.date(),
  to: z.date(),
  granularity: z.enum(USAGE_GRANULARITIES),
  groupBy: z.enum(USAGE_GROUPS),
});

function invalid(error: z.ZodError): AppError {
  const issues = error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  return new AppError(
    'invalid_usage_query',
    `invalid usage query: ${issues[0]?.message ?? 'invalid'}`,
    issues,
  );
}

/** Validates and aligns a range outward to whole buckets of the granularity. */
function parseRange(input: unknown): { from: Date; to: Date; granularity: UsageGranularity } {
  const parsed = rangeSchema.safeParse(input);
  if (!parsed.success) throw invalid(parsed.error);
  const unit = parsed.data.granularity === 'hour' ? HOUR_MS : DAY_MS;
  const from = Math.floor(parsed.data.from.getTime() / unit) * unit;
  const to = Math.ceil(parsed.data.to.getTime() / unit) * unit;
  return { from: new Date(from), to: new Date(to), granularity: parsed.data.granularity };
}

/**
 * The duration at quantile `q` of a fixed-bucket histogram, interpolated linearly inside its bucket; the open last
 * bucket answers its lower bound (all that is known). Null for an empty histogram.
 */
export function quantileMs(durations: readonly number[], q: number): number | null {
  const total = durations.reduce((a, b) => a + b, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let before = 0;
  for (let i = 0; i < durations.length; i++) {
    const n = durations[i] ?? 0;
    if (n > 0 && before + n >= rank) {
      const lower = i === 0 ? 0 : (USAGE_DURATION_BOUNDS_MS[i - 1] ?? 0);
      const upper = USAGE_DURATION_BOUNDS_MS[i];
      if (upper === null || upper === undefined) return lower;
      return Math.round((lower + ((upper - lower) * (rank - before)) / n) * 10) / 10;
    }
    before += n;
  }
  return USAGE_DURATION_BOUNDS_MS.at(-2) ?? null;
}

const callDimension: Record<Exclude<UsageGroupBy, 'flow'>, repos.UsageCallDimension> = {
  tool: 'tool',
  method: 'method',
  key: 'principal',
  client: 'client',
  outcome: 'outcome',
};

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Keeps the most used groups; when there are more than fit, the rest fold into one. */
function foldOf(groups: string[]): { keep: string[]; other: string } | null {
  if (groups.length <= MAX_USAGE_GROUPS) return null;
  return { keep: groups.slice(0, MAX_USAGE_GROUPS - 1), other: USAGE_OTHER_GROUP };
}

export function usageUseCases(ctx: { db: Database; workspaceId: string }): UsageUseCases {
  return {
    async series(query) {
      const parsed = seriesSchema.safeParse(query);
      if (!parsed.success) throw invalid(parsed.error);
      const { groupBy } = parsed.data;
      const { from, to, granularity } = parseRange(parsed.data);
      const range = { from, to };
      const time = (epoch: number) => new Date(epoch * 1000).toISOString();
      let points: UsagePoint[];
      if (groupBy === 'flow') {
        const top = await repos.topUsageFlows(ctx.db, ctx.workspaceId, range, MAX_USAGE_GROUPS + 1);
        const rows = await repos.usageRunSeries(
          ctx.db,
          ctx.workspaceId,
          range,
          granularity,
          foldOf(top.map((t) => t.flow)),
        );
        points = rows.map((r) => ({
          time: time(r.epoch),
          group: r.flow,
          count: r.started,
          errors: r.failed,
          p50Ms: null,
          p95Ms: null,
          runs: { started: r.started, completed: r.completed, failed: r.failed, cancelled: r.cancelled },
          steps: r.steps,
          httpCalls: r.httpCalls,
          llmTokens: r.llmTokens,
        }));
      } else {
        const dim = callDimension[groupBy];
        const top = await repos.topUsageCallGroups(ctx.db, ctx.workspaceId, range, dim, MAX_USAGE_GROUPS + 1);
        const rows = await repos.usageCallSeries(
          ctx.db,
          ctx.workspaceId,
          range,
          granularity,
          dim,
          foldOf(top.map((t) => t.group)),
        );
        points = rows.map((r) => ({
          time: time(r.epoch),
          // A client that gave no name, a tools/call whose tool was not one served here.
          group:
            (groupBy === 'client' || groupBy === 'tool') && r.group === '' ? USAGE_UNKNOWN_CLIENT : r.group,
          count: r.count,
          errors: r.errors,
          p50Ms: quantileMs(r.durations, 0.5),
          p95Ms: quantileMs(r.durations, 0.95),
        }));
      }
      // In code-unit order: the database's collation must not decide it.
      points.sort((a, b) => cmp(a.time, b.time) || cmp(a.group, b.group));
      const totals = await repos.usageTotals(ctx.db, ctx.workspaceId, range);
      return {
        from: from.toISOString(),
        to: to.toISOString(),
        granularity,
        groupBy,
        points,
        totals,
      };
    },
  };
}

/** Every workspace's usage for the operator, most calls first, at most `MAX_USAGE_WORKSPACES`. */
export async function usageByWorkspace(
  db: Database,
  query: Omit<UsageQuery, 'groupBy'>,
): Promise<WorkspaceUsage[]> {
  const parsed = parseRange(query);
  // The sparkline is per day whatever the granularity: align to whole days.
  const from = Math.floor(parsed.from.getTime() / DAY_MS) * DAY_MS;
  const to = Math.ceil(parsed.to.getTime() / DAY_MS) * DAY_MS;
  const days = Math.round((to - from) / DAY_MS);
  const rows = await repos.usageByWorkspace(
    db,
    { from: new Date(from), to: new Date(to) },
    MAX_USAGE_WORKSPACES,
  );
  return rows.map((r) => {
    const daily = Array.from({ length: days }, (_, i) => r.daily.get((from + i * DAY_MS) / 1000) ?? 0);
    return {
      workspaceId: r.workspaceId,
      calls: r.calls,
      errors: r.errors,
      runs: r.runs,
      llmTokens: r.llmTokens,
      daily,
    };
  });
}
