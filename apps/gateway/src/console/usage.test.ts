import { quotaPeriod } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, TEST_ADMIN_TOKEN } from '../testing.js';
import { monthStart, quotaOf, usageWindow } from './pages/usage.js';
import { createSignInCode } from './session.js';
import { Browser } from './test-browser.js';

// The Usage page and the operator's sparklines as HTML, over rollups seeded for this hour and yesterday (the meter's
// own tests cover how calls become rollups).

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WS = 'ws-cu-a';
const OTHER = 'ws-cu-b';

let h: Harness;
let operator: Browser;

const durations = (n: number) => Array.from({ length: 12 }, (_, i) => (i === 2 ? n : 0));
const call = (over: Partial<repos.UsageCallDelta> & { count: number; hour: Date }): repos.UsageCallDelta => ({
  workspaceId: WS,
  method: 'tools/call',
  tool: 'run_flow',
  principal: 'key_1',
  client: 'claude',
  outcome: 'ok',
  durations: durations(over.count),
  ...over,
});

/** Every `<tag …>` opening tag's attributes, in document order. */
function tags(markup: string, tag: string): Array<Record<string, string>> {
  return [...markup.matchAll(new RegExp(`<${tag}(\\s[^>]*)?>`, 'g'))].map((m) =>
    Object.fromEntries([...(m[1] ?? '').matchAll(/([\w:-]+)="([^"]*)"/g)].map((a) => [a[1], a[2]])),
  );
}

/** The markup of the chart figure whose svg has `aria-labelledby="<id>-title …"`. */
function chart(html: string, id: string): string {
  const start = html.indexOf(`aria-labelledby="${id}-title ${id}-desc"`);
  expect(start, id).toBeGreaterThan(-1);
  const open = html.lastIndexOf('<figure', start);
  return html.slice(open, html.indexOf('</figure>', start) + '</figure>'.length);
}

const rows = (markup: string, tag: 'g') =>
  tags(markup, tag).map((g) => [g['data-key'], Number(g['data-total'])] as const);

beforeAll(async () => {
  h = await createHarness();
  await h.createWorkspace(WS);
  await h.createWorkspace(OTHER);
  const now = repos.usageHourOf(Date.now());
  const yesterday = new Date(now.getTime() - DAY);
  await repos.applyUsageBatch(h.db.db, {
    id: 'console-seed',
    calls: [
      call({ hour: now, count: 6 }),
      call({ hour: now, count: 2, outcome: 'error', principal: 'key_2', client: 'cursor' }),
      call({ hour: now, count: 1, outcome: 'blocked', tool: 'delete_flow' }),
      call({ hour: yesterday, count: 3, tool: 'list_runs' }),
      call({ hour: now, count: 100, workspaceId: OTHER, tool: 'other_tool', principal: 'key_other' }),
    ],
    runs: [
      {
        workspaceId: WS,
        hour: now,
        flow: 'report',
        started: 3,
        completed: 2,
        failed: 1,
        cancelled: 0,
        steps: 9,
        httpCalls: 4,
        llmTokens: 1200,
      },
    ],
  });
  operator = new Browser(h);
  await operator.signInWithToken(TEST_ADMIN_TOKEN);
});
afterAll(async () => h?.close());

describe('the Usage page', () => {
  it('is in the navigation, and draws calls per day stacked by outcome over the last 7 days', async () => {
    const { res, html } = await operator.page(`/console/w/${WS}/usage`);
    expect(res.status).toBe(200);
    expect(html).toContain(`<a href="/console/w/${WS}/usage" aria-current="page">Usage</a>`);
    const calls = chart(html, 'calls');
    // 7 day slots; bars only for the two days with calls, today's stacked ok, error, blocked.
    const today = new Date(Math.floor(Date.now() / DAY) * DAY).toISOString();
    const yesterday = new Date(Math.floor(Date.now() / DAY) * DAY - DAY).toISOString();
    expect(rows(calls, 'g')).toEqual([
      [yesterday, 3],
      [today, 9],
    ]);
    const rects = tags(calls, 'rect').map((r) => [
      r['data-series'],
      Number(r['data-value']),
      Number(r.height),
    ]);
    expect(rects).toEqual([
      ['ok', 3, 50], // 3/9 of the 150-unit plot
      ['ok', 6, 100],
      ['error', 2, 33.33],
      ['blocked', 1, 16.67],
    ]);
    // The numbers behind it: a row per day of the window, empty days included.
    expect(calls.match(/<tr data-key=/g)).toHaveLength(7);
    expect(calls).toContain('<title id="calls-title">MCP calls per day by outcome</title>');
    expect(html).toContain('12 MCP calls (2 with errors), 3 runs and 1,200 LLM tokens in the last 7 days');
  });

  it('ranks tools, keys and clients, shows runs by flow and the month’s tokens', async () => {
    const { html } = await operator.page(`/console/w/${WS}/usage?range=30d`);
    expect(rows(chart(html, 'tools'), 'g')).toEqual([
      ['run_flow', 8],
      ['list_runs', 3],
      ['delete_flow', 1],
    ]);
    expect(rows(chart(html, 'keys'), 'g')).toEqual([
      ['key_1', 10],
      ['key_2', 2],
    ]);
    expect(rows(chart(html, 'clients'), 'g')).toEqual([
      ['claude', 10],
      ['cursor', 2],
    ]);
    // Calls with errors stack after those without.
    expect(tags(chart(html, 'tools'), 'rect').map((r) => [r['data-series'], r['data-value']])).toEqual([
      ['ok', '6'],
      ['errors', '2'],
      ['ok', '3'],
      ['ok', '1'],
    ]);
    const flows = chart(html, 'flows');
    expect(rows(flows, 'g')).toEqual([['report', 3]]);
    expect(tags(flows, 'rect').map((r) => [r['data-series'], r['data-value']])).toEqual([
      ['completed', '2'],
      ['failed', '1'],
    ]);
    // No quota in the policy: the tokens alone.
    const tokens = chart(html, 'tokens');
    expect(tags(tokens, 'g')).toEqual([{ class: 'quota', 'data-value': '1200' }]);
    expect(html).toContain('No monthly LLM token quota is set for this workspace');
    // 30 days by day.
    expect(chart(html, 'calls').match(/<tr data-key=/g)).toHaveLength(30);
  });

  it('shows the last 24 hours by hour', async () => {
    const { html } = await operator.page(`/console/w/${WS}/usage?range=24h`);
    const calls = chart(html, 'calls');
    expect(calls.match(/<tr data-key=/g)).toHaveLength(24);
    // Yesterday's calls, 24 hours ago, are just outside the 24 hourly slots.
    expect(rows(calls, 'g')).toEqual([[repos.usageHourOf(Date.now()).toISOString(), 9]]);
    expect(html).toContain('<title id="calls-title">MCP calls per hour by outcome</title>');
  });

  it('never shows another workspace, and is refused to a session without it', async () => {
    const { html } = await operator.page(`/console/w/${WS}/usage`);
    expect(html).not.toContain('other_tool');
    expect(html).not.toContain('key_other');
    const admin = new Browser(h);
    await admin.signInWithCode(await createSignInCode(h.db.db, WS));
    expect((await admin.page(`/console/w/${WS}/usage`)).res.status).toBe(200);
    const foreign = await admin.page(`/console/w/${OTHER}/usage`);
    expect(foreign.res.status).toBe(403);
    expect(foreign.html).not.toContain('other_tool');
  });

  it('has no inline style for the CSP to refuse', async () => {
    const { res, html } = await operator.page(`/console/w/${WS}/usage`);
    expect(res.headers.get('content-security-policy')).toContain("style-src 'self'");
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)/);
  });
});

