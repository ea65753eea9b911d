import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { asRpc, mcpPost, rpc } from './support/mcp.js';
import { installFlow, SLEEP_NAP_FLOW } from './support/runs.js';

/**
 * Admission control on the MCP endpoint (FLOWGATE_MCP_MAX_IN_FLIGHT): past the bound of requests in progress that
 * reach the database, a request is answered `busy` at once (503, Retry-After, nothing started), while list calls
 * and ping are still served; a slot frees when its request's answer is done.
 */

const WS = 'ws-admission';
const V = '2025-11-25';

let gw: TestGateway;
let key: ServiceAccountKey;

beforeAll(async () => {
  gw = await startTestGateway({ FLOWGATE_WORKER: 'true', FLOWGATE_MCP_MAX_IN_FLIGHT: '1' });
  await gw.createWorkspace(WS);
  await installFlow(gw, WS, 'nap', SLEEP_NAP_FLOW);
  key = await gw.mintKey(WS, ['workspace.full'], 'agent');
}, 120_000);

afterAll(async () => {
  await gw?.close();
});

const post = (method: string, params?: Record<string, unknown>) =>
  mcpPost(gw.mcpUrl(WS), { token: key.apiKey, protocolVersion: V, body: rpc(method, params) });
const nap = (ms: number, waitMs: number) =>
  post('tools/call', {
    name: 'call_flow_tool',
    arguments: { flow_slug: 'nap', tool_name: 'take_nap', input: { ms }, wait_ms: waitMs },
  });

async function runCount(): Promise<number> {
  const page = await gw.admin('GET', `/api/workspaces/${WS}/runs?limit=100`);
  return (page.json as { items: unknown[] }).items.length;
}

describe('MCP admission control', () => {
  it('answers busy past the bound, keeps serving list calls, and admits again once a slot frees', async () => {
    const held = nap(1_500, 10_000);
    // The parked call holds the only slot once its run exists.
    const deadline = Date.now() + 10_000;
    while ((await runCount()) < 1) {
      if (Date.now() > deadline) throw new Error('the first call did not start its run');
      await new Promise((r) => setTimeout(r, 20));
    }
    const refused = await nap(10, 1_000);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(asRpc(refused)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message: 'The gateway is busy: too many requests in progress; retry after 1 s',
        data: { code: 'busy', retryAfterSeconds: 1 },
      },
    });
    expect(await runCount()).toBe(1);
    const list = await post('tools/list', {});
    expect(list.status).toBe(200);
    expect(asRpc(list).result?.tools).toBeDefined();
    expect((await post('ping')).status).toBe(200);

    const first = asRpc(await held);
    expect(first.result?.structuredContent).toMatchObject({ run: { status: 'completed' } });
    const next = await nap(10, 5_000);
    expect(next.status).toBe(200);
    expect(asRpc(next).result?.structuredContent).toMatchObject({ run: { status: 'completed' } });
  });
});
