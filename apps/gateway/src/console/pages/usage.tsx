/** @jsxImportSource hono/jsx */
import type { InferResponseType } from 'hono/client';
import type { AdminClient } from '../api.js';
import { refusal } from '../api.js';
import { type ChartItem, type ChartSeries, HorizontalBars, QuotaBar, StackedBars } from '../charts.js';
import { type C, frameOf, type PageKit, render } from '../kit.js';
import { Empty, Notice } from '../views.js';

type Series = InferResponseType<AdminClient['api']['workspaces'][':ws']['usage']['$get'], 200>;
type Point = Series['points'][number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** Rows the "top" charts show; the numbers table behind each has the same rows. */
const TOP = 10;

/** The periods the page offers: the last 24 hours by hour, or the last N days by day (today included). */
export const USAGE_RANGES = {
  '24h': 'last 24 hours',
  '7d': 'last 7 days',
  '30d': 'last 30 days',
  '90d': 'last 90 days',
} as const;
export type UsageRange = keyof typeof USAGE_RANGES;

export interface UsageWindow {
  from: Date;
  to: Date;
  granularity: 'hour' | 'day';
  /** Start of every bucket in the window, oldest first, as the API writes them (ISO, UTC). */
  buckets: string[];
}

/** The last `count` hours or days up to now, starting on a bucket boundary so each bar is a whole hour or day. */
export function usageWindow(granularity: 'hour' | 'day', count: number, now: Date): UsageWindow {
  const step = granularity === 'hour' ? HOUR_MS : DAY_MS;
  const current = Math.floor(now.getTime() / step) * step;
  const from = current - (count - 1) * step;
  const buckets = Array.from({ length: count }, (_, i) => new Date(from + i * step).toISOString());
  return { from: new Date(from), to: now, granularity, buckets };
}

const rangeWindow = (range: UsageRange, now: Date) =>
  range === '24h' ? usageWindow('hour', 24, now) : usageWindow('day', Number(range.slice(0, -1)), now);

/** The first day of the UTC month `now` is in: monthly quotas count from there. */
export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

type Standing = InferResponseType<
  AdminClient['api']['workspaces'][':ws']['quotas']['$get'],
  200
>['items'][number];

const QUOTA_TEXT: Record<string, { title: string; unit: string; period: string }> = {
  runsPerMonth: { title: 'Run starts this month', unit: 'runs', period: 'month' },
  toolCallsPerDay: { title: 'MCP tool calls today', unit: 'tool calls', period: 'day' },
};

/**
 * A quota as the page shows it: the enforcing counter (what the next start is checked against) when a limit is set,
 * null when the workspace sets none.
 */
export function quotaOf(items: readonly Standing[], quota: Standing['quota']): Standing | null {
  const found = items.find((item) => item.quota === quota);
  return found && found.limit !== null ? found : null;
}

const OUTCOME_TONES: Record<string, string> = {
  ok: 'c-ok',
  error: 'c-error',
  blocked: 'c-blocked',
  rate_limited: 'c-limited',
};
const OUTCOME_ORDER = ['ok', 'error', 'blocked', 'rate_limited'];

const instant = (iso: string) => new Date(iso).toISOString();
const fmt = (n: number) => n.toLocaleString('en-US');

function bucketLabel(iso: string, granularity: 'hour' | 'day'): string {
  return granularity === 'hour' ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(0, 10);
}

/** Calls per bucket stacked by outcome; every bucket of the window is present, empty ones included. */
function callsOverTime(series: Series, span: UsageWindow): { items: ChartItem[]; series: ChartSeries[] } {
  const seen = new Set(series.points.map((p) => p.group));
  const outcomes = [
    ...OUTCOME_ORDER.filter((o) => seen.has(o)),
    ...[...seen].filter((o) => !OUTCOME_ORDER.includes(o)).sort(),
  ];
  const byBucket = new Map<string, Record<string, number>>(span.buckets.map((b) => [b, {}]));
  for (const p of series.points) {
    const values = byBucket.get(instant(p.time));
    if (values) values[p.group] = (values[p.group] ?? 0) + p.count;
  }
  return {
    items: span.buckets.map((b) => ({
      key: b,
      label: bucketLabel(b, span.granularity),
      values: byBucket.get(b) ?? {},
    })),
    series: (outcomes.length > 0 ? outcomes : ['ok']).map((o) => ({
      key: o,
      label: o.replace('_', ' '),
      tone: OUTCOME_TONES[o] ?? 'c-muted',
    })),
  };
}

/** Sums a series per group, most first, the first TOP of them. */
function top(points: readonly Point[], values: (p: Point) => Record<string, number>): ChartItem[] {
  const byGroup = new Map<string, Record<string, number>>();
  for (const p of points) {
    const sum = byGroup.get(p.group) ?? {};
    for (const [k, v] of Object.entries(values(p))) sum[k] = (sum[k] ?? 0) + v;
    byGroup.set(p.group, sum);
  }
  const total = (v: Record<string, number>) => Object.values(v).reduce((a, b) => a + b, 0);
  return [...byGroup.entries()]
    .map(([group, v]) => ({ key: group, label: group, values: v }))
    .sort((a, b) => total(b.values) - total(a.values) || a.key.localeCompare(b.key))
    .slice(0, TOP);
}

const CALLS: ChartSeries[] = [
  { key: 'ok', label: 'without error', tone: 'c-1' },
  { key: 'errors', label: 'errors', tone: 'c-error' },
];
const callValues = (p: Point) => ({ ok: Math.max(0, p.count - p.errors), errors: p.errors });

const RUNS: ChartSeries[] = [
  { key: 'completed', label: 'completed', tone: 'c-ok' },
  { key: 'failed', label: 'failed', tone: 'c-error' },
  { key: 'cancelled', label: 'cancelled', tone: 'c-muted' },
  { key: 'other', label: 'not finished', tone: 'c-blocked' },
];
function runValues(p: Point): Record<string, number> {
  const r = p.runs ?? { started: p.count, completed: 0, failed: 0, cancelled: 0 };
  return {
    completed: r.completed,
    failed: r.failed,
    cancelled: r.cancelled,
    other: Math.max(0, r.started - r.completed - r.failed - r.cancelled),
  };
}

function describeTop(what: string, items: readonly ChartItem[], unit: string): string {
  if (items.length === 0) return `No ${unit} in this period.`;
  const parts = items
    .slice(0, 3)
    .map((i) => `${i.label} ${fmt(Object.values(i.values).reduce((a, b) => a + b, 0))}`);
  return `${what}, most first: ${parts.join(', ')}${items.length > 3 ? `, and ${items.length - 3} more` : ''}.`;
}

/** The workspace's Usage page: calls over time by outcome, top tools, keys and clients, runs by flow, LLM tokens. */
export function installUsagePage(kit: PageKit): void {
  const { app: console_, deps, api, wsParam, failed } = kit;
  const now = () => deps.workspaceDeps.now?.() ?? new Date();
  console_.get('/console/w/:ws/usage', async (c: C) => {
    const ws = c.req.param('ws') as string;
    const asked = c.req.query('range') ?? '';
    const range: UsageRange = asked in USAGE_RANGES ? (asked as UsageRange) : '7d';
    const at = now();
    const span = rangeWindow(range, at);
    const usage = api(c).api.workspaces[':ws'].usage;
    const ask = (
      groupBy: 'tool' | 'key' | 'client' | 'flow' | 'outcome',
      from = span.from,
      granularity = span.granularity,
    ) =>
      usage.$get({
        param: wsParam(c),
        query: { from: from.toISOString(), to: span.to.toISOString(), granularity, group_by: groupBy },
      });
    const [quotasAnswer, ...answers] = await Promise.all([
      api(c).api.workspaces[':ws'].quotas.$get({ param: wsParam(c) }),
      ask('outcome'),
      ask('tool'),
      ask('key'),
      ask('client'),
      ask('flow'),
      ask('flow', monthStart(at), 'day'),
    ]);
    if (!quotasAnswer.ok) return failed(c, 'Usage', 'usage', await refusal(quotasAnswer));
    const series: Series[] = [];
    for (const answer of answers) {
      if (!answer.ok) return failed(c, 'Usage', 'usage', await refusal(answer));
      series.push(await answer.json());
    }
    const [outcomes, tools, keys, clients, flows, month] = series as [
      Series,
      Series,
      Series,
      Series,
      Series,
      Series,
    ];
    const { items: standing } = await quotasAnswer.json();
    const tokenQuota = quotaOf(standing, 'llmTokensPerMonth');
    const quota = tokenQuota?.limit ?? null;
    const otherQuotas = (['runsPerMonth', 'toolCallsPerDay'] as const)
      .map((name) => quotaOf(standing, name))
      .filter((q): q is Standing => q !== null);

    const calls = callsOverTime(outcomes, span);
    const unit = span.granularity === 'hour' ? 'hour' : 'day';
    const totalCalls = outcomes.totals.calls;
    const busiest = calls.items.reduce<{ label: string; total: number } | null>((best, item) => {
      const total = Object.values(item.values).reduce((a, b) => a + b, 0);
      return total > (best?.total ?? 0) ? { label: item.label, total } : best;
    }, null);
    const topTools = top(tools.points, callValues);
    const topKeys = top(keys.points, callValues);
    const topClients = top(clients.points, callValues);
    const runsByFlow = top(flows.points, runValues);
    const period = USAGE_RANGES[range];
    // With a quota, the enforcing counter (it counts from when the quota was set); without one, the metered month.
    const monthTokens = tokenQuota ? tokenQuota.used : month.totals.llmTokens;

    return render(
      c,
      frameOf(c, 'Usage', ws, 'usage'),
      <>
        <h1>Usage</h1>
        <form method="get" action={`/console/w/${ws}/usage`} class="filters" data-autosubmit="">
          <label>
            Period
            <select name="range">
              {Object.entries(USAGE_RANGES).map(([value, label]) => (
                <option value={value} selected={value === range}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="secondary">
            Show
          </button>
        </form>
        <p class="summary" data-testid="usage-totals">
          {`${fmt(totalCalls)} MCP calls (${fmt(outcomes.totals.errors)} with errors), ${fmt(flows.totals.runs)} runs and ${fmt(flows.totals.llmTokens)} LLM tokens in the ${period}, by ${unit} (UTC).`}
        </p>
        {totalCalls === 0 && flows.totals.runs === 0 ? (
          <Empty>
            No usage in the {period} yet. Calls to this workspace’s MCP endpoints and runs of its flows show
            here.
          </Empty>
        ) : null}
        <div class="charts">
          <section aria-labelledby="h-calls">
            <h2 id="h-calls">Calls over time</h2>
            <StackedBars
              id="calls"
              title={`MCP calls per ${unit} by outcome`}
              description={
                totalCalls === 0
                  ? `No MCP calls in the ${period}.`
                  : `${fmt(totalCalls)} MCP calls in the ${period}, one bar per ${unit}, stacked by outcome (${calls.series.map((s) => s.label).join(', ')}). Busiest ${unit}: ${busiest?.label} with ${fmt(busiest?.total ?? 0)}.`
              }
              first={unit === 'hour' ? 'Hour (UTC)' : 'Day (UTC)'}
              items={calls.items}
              series={calls.series}
            />
          </section>
          {[
            {
              id: 'tools',
              heading: 'Top tools',
              title: 'MCP calls by tool',
              what: ['Calls by tool', 'tool calls'],
              first: 'Tool',
              items: topTools,
            },
            {
              id: 'keys',
              heading: 'Top keys',
              title: 'MCP calls by key or user',
              what: ['Calls by key or user', 'calls'],
              first: 'Key or user',
              items: topKeys,
            },
            {
              id: 'clients',
              heading: 'Top clients',
              title: 'MCP calls by client',
              what: ['Calls by client name', 'calls'],
              first: 'Client',
              items: topClients,
            },
          ].map((top) => (
            <section aria-labelledby={`h-${top.id}`}>
              <h2 id={`h-${top.id}`}>{top.heading}</h2>
              <HorizontalBars
                id={top.id}
                title={top.title}
                description={describeTop(top.what[0] as string, top.items, top.what[1] as string)}
                first={top.first}
                items={top.items}
                series={CALLS}
              />
            </section>
          ))}
          <section aria-labelledby="h-flows">
            <h2 id="h-flows">Runs by flow</h2>
            <HorizontalBars
              id="flows"
              title="Run outcomes by flow"
              description={describeTop('Runs started by flow', runsByFlow, 'runs')}
              first="Flow"
              items={runsByFlow}
              series={RUNS}
            />
          </section>
          <section aria-labelledby="h-tokens">
            <h2 id="h-tokens">LLM tokens this month</h2>
            <QuotaBar
              id="tokens"
              title="LLM tokens used this month"
              description={
                quota === null
                  ? `${fmt(monthTokens)} LLM tokens used since ${monthStart(at).toISOString().slice(0, 10)}; no monthly quota is set.`
                  : `${fmt(monthTokens)} of the monthly quota of ${fmt(quota)} LLM tokens used since ${monthStart(at).toISOString().slice(0, 10)}.`
              }
              used={monthTokens}
              limit={quota}
              unit="tokens"
            />
            {quota === null ? (
              <p class="muted">
                No monthly LLM token quota is set for this workspace (
                <a href={`/console/w/${ws}/policy`}>MCP policy</a>).
              </p>
            ) : monthTokens >= quota ? (
              <Notice kind="error">
                The monthly LLM token quota is reached; it resets at {tokenQuota?.resetsAt}.
              </Notice>
            ) : null}
          </section>
          {otherQuotas.map((q) => {
            const text = QUOTA_TEXT[q.quota] as { title: string; unit: string; period: string };
            const limit = q.limit as number;
            return (
              <section aria-labelledby={`h-quota-${q.quota}`}>
                <h2 id={`h-quota-${q.quota}`}>{text.title}</h2>
                <QuotaBar
                  id={`quota-${q.quota}`}
                  title={text.title}
                  description={`${fmt(q.used)} of the ${text.period}'s quota of ${fmt(limit)} ${text.unit} used; it resets at ${q.resetsAt}.`}
                  used={q.used}
                  limit={limit}
                  unit={text.unit}
                />
                {q.used >= limit ? (
                  <Notice kind="error">
                    The {text.unit} quota is reached; it resets at {q.resetsAt}.
                  </Notice>
                ) : null}
              </section>
            );
          })}
        </div>
      </>,
    );
  });
}
