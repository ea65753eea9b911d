import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repos } from '@flowgate/db';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chromium, launchChromium, seriousAxeViolations } from './support/chromium.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from './support/gateway.js';

/**
 * The Usage page and the operator's sparklines in chromium at 360 px: a known workload (rollups for today, yesterday
 * and three days ago), asserted by structure — bars, points, their data attributes and the numbers in the tables —
 * never by pixels. Screenshots go to .tmp/console-screenshots.
 */

const WS = 'ws-usage-ui';
const OTHER = 'ws-usage-other';
const SHOTS = join(process.cwd(), '.tmp', 'console-screenshots');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WIDTH = 360;

let gw: TestGateway;
let browser: Chromium;
let page: Page;

const startOfDay = (t: number) => new Date(Math.floor(t / DAY) * DAY).toISOString();

function call(over: Partial<repos.UsageCallDelta> & { count: number; hour: Date }): repos.UsageCallDelta {
  return {
    workspaceId: WS,
    method: 'tools/call',
    tool: 'run_flow',
    principal: 'key_alpha',
    client: 'claude-code',
    outcome: 'ok',
    durations: Array.from({ length: 12 }, (_, i) => (i === 4 ? over.count : 0)),
    ...over,
  };
}

async function shot(name: string) {
  const path = join(SHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect(statSync(path).size).toBeGreaterThan(1000);
}

/** Whether anything on the page is wider than the viewport (the page would scroll sideways). */
async function overflow(): Promise<{ scrollWidth: number; widest: string | null }> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    let widest: string | null = null;
    for (const el of document.querySelectorAll('main *')) {
      const box = el.getBoundingClientRect();
      // Content inside a sideways-scrolling table box may be wider; the box itself may not.
      if (el.closest('.scroll') && !el.classList.contains('scroll')) continue;
      if (box.right > width + 0.5 && box.width > 0) {
        widest = `${el.tagName.toLowerCase()}.${el.getAttribute('class') ?? ''} right=${box.right}`;
        break;
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, widest };
  });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  gw = await startTestGateway();
  await gw.createWorkspace(WS);
  await gw.createWorkspace(OTHER);
  const now = Date.now();
  const hour = repos.usageHourOf(now);
  const dayAgo = new Date(hour.getTime() - DAY);
  const threeDaysAgo = new Date(hour.getTime() - 3 * DAY);
  await repos.applyUsageBatch(gw.db.db, {
    id: 'browser-workload',
    calls: [
      // Today: 10 ok, 3 errors, 2 blocked, 1 rate-limited, over three tools, two keys and two clients.
      call({ hour, count: 6 }),
      call({ hour, count: 4, tool: 'list_runs', principal: 'key_beta', client: 'cursor' }),
      call({ hour, count: 3, outcome: 'error', principal: 'key_beta' }),
      call({ hour, count: 2, outcome: 'blocked', tool: 'delete_flow', client: 'cursor' }),
      call({ hour, count: 1, outcome: 'rate_limited' }),
      // Yesterday: 5 ok. Three days ago: 2 errors.
      call({ hour: dayAgo, count: 5, tool: 'list_runs' }),
      call({ hour: threeDaysAgo, count: 2, outcome: 'error', principal: 'key_beta' }),
      // Another workspace, busier: only the operator's list shows it.
      call({ hour, count: 40, workspaceId: OTHER, tool: 'secret_tool', principal: 'key_other' }),
    ],
    runs: [
      {
        workspaceId: WS,
        hour,
        flow: 'daily-report',
        started: 4,
        completed: 2,
        failed: 1,
        cancelled: 1,
        steps: 12,
        httpCalls: 4,
        llmTokens: 2500,
      },
      {
        workspaceId: WS,
        hour: dayAgo,
        flow: 'enrich',
        started: 2,
        completed: 2,
        failed: 0,
        cancelled: 0,
        steps: 4,
        httpCalls: 2,
        llmTokens: 0,
      },
    ],
  });
  browser = await launchChromium({ width: WIDTH, height: 800 });
  page = await browser.context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
});

