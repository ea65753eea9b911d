import { repos } from '@flowgate/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWith, startTestGateway, type TestGateway } from './testing.js';
import { parseSince } from './usage-commands.js';

const env = { FLOWGATE_API_URL: 'http://gateway.test', FLOWGATE_ADMIN_TOKEN: 'op_test' };

/** A fetch answering every request with `answer`, recording the URLs asked for. */
function answering(answer: unknown) {
  const urls: URL[] = [];
  const fetch = async (input: RequestInfo | URL) => {
    urls.push(new URL(String(input)));
    return Response.json(answer);
  };
  return { urls, fetch };
}

const TOOL_SERIES = {
  from: '2026-11-20T00:00:00.000Z',
  to: '2026-11-27T00:00:00.000Z',
  granularity: 'day',
  groupBy: 'tool',
  points: [
    { time: '2026-11-25T00:00:00.000Z', group: 'list_runs', count: 2, errors: 0, p50Ms: 4, p95Ms: 9 },
    { time: '2026-11-25T00:00:00.000Z', group: 'run_flow', count: 3, errors: 1, p50Ms: 12, p95Ms: 40 },
    { time: '2026-11-26T00:00:00.000Z', group: 'run_flow', count: 4, errors: 0, p50Ms: 10, p95Ms: 30 },
  ],
  totals: { calls: 9, errors: 1, runs: 0, llmTokens: 0 },
};

describe('flowgate usage', () => {
  it('asks for the last 7 days by day by tool, and prints totals per group, most calls first', async () => {
    const { urls, fetch } = answering(TOOL_SERIES);
    const r = await runWith(['usage', '--workspace', 'ws-acme'], { env, fetch });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(urls).toHaveLength(1);
    const url = urls[0] as URL;
    expect(url.pathname).toBe('/api/workspaces/ws-acme/usage');
    expect(url.searchParams.get('granularity')).toBe('day');
    expect(url.searchParams.get('group_by')).toBe('tool');
    const from = Date.parse(url.searchParams.get('from') ?? '');
    const to = Date.parse(url.searchParams.get('to') ?? '');
    expect(to - from).toBe(7 * 86_400_000);
    expect(Math.abs(Date.now() - to)).toBeLessThan(60_000);
    expect(r.stdout).toBe(
      [
        'TOOL       CALLS  ERRORS',
        'run_flow   7      1',
        'list_runs  2      0',
        'total: 9 calls, 1 errors, 0 runs, 0 LLM tokens (2026-11-20T00:00:00.000Z to 2026-11-27T00:00:00.000Z, by day)',
        '',
      ].join('\n'),
    );
  });

  it('--since, --by, --granularity and --series shape the request and the table', async () => {
    const { urls, fetch } = answering(TOOL_SERIES);
    const r = await runWith(
      [
        'usage',
        '--workspace',
        'ws-acme',
        '--since',
        '36h',
        '--by',
        'tool',
        '--granularity',
        'hour',
        '--series',
      ],
      { env, fetch },
    );
    expect(r.code).toBe(0);
    const url = urls[0] as URL;
    expect(url.searchParams.get('granularity')).toBe('hour');
    expect(
      Date.parse(url.searchParams.get('to') ?? '') - Date.parse(url.searchParams.get('from') ?? ''),
    ).toBe(36 * 3_600_000);
    expect(r.stdout.split('\n').slice(0, 4)).toEqual([
      'TIME                      TOOL       CALLS  ERRORS  P50 MS  P95 MS',
      '2026-11-25T00:00:00.000Z  list_runs  2      0       4       9',
      '2026-11-25T00:00:00.000Z  run_flow   3      1       12      40',
      '2026-11-26T00:00:00.000Z  run_flow   4      0       10      30',
    ]);
  });

  it('by flow prints run outcomes, steps, HTTP calls and tokens', async () => {
    const run = (started: number, completed: number, failed: number, cancelled: number) => ({
      started,
      completed,
      failed,
      cancelled,
    });
    const { urls, fetch } = answering({
      ...TOOL_SERIES,
      groupBy: 'flow',
      points: [
        {
          time: 't1',
          group: 'report',
          count: 2,
          errors: 1,
          p50Ms: null,
          p95Ms: null,
          runs: run(2, 1, 1, 0),
          steps: 6,
          httpCalls: 3,
          llmTokens: 120,
        },
        {
          time: 't2',
          group: 'report',
          count: 1,
          errors: 0,
          p50Ms: null,
          p95Ms: null,
          runs: run(1, 0, 0, 1),
          steps: 1,
          httpCalls: 0,
          llmTokens: 0,
        },
        {
          time: 't2',
          group: 'enrich',
          count: 5,
          errors: 0,
          p50Ms: null,
          p95Ms: null,
          runs: run(5, 5, 0, 0),
          steps: 10,
          httpCalls: 5,
          llmTokens: 0,
        },
      ],
      totals: { calls: 0, errors: 1, runs: 8, llmTokens: 120 },
    });
    const r = await runWith(['usage', '--workspace', 'ws-acme', '--by', 'flow'], { env, fetch });
    expect(r.code).toBe(0);
    expect(urls[0]?.searchParams.get('group_by')).toBe('flow');
    expect(r.stdout.split('\n').slice(0, 3)).toEqual([
      'FLOW    STARTED  COMPLETED  FAILED  CANCELLED  STEPS  HTTP CALLS  LLM TOKENS',
      'enrich  5        5          0       0          10     5           0',
      'report  3        1          1       1          7      3           120',
    ]);
  });

  it('--json prints the answer as the API gave it', async () => {
    const { fetch } = answering(TOOL_SERIES);
    const r = await runWith(['usage', '--workspace', 'ws-acme', '--json'], { env, fetch });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(TOOL_SERIES);
  });

  it('refuses a period or group it does not know, before any request', async () => {
    const { urls, fetch } = answering(TOOL_SERIES);
    const weeks = await runWith(['usage', '--workspace', 'ws-acme', '--since', '2w'], { env, fetch });
    expect(weeks.code).toBe(1);
    expect(weeks.stderr).toContain('expected hours or days like 24h or 7d, at most 400d');
    const group = await runWith(['usage', '--workspace', 'ws-acme', '--by', 'region'], { env, fetch });
    expect(group.code).toBe(1);
    expect(group.stderr).toContain('Allowed choices are tool, method, key, client, flow, outcome');
    expect(urls).toHaveLength(0);
  });
});

