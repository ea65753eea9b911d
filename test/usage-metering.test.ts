import { openWorkspace, type UsageGroupBy, type UsageSeries } from '@flowgate/workspace';
import { LATEST_PROTOCOL_VERSION } from '@flowgate/workspace-mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, type McpSession } from './support/clients.js';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { mcpPost, rpc } from './support/mcp.js';
import { installFlow, SLEEP_NAP_FLOW, waitForRun } from './support/runs.js';

/**
 * Usage metering through the real gateway: a scripted workload of SDK clients (two keys, two client names, three
 * tools, some calls blocked, some failing, runs that complete and one cancelled) gives exact counts in every grouping
 * once a clean shutdown has flushed the meter, and another workspace's usage never shows.
 */

const WS = 'ws-usage';
const OTHER = 'ws-usage-other';
const TIGHT = 'ws-usage-tight';
const ALPHA = { name: 'agent-alpha', version: '1.0.0' };
const BETA = { name: 'agent-beta', version: '2.0.0' };

let gw: TestGateway;
let keyA: ServiceAccountKey;
let keyB: ServiceAccountKey;
let other: ServiceAccountKey;
let tight: ServiceAccountKey;
const sessions: McpSession[] = [];
let from: Date;

const open = async (flavour: 'sdk-v2' | 'sdk-v1', ws: string, key: ServiceAccountKey, clientInfo = ALPHA) => {
  const s = await connectClient(flavour, gw.mcpUrl(ws), { token: key.apiKey, clientInfo });
  sessions.push(s);
  return s;
};
const structured = (r: { structuredContent?: unknown }) => r.structuredContent as Record<string, unknown>;

beforeAll(async () => {
  from = new Date();
  gw = await startTestGateway({ FLOWGATE_WORKER: 'true' });
  await gw.createWorkspace(WS);
  await gw.createWorkspace(OTHER);
  await installFlow(gw, WS, 'nap', SLEEP_NAP_FLOW);
  keyA = await gw.mintKey(WS, ['workspace.full'], 'full');
  // May send feedback only: listing connections is blocked for it.
  keyB = await gw.mintKey(WS, ['feedback.send'], 'narrow');
  other = await gw.mintKey(OTHER, ['workspace.full'], 'other');

  // Key A as agent-alpha: 3 context, 2 connection lists, 2 completed runs, 1 run refused for its input.
  const a1 = await open('sdk-v2', WS, keyA, ALPHA);
  for (let i = 0; i < 3; i++) expect((await a1.callTool('get_workspace_context', {})).isError).toBeFalsy();
  for (let i = 0; i < 2; i++) expect((await a1.callTool('list_connections', {})).isError).toBeFalsy();
  for (let i = 0; i < 2; i++) {
    const done = await a1.callTool('call_flow_tool', {
      flow_slug: 'nap',
      tool_name: 'take_nap',
      input: { ms: 1 },
      wait_ms: 15_000,
    });
    expect(done.isError).toBeFalsy();
    expect((structured(done).run as { status: string }).status).toBe('completed');
  }
  const refused = await a1.callTool('call_flow_tool', { flow_slug: 'nap', tool_name: 'take_nap', input: {} });
  expect(refused.isError).toBe(true);

  // Key A as agent-beta: 1 context, 1 run left asleep and then cancelled.
  const a2 = await open('sdk-v1', WS, keyA, BETA);
  expect((await a2.callTool('get_workspace_context', {})).isError).toBeFalsy();
  const asleep = await a2.callTool('call_flow_tool', {
    flow_slug: 'nap',
    tool_name: 'take_nap',
    input: { ms: 600_000 },
  });
  const runId = (structured(asleep).run as { runId: string }).runId;
  await waitForRun(gw, WS, runId, (s) => s === 'waiting');
  const cancelled = await gw.admin('POST', `/api/workspaces/${WS}/runs/${runId}/cancel`, {});
  expect(cancelled.status).toBe(200);
  await waitForRun(gw, WS, runId);

  // Key B as agent-beta: 1 context, 2 blocked connection lists.
  const b = await open('sdk-v2', WS, keyB, BETA);
  expect((await b.callTool('get_workspace_context', {})).isError).toBeFalsy();
  for (let i = 0; i < 2; i++) expect((await b.callTool('list_connections', {})).isError).toBe(true);

  // Another workspace's own traffic.
  const o = await open('sdk-v2', OTHER, other, ALPHA);
  for (let i = 0; i < 4; i++) await o.callTool('get_workspace_context', {});

  // A workspace allowing 2 requests a minute: the third and fourth are rate-limited at the gate.
  await gw.createWorkspace(TIGHT);
  await gw.setPolicy(TIGHT, { rateLimitPerMinute: 2 });
  tight = await gw.mintKey(TIGHT, ['feedback.send'], 'tight');
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const a = await mcpPost(gw.mcpUrl(TIGHT), {
      token: tight.apiKey,
      protocolVersion: LATEST_PROTOCOL_VERSION,
      headers: { 'mcp-method': 'tools/call', 'user-agent': 'raw-agent/1' },
      body: rpc('tools/call', { name: 'get_workspace_context', arguments: {} }),
    });
    statuses.push(a.status);
  }
  expect(statuses).toEqual([200, 200, 429, 429]);

  for (const s of sessions.splice(0)) await s.close();
  // A clean shutdown flushes what the meter holds; the database stays open for reading.
  await gw.running.close();
}, 60_000);

