import { AppError } from '@flowgate/core';
import {
  type AuditRecorder,
  MAX_HOURLY_SPAN_DAYS,
  MAX_USAGE_SPAN_DAYS,
  openOperator,
  USAGE_GRANULARITIES,
  USAGE_GROUPS,
  type UsageGranularity,
  type UsagePoint,
  type UsageSeries,
  type WorkspaceDeps,
  type WorkspaceUsage,
} from '@flowgate/workspace';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../context.js';
import { requireWorkspaceAdmin } from '../middleware/workspace-access.js';
import { query } from './validation.js';
import { type AdminWorkspaces, workspaceOf } from './workspace-of.js';

const DAY_MS = 86_400_000;
/** The window when none is given: the last 7 days up to now. */
const DEFAULT_USAGE_DAYS = 7;

const instant = z.iso.datetime({ offset: true });
const windowFields = {
  from: instant.optional(),
  to: instant.optional(),
  granularity: z.enum(USAGE_GRANULARITIES).default('day'),
};

const usageQuery = z.object({ ...windowFields, group_by: z.enum(USAGE_GROUPS).default('tool') });
const operatorUsageQuery = z.object({
  ...windowFields,
  group_by: z.literal('workspace').default('workspace'),
});

const invalid = (extra: string) =>
  new AppError(
    'invalid_request',
    `from and to are ISO 8601 instants with a zone, granularity hour|day${extra}`,
  );

/**
 * The window asked for, defaults filled in (`to` now, `from` 7 days before `to`): `from` before `to`, at most 400
 * days apart (31 by hour), else 400 `invalid_request` before the domain is asked.
 */
function windowOf(
  q: { from?: string | undefined; to?: string | undefined; granularity: UsageGranularity },
  now: Date,
): { from: Date; to: Date } {
  const to = q.to !== undefined ? new Date(q.to) : now;
  const from = q.from !== undefined ? new Date(q.from) : new Date(to.getTime() - DEFAULT_USAGE_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime()) throw new AppError('invalid_request', 'from must be before to');
  if (to.getTime() - from.getTime() > MAX_USAGE_SPAN_DAYS * DAY_MS)
    throw new AppError('invalid_request', `from and to may be at most ${MAX_USAGE_SPAN_DAYS} days apart`);
  if (q.granularity === 'hour' && to.getTime() - from.getTime() > MAX_HOURLY_SPAN_DAYS * DAY_MS)
    throw new AppError(
      'invalid_request',
      `an hourly series spans at most ${MAX_HOURLY_SPAN_DAYS} days; use granularity=day`,
    );
  return { from, to };
}

/** A point as the API answers it: the counts always, the run figures only for `group_by=flow`. */
function pointView(p: UsagePoint) {
  return {
    time: p.time,
    group: p.group,
    count: p.count,
    errors: p.errors,
    p50Ms: p.p50Ms,
    p95Ms: p.p95Ms,
    ...(p.runs !== undefined
      ? {
          runs: {
            started: p.runs.started,
            completed: p.runs.completed,
            failed: p.runs.failed,
            cancelled: p.runs.cancelled,
          },
        }
      : {}),
    ...(p.steps !== undefined ? { steps: p.steps } : {}),
    ...(p.httpCalls !== undefined ? { httpCalls: p.httpCalls } : {}),
    ...(p.llmTokens !== undefined ? { llmTokens: p.llmTokens } : {}),
  };
}

function seriesView(s: UsageSeries) {
  return {
    from: s.from,
    to: s.to,
    granularity: s.granularity,
    groupBy: s.groupBy,
    points: s.points.map(pointView),
    totals: {
      calls: s.totals.calls,
      errors: s.totals.errors,
      runs: s.totals.runs,
      llmTokens: s.totals.llmTokens,
    },
  };
}

/** The ranking over whole UTC days (the domain's `daily` is per day): `from` and `to` aligned outward as it does. */
function rankingView(from: Date, to: Date, granularity: UsageGranularity, rows: WorkspaceUsage[]) {
  return {
    from: new Date(Math.floor(from.getTime() / DAY_MS) * DAY_MS).toISOString(),
    to: new Date(Math.ceil(to.getTime() / DAY_MS) * DAY_MS).toISOString(),
    granularity,
    groupBy: 'workspace' as const,
    items: rows.map((r) => ({
      workspaceId: r.workspaceId,
      calls: r.calls,
      errors: r.errors,
      runs: r.runs,
      llmTokens: r.llmTokens,
      daily: r.daily,
    })),
  };
}

/**
 * Usage (docs/admin-api.md, "Usage"): a workspace's metered series for its admins (and the operator), read from the
 * hourly rollups through the workspace's own use case, so no other workspace's rows can answer.
 */
export function usageRoutes(deps: AdminWorkspaces) {
  const now = () => deps.workspaceDeps.now?.() ?? new Date();
  return new Hono<AppEnv>().get(
    '/usage',
    requireWorkspaceAdmin,
    query(usageQuery, () => invalid(`, group_by one of ${USAGE_GROUPS.join('|')}`)),
    async (c) => {
      const q = c.req.valid('query');
      const { from, to } = windowOf(q, now());
      const series = await workspaceOf(c, deps).usage.series({
        from,
        to,
        granularity: q.granularity,
        groupBy: q.group_by,
      });
      return c.json(seriesView(series));
    },
  );
}

/** The operator's ranking of workspaces by calls over a window, with calls per day for a sparkline. */
export function operatorUsageRoutes(deps: {
  workspaceDeps: WorkspaceDeps;
  recorder: AuditRecorder;
  operatorGuard: MiddlewareHandler<AppEnv>;
}) {
  const now = () => deps.workspaceDeps.now?.() ?? new Date();
  const operator = (c: Context<AppEnv>) =>
    openOperator(deps.workspaceDeps, {
      actor: { kind: 'operator', id: 'operator' },
      requestId: c.get('requestId'),
      audit: deps.recorder,
    });
  return new Hono<AppEnv>().get(
    '/api/admin/usage',
    deps.operatorGuard,
    query(operatorUsageQuery, () => invalid(', group_by workspace')),
    async (c) => {
      const q = c.req.valid('query');
      const { from, to } = windowOf(q, now());
      const rows = await operator(c).usageByWorkspace({ from, to, granularity: q.granularity });
      return c.json(rankingView(from, to, q.granularity, rows));
    },
  );
}
