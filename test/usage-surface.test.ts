import { runWith } from '@flowgate/cli/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from './support/console-http.js';
import {
  ADMIN_TOKEN,
  type ServiceAccountKey,
  startTestGateway,
  type TestGateway,
} from './support/gateway.js';
import { modernHeaders, V2 } from './support/listen.js';
import { mcpPost, rpc } from './support/mcp.js';

/**
 * Real MCP traffic through the gateway's meter, read back three ways: the admin API, `flowgate usage` and the
 * console's Usage page answer the same numbers, and only for the workspace asked about.
 */

const WS = 'ws-usage-e2e';
const OTHER = 'ws-usage-e2e-other';

let gw: TestGateway;
let alpha: ServiceAccountKey;
let beta: ServiceAccountKey;

interface Point {
  time: string;
  group: string;
  count: number;
  errors: number;
}
interface Series {
  points: Point[];
  totals: { calls: number; errors: number; runs: number; llmTokens: number };
}

/** One 2026-07-28 tools/call, naming its client in the request's own envelope. */
async function callTool(
  ws: string,
  key: ServiceAccountKey,
  client: string,
  name: string,
  args: Record<string, unknown> = {},
) {
  const answer = await mcpPost(gw.mcpUrl(ws), {
    token: key.apiKey,
    headers: modernHeaders(key.apiKey, 'tools/call', name),
    body: rpc('tools/call', {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V2,
        'io.modelcontextprotocol/clientInfo': { name: client, version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    }),
  });
  expect(answer.status, `${name} by ${client}`).toBe(200);
  return answer.json as { result?: { isError?: boolean }; error?: unknown };
}

async function usage(ws: string, groupBy: string): Promise<Series> {
  const res = await gw.admin('GET', `/api/workspaces/${ws}/usage?group_by=${groupBy}`);
  expect(res.status).toBe(200);
  return res.json as Series;
}

/** Sums of count per group, whatever the buckets. */
function byGroup(series: Series): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const p of series.points) sums[p.group] = (sums[p.group] ?? 0) + p.count;
  return sums;
}

beforeAll(async () => {
  gw = await startTestGateway();
  await gw.createWorkspace(WS);
  await gw.createWorkspace(OTHER);
  alpha = await gw.mintKey(WS, ['workspace.full'], 'alpha');
  beta = await gw.mintKey(WS, ['workspace.full'], 'beta');
  const gamma = await gw.mintKey(OTHER, ['workspace.full'], 'gamma');
  // Disabled by policy: calling it is a blocked call.
  await gw.setPolicy(WS, { disabledTools: ['list_connections'] });

  for (let i = 0; i < 3; i++) await callTool(WS, alpha, 'claude-code', 'get_workspace_context');
  // No such run: a tool error.
  const failed = await callTool(WS, alpha, 'claude-code', 'get_run_status', { run_id: 'run_doesnotexist00' });
  expect(failed.result?.isError).toBe(true);
  for (let i = 0; i < 2; i++) await callTool(WS, beta, 'cursor', 'get_workspace_context');
  for (let i = 0; i < 2; i++) await callTool(WS, beta, 'cursor', 'list_connections');
  for (let i = 0; i < 4; i++) await callTool(OTHER, gamma, 'other-client', 'get_workspace_context');

  // The meter writes with the audit queue (every 250 ms): wait until all 12 calls are in.
  const deadline = Date.now() + 10_000;
  while ((await usage(WS, 'tool')).totals.calls < 8 || (await usage(OTHER, 'tool')).totals.calls < 4) {
    if (Date.now() > deadline) throw new Error('the usage of the workload never arrived');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

afterAll(async () => gw?.close());

describe('usage of a real workload', () => {
  it('the API counts it in every grouping', async () => {
    expect(byGroup(await usage(WS, 'tool'))).toEqual({
      get_workspace_context: 5,
      get_run_status: 1,
      list_connections: 2,
    });
    expect(byGroup(await usage(WS, 'key'))).toEqual({ [alpha.keyId]: 4, [beta.keyId]: 4 });
    expect(byGroup(await usage(WS, 'client'))).toEqual({ 'claude-code': 4, cursor: 4 });
    expect(byGroup(await usage(WS, 'outcome'))).toEqual({ ok: 5, error: 1, blocked: 2 });
    expect(byGroup(await usage(WS, 'method'))).toEqual({ 'tools/call': 8 });
    expect((await usage(WS, 'tool')).totals).toEqual({ calls: 8, errors: 1, runs: 0, llmTokens: 0 });
    expect(byGroup(await usage(OTHER, 'client'))).toEqual({ 'other-client': 4 });
  });

  it('flowgate usage prints the same numbers', async () => {
    const env = { FLOWGATE_API_URL: gw.url, FLOWGATE_ADMIN_TOKEN: ADMIN_TOKEN };
    const json = await runWith(['usage', '--workspace', WS, '--by', 'outcome', '--json'], { env });
    expect(json.code).toBe(0);
    const cli = JSON.parse(json.stdout) as Series;
    const api = await usage(WS, 'outcome');
    expect(cli.points).toEqual(api.points);
    expect(cli.totals).toEqual(api.totals);
    const table = await runWith(['usage', '--workspace', WS, '--by', 'client'], { env });
    expect(table.stdout.split('\n').slice(0, 3)).toEqual([
      'CLIENT       CALLS  ERRORS',
      'claude-code  4      1',
      'cursor       4      0',
    ]);
  });

  it("the console's Usage page draws the same numbers, and the operator sees both workspaces", async () => {
    const browser = new ConsoleClient(gw.url);
    expect((await browser.signIn('token', ADMIN_TOKEN)).status).toBe(303);
    const { res, html } = await browser.page(`/console/w/${WS}/usage`);
    expect(res.status).toBe(200);
    expect(html).toContain('8 MCP calls (1 with errors), 0 runs and 0 LLM tokens in the last 7 days');
    const today = new Date(Math.floor(Date.now() / 86_400_000) * 86_400_000).toISOString();
    expect(html).toMatch(new RegExp(`<g class="bar" data-key="${today}" data-total="8">`));
    for (const [series, value] of [
      ['ok', 5],
      ['error', 1],
      ['blocked', 2],
    ] as const)
      expect(html).toMatch(
        new RegExp(`<rect class="c-${series}"[^>]* data-series="${series}" data-value="${value}"`),
      );
    expect(html).toContain('<g class="row" data-key="get_workspace_context" data-total="5">');
    expect(html).not.toContain('other-client');
    const workspaces = await browser.page('/console/workspaces');
    expect(workspaces.html).toContain(`<div class="spark-cell" data-workspace="${WS}" data-total="8">`);
    expect(workspaces.html).toContain(`<div class="spark-cell" data-workspace="${OTHER}" data-total="4">`);
  });
});