describe("the operator's workspaces page", () => {
  it('draws calls per day of the last 14 days for each workspace', async () => {
    const { html } = await operator.page('/console/workspaces');
    const cells = tags(html, 'div').filter((d) => d.class === 'spark-cell');
    expect(cells.map((c) => [c['data-workspace'], c['data-total']])).toEqual([
      [WS, '12'],
      [OTHER, '100'],
    ]);
    const lines = tags(html, 'polyline');
    expect(lines.map((l) => [l['data-points'], l['data-max']])).toEqual([
      ['14', '9'],
      ['14', '100'],
    ]);
    // The last point is today, at the top for both.
    expect(lines.map((l) => l.points?.split(' ').at(-1))).toEqual(['98,2', '98,2']);
  });
});

describe('helpers', () => {
  it('windows start on a bucket boundary and end now', () => {
    const now = new Date('2026-11-27T21:15:30.000Z');
    const week = usageWindow('day', 7, now);
    expect(week.from.toISOString()).toBe('2026-11-21T00:00:00.000Z');
    expect(week.to).toBe(now);
    expect(week.buckets).toHaveLength(7);
    expect(week.buckets.at(-1)).toBe('2026-11-27T00:00:00.000Z');
    const day = usageWindow('hour', 24, now);
    expect(day.from.toISOString()).toBe('2026-11-26T22:00:00.000Z');
    expect(day.buckets.at(-1)).toBe('2026-11-27T21:00:00.000Z');
    expect(monthStart(now).toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });

  it('shows each quota set against its enforcing counter, beside the usage', async () => {
    const put = await h.request('PUT', `/api/workspaces/${WS}/mcp-policy`, {
      body: { quotas: { runsPerMonth: 2, llmTokensPerMonth: 5000, toolCallsPerDay: null } },
    });
    expect(put.status).toBe(200);
    try {
      const at = new Date();
      const month = quotaPeriod('runsPerMonth', at);
      expect(await repos.takeQuota(h.db.db, WS, 'runsPerMonth', month, 2)).toBe(true);
      expect(await repos.takeQuota(h.db.db, WS, 'runsPerMonth', month, 2)).toBe(true);
      await repos.addQuotaUse(h.db.db, WS, 'llmTokensPerMonth', quotaPeriod('llmTokensPerMonth', at), 700);
      const { html } = await operator.page(`/console/w/${WS}/usage`);
      // Tokens against the quota come from the counter that enforces it (700), not the metered month (1,200).
      expect(tags(chart(html, 'tokens'), 'g')).toEqual([
        { class: 'quota', 'data-value': '700', 'data-limit': '5000' },
      ]);
      expect(tags(chart(html, 'quota-runsPerMonth'), 'g')).toEqual([
        { class: 'quota', 'data-value': '2', 'data-limit': '2' },
      ]);
      expect(html).toContain(`The runs quota is reached; it resets at ${month.resetsAt.toISOString()}.`);
      // No tool-call quota: no chart for it.
      expect(html).not.toContain('quota-toolCallsPerDay');
    } finally {
      await h.request('PUT', `/api/workspaces/${WS}/mcp-policy`, {
        body: { quotas: { runsPerMonth: null, llmTokensPerMonth: null, toolCallsPerDay: null } },
      });
    }
  });

  it('takes a quota from the standing only when a limit is set', () => {
    const base = { used: 3, periodStart: '2026-11-01T00:00:00.000Z', resetsAt: '2026-12-01T00:00:00.000Z' };
    const items = [
      { ...base, quota: 'runsPerMonth' as const, limit: 10 },
      { ...base, quota: 'llmTokensPerMonth' as const, limit: null },
    ];
    expect(quotaOf(items, 'runsPerMonth')).toEqual(items[0]);
    expect(quotaOf(items, 'llmTokensPerMonth')).toBeNull();
    expect(quotaOf(items, 'toolCallsPerDay')).toBeNull();
  });
});
