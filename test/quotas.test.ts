import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_FLAVOURS, connectClient, type McpSession } from './support/clients.js';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { type OpenAiStandIn, startOpenAiStandIn } from './support/openai-standin.js';
import { installFlow, startRun, waitForRun } from './support/runs.js';

/**
 * Issue 27, quotas: a workspace's MCP policy bounds its run starts and LLM tokens per UTC month and its MCP tool calls
 * per UTC day. The first call past a limit is refused before any work with `quota_exceeded` (which quota, the limit,
 * when it resets): an `isError` tool result over MCP, a 429 with Retry-After on the admin API, the step error of a run
 * whose :llm step would pass the month's tokens.
 */

const ENV = { FLOWGATE_WORKER: 'true', FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true' };
const ECHO = `{:slug :echo
 :invocations {:default {:inputs [{:name :n :type :integer :required true}]}}
 :interfaces {:mcp [{:tool-name "echo" :invocation :default}]}
 :flow (flow/step :function :echo {:code (fn [x] x) :input (flow/input)})}`;
/** Two model calls in a row; the stand-in counts 15 tokens for each. */
const TWO_ASKS = `{:slug :two-asks
 :requires [{:slot :llm :type :llm-provider}]
 :invocations {:default {:inputs []}}
 :flow (let [a (flow/step :llm :first {:connection :llm :model "m" :prompt "one"})
             b (flow/step :llm :second {:connection :llm :model "m" :prompt "two"})]
         [(:text a) (:text b)])}`;

const MESSAGE = {
  runsPerMonth: (limit: number, at: string) =>
    `This workspace used its quota of ${limit} run starts per month (runsPerMonth); it resets at ${at}`,
  llmTokensPerMonth: (limit: number, at: string) =>
    `This workspace used its quota of ${limit} LLM tokens per month (llmTokensPerMonth); it resets at ${at}`,
  toolCallsPerDay: (limit: number, at: string) =>
    `This workspace used its quota of ${limit} MCP tool calls per day (toolCallsPerDay); it resets at ${at}`,
};

function nextUtcDay(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
}
function nextUtcMonth(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
}

let gw: TestGateway;
let llm: OpenAiStandIn;

beforeAll(async () => {
  llm = await startOpenAiStandIn(() => ({ text: 'fine' }));
  gw = await startTestGateway(ENV);
});

afterAll(async () => {
  await gw?.close();
  await llm?.close();
});

const policy = async (ws: string) => {
  const res = await gw.admin('GET', `/api/workspaces/${ws}/mcp-policy`);
  expect(res.status).toBe(200);
  return res.json as Record<string, unknown>;
};

describe('the quotas of the MCP policy', () => {
  it('are validated: 0, -1, 1.5, strings, too large and unknown quotas are refused and change nothing', async () => {
    const ws = 'ws-quota-valid';
    await gw.createWorkspace(ws);
    expect(
      (await gw.admin('PUT', `/api/workspaces/${ws}/mcp-policy`, { quotas: { runsPerMonth: 9 } })).status,
    ).toBe(200);
    const before = await policy(ws);
    expect(before.quotas).toEqual({ runsPerMonth: 9, llmTokensPerMonth: null, toolCallsPerDay: null });
    for (const [name, value] of [
      ['runsPerMonth', 0],
      ['toolCallsPerDay', -1],
      ['llmTokensPerMonth', 1.5],
      ['runsPerMonth', '5'],
      ['toolCallsPerDay', true],
      ['runsPerMonth', 2_000_000_000],
    ] as const) {
      const res = await gw.admin('PUT', `/api/workspaces/${ws}/mcp-policy`, {
        readOnly: true,
        quotas: { [name]: value },
      });
      expect(res.status, `${name}=${value}`).toBe(400);
      const body = res.json as { code: string; issues: Array<{ path: string; message: string }> };
      expect(body.code).toBe('validation_failed');
      expect(body.issues).toHaveLength(1);
      expect(body.issues[0]?.path).toBe(`quotas.${name}`);
      if (value !== 2_000_000_000)
        expect(body.issues[0]?.message).toBe('must be a positive integer or null (no quota)');
      expect(await policy(ws)).toEqual(before);
    }
    const unknown = await gw.admin('PUT', `/api/workspaces/${ws}/mcp-policy`, { quotas: { runsPerWeek: 5 } });
    expect(unknown.status).toBe(400);
    expect(await policy(ws)).toEqual(before);

    // Left out: unchanged; null: removed; each quota on its own.
    const kept = await gw.admin('PUT', `/api/workspaces/${ws}/mcp-policy`, { readOnly: false, quotas: {} });
    expect((kept.json as { quotas: unknown }).quotas).toEqual(before.quotas);
    const both = await gw.admin('PUT', `/api/workspaces/${ws}/mcp-policy`, {
      quotas: { llmTokensPerMonth: 1_000_000_000_000, toolCallsPerDay: 3 },
    });
    expect((both.json as { quotas: unknown }).quotas).toEqual({
      runsPerMonth: 9,
      llmTokensPerMonth: 1_000_000_000_000,
      toolCallsPerDay: 3,
    });
    await gw.admin('PUT', `/api/workspaces/${ws}/mcp-policy`, { quotas: { runsPerMonth: null } });
    expect((await policy(ws)).quotas).toEqual({
      runsPerMonth: null,
      llmTokensPerMonth: 1_000_000_000_000,
      toolCallsPerDay: 3,
    });
  });
});

describe.each(CLIENT_FLAVOURS)('toolCallsPerDay with the %s client', (flavour) => {
  const ws = `ws-quota-calls-${flavour}`;
  let key: ServiceAccountKey;
  let s: McpSession;
  beforeAll(async () => {
    await gw.createWorkspace(ws);
    key = await gw.mintKey(ws, ['flows.read'], 'caller');
    s = await connectClient(flavour, gw.mcpUrl(ws), { token: key.apiKey });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('refuses the first tools/call past the day with a quota_exceeded tool error; null lifts it', async () => {
    await gw.setPolicy(ws, { quotas: { toolCallsPerDay: 2 } });
    for (let i = 0; i < 2; i++)
      expect((await s.callTool('search_flows', { query: 'x' })).isError).toBeFalsy();
    const resetsAt = nextUtcDay();
    const refused = await s.callTool('search_flows', { query: 'x' });
    expect(refused).toEqual({
      isError: true,
      content: [{ type: 'text', text: MESSAGE.toolCallsPerDay(2, resetsAt) }],
      structuredContent: {
        error: { code: 'quota_exceeded', message: MESSAGE.toolCallsPerDay(2, resetsAt) },
        details: { quota: 'toolCallsPerDay', limit: 2, resetsAt },
      },
    });
    // Policy comes first: a tool the key may not call is still answered as blocked, and lists are not counted.
    const blocked = await s.callTool('send_feedback', { area: 'other', summary: 'hi' });
    expect((blocked.structuredContent as { error: { code: string } }).error.code).toBe('tool_blocked');
    expect((await s.listTools()).length).toBeGreaterThan(0);
    // Another workspace counts its own calls.
    const other = `${ws}-other`;
    await gw.createWorkspace(other);
    await gw.setPolicy(other, { quotas: { toolCallsPerDay: 2 } });
    const otherKey = await gw.mintKey(other, ['flows.read'], 'other');
    const o = await connectClient(flavour, gw.mcpUrl(other), { token: otherKey.apiKey });
    try {
      expect((await o.callTool('search_flows', { query: 'x' })).isError).toBeFalsy();
    } finally {
      await o.close();
    }
    // The refused call is audited as the error it was.
    const items = await gw.waitForAudit(ws, (all) => all.some((i) => i.errorCode === 'quota_exceeded'));
    expect(items.filter((i) => i.errorCode === 'quota_exceeded').map((i) => [i.action, i.outcome])).toEqual([
      ['search_flows', 'error'],
    ]);

    await gw.setPolicy(ws, { quotas: { toolCallsPerDay: null } });
    expect((await s.callTool('search_flows', { query: 'x' })).isError).toBeFalsy();
  });
});

describe('runsPerMonth', () => {
  const ws = 'ws-quota-runs';
  let s: McpSession;
  let key: ServiceAccountKey;
  beforeAll(async () => {
    await gw.createWorkspace(ws);
    await installFlow(gw, ws, 'echo', ECHO);
    key = await gw.mintKey(ws, ['flows.read', 'flows.run'], 'runner');
    s = await connectClient('sdk-v2', gw.mcpUrl(ws), { token: key.apiKey });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('bounds starts from every edge: the admin API answers 429 with Retry-After, call_flow_tool a tool error', async () => {
    await gw.setPolicy(ws, { quotas: { runsPerMonth: 2 } });
    await startRun(gw, ws, 'echo', { n: 1 });
    const viaMcp = await s.callTool('call_flow_tool', {
      flow_slug: 'echo',
      tool_name: 'echo',
      input: { n: 2 },
    });
    expect(viaMcp.isError).toBeFalsy();

    const resetsAt = nextUtcMonth();
    const secondsLeft = () => Math.ceil((Date.parse(resetsAt) - Date.now()) / 1000);
    // The seconds to the reset as the gateway counted them while it answered: between the counts before and after.
    const atMost = secondsLeft();
    const refused = await gw.admin('POST', `/api/workspaces/${ws}/flows/echo/runs`, { input: { n: 3 } });
    const atLeast = secondsLeft();
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(atLeast);
    expect(retryAfter).toBeLessThanOrEqual(atMost);
    expect(refused.json).toEqual({
      code: 'quota_exceeded',
      message: MESSAGE.runsPerMonth(2, resetsAt),
      quota: 'runsPerMonth',
      limit: 2,
      resetsAt,
      retryAfterSeconds: retryAfter,
    });
    const toolRefused = await s.callTool('call_flow_tool', {
      flow_slug: 'echo',
      tool_name: 'echo',
      input: { n: 4 },
    });
    expect(toolRefused).toEqual({
      isError: true,
      content: [{ type: 'text', text: MESSAGE.runsPerMonth(2, resetsAt) }],
      structuredContent: {
        error: { code: 'quota_exceeded', message: MESSAGE.runsPerMonth(2, resetsAt) },
        details: { quota: 'runsPerMonth', limit: 2, resetsAt },
      },
    });
    // The flow's own endpoint starts runs through the same start: its tool answers the same refusal.
    const own = await connectClient('sdk-v1', `${gw.url}/api/workspaces/${ws}/flows/echo/mcp`, {
      token: key.apiKey,
    });
    try {
      expect(await own.callTool('echo', { n: 5 })).toEqual(toolRefused);
    } finally {
      await own.close();
    }
    const runs = await gw.admin('GET', `/api/workspaces/${ws}/runs`);
    expect((runs.json as { items: unknown[] }).items).toHaveLength(2);
    const standing = await gw.admin('GET', `/api/workspaces/${ws}/quotas`);
    expect(standing.status).toBe(200);
    const monthStart = new Date(Date.parse(resetsAt));
    monthStart.setUTCMonth(monthStart.getUTCMonth() - 1);
    expect((standing.json as { items: unknown[] }).items[0]).toEqual({
      quota: 'runsPerMonth',
      limit: 2,
      used: 2,
      periodStart: monthStart.toISOString(),
      resetsAt,
    });

    await gw.setPolicy(ws, { quotas: { runsPerMonth: 3 } });
    await startRun(gw, ws, 'echo', { n: 5 });
  });
});

describe('llmTokensPerMonth', () => {
  const ws = 'ws-quota-tokens';
  beforeAll(async () => {
    await gw.createWorkspace(ws);
    const conn = await gw.createConnection(ws, {
      name: 'llm',
      type: 'llm-provider',
      baseUrl: llm.baseUrl,
      auth: { type: 'bearer', secret: 'sk-quota-test-0123456789' },
    });
    await installFlow(gw, ws, 'two-asks', TWO_ASKS, { llm: conn.connectionId });
  });

  it('refuses an :llm step at its start once the month is used up: the run fails with quota_exceeded there', async () => {
    await gw.setPolicy(ws, { quotas: { llmTokensPerMonth: 10 } });
    const asked = llm.requests.length;
    const resetsAt = nextUtcMonth();
    // The first call is admitted (0 < 10) and uses 15; the second step is refused before it asks.
    const first = await waitForRun(gw, ws, await startRun(gw, ws, 'two-asks', {}));
    expect(first.status).toBe('failed');
    expect(first.error).toEqual({
      code: 'quota_exceeded',
      message: `step \`second\` failed: ${MESSAGE.llmTokensPerMonth(10, resetsAt)}`,
      stepId: 'second',
    });
    expect(first.steps.map((st) => [st.stepId, st.status])).toEqual([
      ['first', 'completed'],
      ['second', 'failed'],
    ]);
    expect(llm.requests.length).toBe(asked + 1);
    // The next run is refused at its first step, having asked nothing.
    const second = await waitForRun(gw, ws, await startRun(gw, ws, 'two-asks', {}));
    expect(second.error).toMatchObject({ code: 'quota_exceeded', stepId: 'first' });
    expect(llm.requests.length).toBe(asked + 1);
    // Raised to 31: 15 used, so both calls of a run are admitted (15 < 31, 30 < 31).
    await gw.setPolicy(ws, { quotas: { llmTokensPerMonth: 31 } });
    const third = await waitForRun(gw, ws, await startRun(gw, ws, 'two-asks', {}));
    expect(third.status).toBe('completed');
    expect(llm.requests.length).toBe(asked + 3);
    const fourth = await waitForRun(gw, ws, await startRun(gw, ws, 'two-asks', {}));
    expect(fourth.error).toMatchObject({ code: 'quota_exceeded', stepId: 'first' });
  });
});
