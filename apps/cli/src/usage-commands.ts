import { type Command, InvalidArgumentError, Option } from 'commander';
import type { AdminClient, UsageGranularity, UsageGroup, UsagePoint, UsageSeries } from './admin-client.js';
import { renderTable } from './output.js';
import { parseWorkspaceId } from './parsers.js';

/** `flowgate usage`, over the admin API. Registered by program.ts. */

export interface UsageCommandContext {
  client: (cmd: Command) => AdminClient;
  out: (cmd: Command, json: unknown, human: () => string) => void;
}

// Checked against the route's own query type, so a group the API drops breaks the build here.
const GROUPS = [
  'tool',
  'method',
  'key',
  'client',
  'flow',
  'outcome',
] as const satisfies readonly UsageGroup[];
const GRANULARITIES = ['hour', 'day'] as const satisfies readonly UsageGranularity[];

const HOUR_MS = 3_600_000;
/** `--since` when not given: the API's own default window. */
const DEFAULT_SINCE_MS = 7 * 24 * HOUR_MS;
/** The API's longest window. */
const MAX_DAYS = 400;

/** `Nh` or `Nd` (e.g. 24h, 7d), up to 400 days: the window's length in milliseconds. */
export function parseSince(value: string): number {
  const m = /^(\d{1,5})([hd])$/.exec(value.trim());
  const n = m ? Number(m[1]) : 0;
  const hours = m?.[2] === 'd' ? n * 24 : n;
  if (!m || n < 1 || hours > MAX_DAYS * 24) {
    throw new InvalidArgumentError(`expected hours or days like 24h or 7d, at most ${MAX_DAYS}d`);
  }
  return hours * HOUR_MS;
}

interface GroupTotal {
  group: string;
  calls: number;
  errors: number;
  started: number;
  completed: number;
  failed: number;
  cancelled: number;
  steps: number;
  httpCalls: number;
  llmTokens: number;
}

/** The series summed per group over the whole window, most calls (runs started, for flows) first. */
export function totalsByGroup(points: readonly UsagePoint[]): GroupTotal[] {
  const byGroup = new Map<string, GroupTotal>();
  for (const p of points) {
    const t = byGroup.get(p.group) ?? {
      group: p.group,
      calls: 0,
      errors: 0,
      started: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      steps: 0,
      httpCalls: 0,
      llmTokens: 0,
    };
    t.calls += p.count;
    t.errors += p.errors;
    t.started += p.runs?.started ?? 0;
    t.completed += p.runs?.completed ?? 0;
    t.failed += p.runs?.failed ?? 0;
    t.cancelled += p.runs?.cancelled ?? 0;
    t.steps += p.steps ?? 0;
    t.httpCalls += p.httpCalls ?? 0;
    t.llmTokens += p.llmTokens ?? 0;
    byGroup.set(p.group, t);
  }
  return [...byGroup.values()].sort((a, b) => b.calls - a.calls || a.group.localeCompare(b.group));
}

type Row = Record<string, unknown>;
type Column = { header: string; value: (row: Row) => unknown };

const FLOW_COLUMNS: Column[] = [
  { header: 'STARTED', value: (r) => r.started },
  { header: 'COMPLETED', value: (r) => r.completed },
  { header: 'FAILED', value: (r) => r.failed },
  { header: 'CANCELLED', value: (r) => r.cancelled },
  { header: 'STEPS', value: (r) => r.steps },
  { header: 'HTTP CALLS', value: (r) => r.httpCalls },
  { header: 'LLM TOKENS', value: (r) => r.llmTokens },
];

function summaryTable(series: UsageSeries): string {
  const rows = totalsByGroup(series.points) as unknown as Row[];
  const columns: Column[] =
    series.groupBy === 'flow'
      ? [{ header: 'FLOW', value: (r) => r.group }, ...FLOW_COLUMNS]
      : [
          { header: series.groupBy.toUpperCase(), value: (r) => r.group },
          { header: 'CALLS', value: (r) => r.calls },
          { header: 'ERRORS', value: (r) => r.errors },
        ];
  return renderTable(columns, rows);
}

/** One row per bucket and group, with the bucket's percentiles (which do not add up across buckets). */
function seriesTable(series: UsageSeries): string {
  const rows = series.points.map((p) => ({
    ...p,
    started: p.runs?.started,
    completed: p.runs?.completed,
    failed: p.runs?.failed,
    cancelled: p.runs?.cancelled,
  })) as unknown as Row[];
  const columns: Column[] = [
    { header: 'TIME', value: (r) => r.time },
    { header: series.groupBy.toUpperCase(), value: (r) => r.group },
    ...(series.groupBy === 'flow'
      ? FLOW_COLUMNS
      : [
          { header: 'CALLS', value: (r: Row) => r.count },
          { header: 'ERRORS', value: (r: Row) => r.errors },
          { header: 'P50 MS', value: (r: Row) => r.p50Ms },
          { header: 'P95 MS', value: (r: Row) => r.p95Ms },
        ]),
  ];
  return renderTable(columns, rows);
}

function footer(series: UsageSeries): string {
  const t = series.totals;
  return (
    `total: ${t.calls} calls, ${t.errors} errors, ${t.runs} runs, ${t.llmTokens} LLM tokens ` +
    `(${series.from} to ${series.to}, by ${series.granularity})\n`
  );
}

export function registerUsageCommands(program: Command, ctx: UsageCommandContext): void {
  const { client, out } = ctx;
  program
    .command('usage')
    .description('what a workspace used: calls by tool, method, key, client or outcome, runs by flow')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option(
      '--since <period>',
      'how far back: hours or days, e.g. 24h (default: 7d, at most 400d)',
      parseSince,
    )
    .addOption(new Option('--by <group>', 'group by').choices(GROUPS).default('tool'))
    .addOption(
      new Option('--granularity <unit>', 'bucket size of the series').choices(GRANULARITIES).default('day'),
    )
    .option('--series', 'one row per time bucket and group (with p50/p95) instead of totals per group')
    .action(
      async (
        opts: {
          workspace: string;
          since?: number;
          by: UsageGroup;
          granularity: UsageGranularity;
          series?: boolean;
        },
        cmd: Command,
      ) => {
        const to = new Date();
        const from = new Date(to.getTime() - (opts.since ?? DEFAULT_SINCE_MS));
        const series = await client(cmd).usage(opts.workspace, {
          from: from.toISOString(),
          to: to.toISOString(),
          granularity: opts.granularity,
          groupBy: opts.by,
        });
        out(cmd, series, () => (opts.series ? seriesTable(series) : summaryTable(series)) + footer(series));
      },
    );
}