describe('usage charts in chromium at 360 px', () => {
  it('signs in as the operator and shows a sparkline of 14 daily points per workspace', async () => {
    await page.goto(`${gw.url}/console/sign-in`);
    await page.getByLabel('Operator token or workspace-admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/console\/workspaces$/);
    const cells = page.locator('.spark-cell');
    expect(await cells.evaluateAll((els) => els.map((e) => [e.dataset.workspace, e.dataset.total]))).toEqual([
      [OTHER, '40'],
      [WS, '23'],
    ]);
    const lines = page.locator('svg[data-chart="sparkline"] polyline');
    expect(await lines.evaluateAll((els) => els.map((e) => e.getAttribute('data-points')))).toEqual([
      '14',
      '14',
    ]);
    // Each line has its 14 points, the last (today) the highest of its workspace.
    const points = await lines.evaluateAll((els) =>
      els.map((e) => (e as SVGPolylineElement).points.numberOfItems),
    );
    expect(points).toEqual([14, 14]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shot('usage-01-workspaces');
  });

  it('opens Usage from the navigation and draws the workload', async () => {
    await page.goto(`${gw.url}/console/w/${WS}/keys`);
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(new RegExp(`/console/w/${WS}/usage$`));
    expect(await page.locator('h1').textContent()).toBe('Usage');

    // Calls over the last 7 days: three days have calls, today's stacked by outcome.
    const calls = page.locator('svg[data-chart="stacked-bars"]');
    expect(await calls.getAttribute('aria-labelledby')).toBe('calls-title calls-desc');
    const bars = calls.locator('g.bar');
    expect(
      await bars.evaluateAll((els) =>
        els.map((e) => [e.getAttribute('data-key'), e.getAttribute('data-total')]),
      ),
    ).toEqual([
      [startOfDay(Date.now() - 3 * DAY), '2'],
      [startOfDay(Date.now() - DAY), '5'],
      [startOfDay(Date.now()), '16'],
    ]);
    const today = bars.last().locator('rect');
    expect(
      await today.evaluateAll((els) =>
        els.map((e) => [
          e.getAttribute('data-series'),
          e.getAttribute('data-value'),
          e.getAttribute('class'),
        ]),
      ),
    ).toEqual([
      ['ok', '10', 'c-ok'],
      ['error', '3', 'c-error'],
      ['blocked', '2', 'c-blocked'],
      ['rate_limited', '1', 'c-limited'],
    ]);
    // Today's bar is the tallest: its segments fill the whole plot height.
    const heights = await today.evaluateAll((els) => els.map((e) => Number(e.getAttribute('height'))));
    expect(heights.reduce((a, b) => a + b, 0)).toBeCloseTo(150, 1);

    // The numbers behind it, in the table the details open: 7 days, today's row with its total.
    const details = page.locator('figure', { has: calls }).locator('details');
    await details.locator('summary').click();
    const rows = details.locator('tbody tr');
    expect(await rows.count()).toBe(7);
    expect(await rows.last().locator('td').allTextContents()).toEqual(['10', '3', '2', '1', '16']);

    const rowsOf = (id: string) =>
      page
        .locator(`svg[aria-labelledby="${id}-title ${id}-desc"] g.row`)
        .evaluateAll((els) => els.map((e) => [e.getAttribute('data-key'), e.getAttribute('data-total')]));
    expect(await rowsOf('tools')).toEqual([
      ['run_flow', '12'],
      ['list_runs', '9'],
      ['delete_flow', '2'],
    ]);
    expect(await rowsOf('keys')).toEqual([
      ['key_alpha', '14'],
      ['key_beta', '9'],
    ]);
    expect(await rowsOf('clients')).toEqual([
      ['claude-code', '17'],
      ['cursor', '6'],
    ]);
    expect(await rowsOf('flows')).toEqual([
      ['daily-report', '4'],
      ['enrich', '2'],
    ]);
    expect(
      await page
        .locator('svg[aria-labelledby="flows-title flows-desc"] g.row')
        .first()
        .locator('rect')
        .evaluateAll((els) => els.map((e) => [e.getAttribute('data-series'), e.getAttribute('data-value')])),
    ).toEqual([
      ['completed', '2'],
      ['failed', '1'],
      ['cancelled', '1'],
    ]);
    const tokens = page.locator('svg[data-chart="quota"] g.quota');
    expect(await tokens.getAttribute('data-value')).toBe('2500');
    expect(await tokens.getAttribute('data-limit')).toBeNull();
    expect(await page.getByTestId('usage-totals').textContent()).toBe(
      '23 MCP calls (5 with errors), 6 runs and 2,500 LLM tokens in the last 7 days, by day (UTC).',
    );
    expect(await page.content()).not.toContain('secret_tool');
  });

  it('fits 360 px without sideways scrolling, every chart scaled to the page', async () => {
    const { scrollWidth, widest } = await overflow();
    expect(widest).toBeNull();
    expect(scrollWidth).toBeLessThanOrEqual(WIDTH);
    const widths = await page
      .locator('svg.chart')
      .evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().width)));
    expect(widths).toHaveLength(6);
    for (const w of widths) {
      expect(w).toBeGreaterThan(250);
      expect(w).toBeLessThanOrEqual(WIDTH);
    }
    expect(await seriousAxeViolations(page)).toEqual([]);
    await shot('usage-02-week');
  });

  it('switches to the last 24 hours by hour with the period picker', async () => {
    await page.getByLabel('Period').selectOption('24h');
    await page.waitForURL(/range=24h/);
    const calls = page.locator('svg[data-chart="stacked-bars"]');
    expect(await calls.locator('title').first().textContent()).toBe('MCP calls per hour by outcome');
    expect(await calls.locator('g.bar').count()).toBe(1);
    expect(await page.locator('figure', { has: calls }).locator('tbody tr').count()).toBe(24);
    expect((await overflow()).widest).toBeNull();
    await shot('usage-03-day');
  });
});