describe('parseSince', () => {
  it('reads hours and days up to 400 days', () => {
    expect(parseSince('1h')).toBe(3_600_000);
    expect(parseSince('7d')).toBe(7 * 86_400_000);
    expect(parseSince('400d')).toBe(400 * 86_400_000);
    expect(parseSince('9600h')).toBe(400 * 86_400_000);
    for (const bad of ['0h', '401d', '9601h', '7', 'd', '-1d', '1.5d', '7D'])
      expect(() => parseSince(bad), bad).toThrow('expected hours or days');
  });
});

describe('flowgate usage against the gateway', () => {
  let gateway: TestGateway;
  let env: Record<string, string>;
  const WS = 'ws-usage-cli';
  beforeAll(async () => {
    gateway = await startTestGateway();
    env = { FLOWGATE_API_URL: gateway.url, FLOWGATE_ADMIN_TOKEN: gateway.token };
    await gateway.client.createWorkspace({ id: WS, name: 'usage' });
    await gateway.client.createWorkspace({ id: 'ws-usage-cli-other', name: 'other' });
    const hour = repos.usageHourOf(Date.now());
    const durations = (n: number) => Array.from({ length: 12 }, (_, i) => (i === 1 ? n : 0));
    const call = (tool: string, client: string, outcome: repos.UsageCallOutcome, count: number) => ({
      workspaceId: WS,
      hour,
      method: 'tools/call',
      tool,
      principal: 'key_1',
      client,
      outcome,
      count,
      durations: durations(count),
    });
    await repos.applyUsageBatch(gateway.db.db, {
      id: 'cli-seed',
      calls: [
        call('run_flow', 'claude', 'ok', 5),
        call('run_flow', 'cursor', 'error', 2),
        call('list_runs', 'cursor', 'ok', 3),
        { ...call('run_flow', 'claude', 'ok', 70), workspaceId: 'ws-usage-cli-other' },
      ],
      runs: [],
    });
  });
  afterAll(async () => gateway?.close());

  it('prints the numbers the API answers, of this workspace only', async () => {
    const r = await runWith(['usage', '--workspace', WS, '--since', '24h', '--by', 'client'], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // A tie in calls goes by name.
    expect(r.stdout.split('\n').slice(0, 3)).toEqual([
      'CLIENT  CALLS  ERRORS',
      'claude  5      0',
      'cursor  5      2',
    ]);
    expect(r.stdout).toContain('total: 10 calls, 2 errors, 0 runs, 0 LLM tokens');
    const json = await runWith(['usage', '--workspace', WS, '--since', '24h', '--by', 'tool', '--json'], {
      env,
    });
    const answer = JSON.parse(json.stdout) as {
      points: Array<{ group: string; count: number }>;
      totals: unknown;
    };
    const api = await gateway.client.usage(WS, {
      from: new Date(Date.now() - 86_400_000).toISOString(),
      to: new Date().toISOString(),
      granularity: 'day',
      groupBy: 'tool',
    });
    expect(answer.points).toEqual(api.points);
    expect(answer.totals).toEqual({ calls: 10, errors: 2, runs: 0, llmTokens: 0 });
    expect(answer.points.map((p) => [p.group, p.count]).sort()).toEqual([
      ['list_runs', 3],
      ['run_flow', 7],
    ]);
  });

  it('says what went wrong when the workspace is not one the token opens', async () => {
    const r = await runWith(['usage', '--workspace', 'ws-missing-usage'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: not_found: workspace not found\n');
  });
});