afterAll(async () => {
  for (const s of sessions) await s.close().catch(() => {});
  await gw?.close();
});

async function series(ws: string, groupBy: UsageGroupBy): Promise<UsageSeries> {
  const workspace = openWorkspace(gw.running.deps.workspaceDeps, {
    workspaceId: ws,
    actor: { kind: 'operator', id: 'operator' },
  });
  return workspace.usage.series({
    from: new Date(from.getTime() - 3_600_000),
    to: new Date(Date.now() + 3_600_000),
    granularity: 'day',
    groupBy,
  });
}

/** Counts per group summed over the buckets (the workload may straddle an hour or a day). */
async function counts(ws: string, groupBy: UsageGroupBy, field: 'count' | 'errors' = 'count') {
  const out: Record<string, number> = {};
  for (const p of (await series(ws, groupBy)).points) out[p.group] = (out[p.group] ?? 0) + p[field];
  return out;
}

describe('usage of a scripted workload', () => {
  it('counts tools/call by tool, with errors', async () => {
    expect(await counts(WS, 'tool')).toEqual({
      get_workspace_context: 5,
      list_connections: 4,
      call_flow_tool: 4,
    });
    expect(await counts(WS, 'tool', 'errors')).toEqual({
      get_workspace_context: 0,
      list_connections: 0,
      call_flow_tool: 1,
    });
  });

  it('counts by outcome', async () => {
    expect(await counts(WS, 'outcome')).toEqual({ ok: 3 + 10, blocked: 2, error: 1 });
  });

  it('counts by method: one initialize per session, then the calls', async () => {
    expect(await counts(WS, 'method')).toEqual({ initialize: 3, 'tools/call': 13 });
  });

  it('counts by key and by client name', async () => {
    // Key A: 2 sessions (initialize each) + 8 calls as alpha + 2 as beta; key B: 1 session + 3 calls.
    expect(await counts(WS, 'key')).toEqual({ [keyA.keyId]: 2 + 8 + 2, [keyB.keyId]: 1 + 3 });
    expect(await counts(WS, 'client')).toEqual({ 'agent-alpha': 1 + 8, 'agent-beta': 2 + 2 + 3 });
  });

  it('counts runs by flow: started, completed and cancelled, with their steps', async () => {
    const s = await series(WS, 'flow');
    const runs = { started: 0, completed: 0, failed: 0, cancelled: 0 };
    let steps = 0;
    for (const p of s.points) {
      expect(p.group).toBe('nap');
      for (const k of Object.keys(runs) as Array<keyof typeof runs>) runs[k] += p.runs?.[k] ?? 0;
      steps += p.steps ?? 0;
    }
    expect(runs).toEqual({ started: 3, completed: 2, failed: 0, cancelled: 1 });
    // Each run started its one :sleep step, the cancelled one too (it was cancelled asleep in it): the counters the
    // run stored, whoever ended it.
    expect(steps).toBe(3);
    expect(s.totals).toEqual({ calls: 16, errors: 1, runs: 3, llmTokens: 0 });
  });

  it('answers durations as percentiles of the calls', async () => {
    for (const p of (await series(WS, 'tool')).points) {
      expect(p.p50Ms).not.toBeNull();
      expect(p.p95Ms as number).toBeGreaterThanOrEqual(p.p50Ms as number);
    }
  });

  it('counts rate-limited requests by key, with no tool or client taken from them', async () => {
    expect(await counts(TIGHT, 'outcome')).toEqual({ ok: 2, rate_limited: 2 });
    expect(await counts(TIGHT, 'key')).toEqual({ [tight.keyId]: 4 });
    expect(await counts(TIGHT, 'method')).toEqual({ 'tools/call': 4 });
    expect(await counts(TIGHT, 'tool')).toEqual({ get_workspace_context: 2, '(unknown)': 2 });
    expect(await counts(TIGHT, 'client')).toEqual({ 'raw-agent/1': 2, '(unknown)': 2 });
  });

  it("never shows another workspace's usage", async () => {
    expect(await counts(OTHER, 'tool')).toEqual({ get_workspace_context: 4 });
    expect(await counts(OTHER, 'key')).toEqual({ [other.keyId]: 5 });
    expect((await series(OTHER, 'flow')).points).toEqual([]);
    expect(JSON.stringify(await series(WS, 'key'))).not.toContain(other.keyId);
  });
});
