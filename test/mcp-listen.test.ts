import { generateEncryptionKey } from '@flowgate/secrets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_INFO } from './support/clients.js';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import {
  envelope,
  type ListenMessage,
  modernHeaders,
  NAP_FLOW,
  SUB_META,
  startNap,
  v2Client,
} from './support/listen.js';
import { asRpc, mcpPost, rpc } from './support/mcp.js';
import { installFlow } from './support/runs.js';

/**
 * subscriptions/listen (2026-07-28) against the real gateway and its in-process worker: the SDK v2 client's
 * `listen()` for run resources, a raw SSE read for the Tasks extension's `notifications/tasks`, tenancy (a foreign or
 * forged id is simply not acknowledged), the per-key cap, the maximum duration, and a second gateway on the same
 * database (no worker of its own) that sees the run change through the database.
 */

const WS = 'ws-listen-a';
const OTHER = 'ws-listen-b';
const MAX_SECONDS = 8;
const ENCRYPTION_KEY = generateEncryptionKey();

/** A flow whose per-flow endpoint lists `tools` (one MCP interface each); `code` changes its run, not its tools. */
function greeter(tools: readonly string[], code: string): string {
  const mcp = tools.map((name) => `{:tool-name "${name}" :invocation :default}`).join(' ');
  return `{:slug :greeter
 :invocations {:default {:inputs [{:name :who :type :string :required true}]}}
 :interfaces {:mcp [${mcp}]}
 :flow (flow/step :function :greet {:code ${code} :input (flow/input)})}`;
}

let gw: TestGateway;
let replica: TestGateway;
let key: ServiceAccountKey;
let otherKey: ServiceAccountKey;

beforeAll(async () => {
  gw = await startTestGateway({
    FLOWGATE_WORKER: 'true',
    FLOWGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    FLOWGATE_MCP_MAX_LISTENS_PER_KEY: '2',
    FLOWGATE_MCP_LISTEN_MAX_SECONDS: String(MAX_SECONDS),
    // A revoked key is refused within this bound; a listen stream notices at its next recheck after it.
    FLOWGATE_AUTH_CACHE_TTL_SECONDS: '1',
    FLOWGATE_MCP_LISTEN_RECHECK_SECONDS: '1',
  });
  await gw.createWorkspace(WS);
  await gw.createWorkspace(OTHER);
  await installFlow(gw, WS, 'nap', NAP_FLOW);
  await installFlow(gw, OTHER, 'nap', NAP_FLOW);
  await installFlow(gw, WS, 'greeter', greeter(['greet'], '(fn [x] {:hi (:who x)})'));
  key = await gw.mintKey(WS, ['workspace.full'], 'listener');
  otherKey = await gw.mintKey(OTHER, ['workspace.full'], 'other');
  // Same database, no worker: everything it pushes comes from what the first gateway's worker wrote.
  replica = await startTestGateway(
    { FLOWGATE_WORKER: 'false', FLOWGATE_ENCRYPTION_KEY: ENCRYPTION_KEY },
    { db: gw.db },
  );
}, 120_000);

let replicaClosed = false;

afterAll(async () => {
  if (!replicaClosed) await replica?.close();
  await gw?.close();
});

/** A raw listen: the HTTP answer, and every JSON-RPC message of its SSE body until the stream ends. */
async function rawListen(
  url: string,
  token: string,
  notifications: Record<string, unknown>,
  options: { declaresTasks?: boolean; id?: string } = {},
): Promise<{ status: number; type: string | null; messages: ListenMessage[]; ms: number }> {
  const started = Date.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: modernHeaders(token, 'subscriptions/listen'),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: options.id ?? 'listen-1',
      method: 'subscriptions/listen',
      params: { notifications, _meta: envelope(options.declaresTasks ?? false) },
    }),
  });
  const type = res.headers.get('content-type');
  const text = await res.text();
  const messages: ListenMessage[] = type?.startsWith('text/event-stream')
    ? text
        .split('\n\n')
        .map((block) =>
          block
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice(6))
            .join('\n'),
        )
        .filter((data) => data.length > 0)
        .map((data) => JSON.parse(data) as ListenMessage)
    : [JSON.parse(text) as ListenMessage];
  return { status: res.status, type, messages, ms: Date.now() - started };
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function cancelRun(ws: string, runId: string): Promise<void> {
  await gw.admin('POST', `/api/workspaces/${ws}/runs/${runId}/cancel`);
}

describe('subscriptions/listen (2026-07-28)', () => {
  it('advertises resources.subscribe in server/discover only; 2025 clients keep their capabilities and have no listen', async () => {
    const client = await v2Client(gw.mcpUrl(WS), key.apiKey);
    try {
      expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true });
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    } finally {
      await client.close();
    }
    const init = asRpc(
      await mcpPost(gw.mcpUrl(WS), {
        token: key.apiKey,
        body: rpc('initialize', {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: CLIENT_INFO,
        }),
      }),
    );
    expect((init.result?.capabilities as Record<string, unknown> | undefined)?.resources).toEqual({});
    expect((init.result?.capabilities as Record<string, unknown> | undefined)?.tools).toEqual({});
    const legacy = asRpc(
      await mcpPost(gw.mcpUrl(WS), {
        token: key.apiKey,
        protocolVersion: '2025-11-25',
        body: rpc('subscriptions/listen', { notifications: {} }),
      }),
    );
    expect(legacy.error?.code).toBe(-32601);
    // A malformed filter, or more than 50 URIs and ids, opens no stream.
    for (const notifications of [
      { resourceSubscriptions: 'flowgate://runs/x' },
      { resourceSubscriptions: Array.from({ length: 51 }, (_, i) => `flowgate://runs/r${i}`) },
    ]) {
      const bad = await rawListen(gw.mcpUrl(WS), key.apiKey, notifications);
      expect(bad.type).toMatch(/^application\/json/);
      expect(bad.messages[0]?.error?.code).toBe(-32602);
    }
  });

  it('pushes resources/updated for a subscribed run until it ends, and acknowledges only its own run resources', async () => {
    const client = await v2Client(gw.mcpUrl(WS), key.apiKey);
    const other = await v2Client(gw.mcpUrl(OTHER), otherKey.apiKey);
    try {
      const foreign = await startNap(other, 60_000);
      const runId = await startNap(client, 1_000);
      const updates: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', (n) => {
        updates.push(n.params.uri);
      });
      const own = [
        `flowgate://runs/${runId}`,
        `flowgate://runs/${runId}/result`,
        `flowgate://runs/${runId}/events`,
      ];
      const sub = await client.listen({
        resourceSubscriptions: [
          ...own,
          `flowgate://runs/${foreign}`,
          'flowgate://runs/run_doesnotexist',
          'flowgate://flows/nap',
        ],
      });
      expect(sub.honoredFilter).toEqual({ resourceSubscriptions: own });
      // The run ends, every URI was told, and with nothing left that can change the server ends the stream.
      expect(await sub.closed).toBe('graceful');
      expect(new Set(updates)).toEqual(new Set(own));
      expect(updates.filter((u) => u.endsWith('/result'))).toHaveLength(1);
      expect(updates.some((u) => u.includes(foreign))).toBe(false);
      await cancelRun(OTHER, foreign);
    } finally {
      await client.close();
      await other.close();
    }
  }, 30_000);

  it('pushes notifications/tasks, as tasks/get answers, to a client that declared the extension; forged ids are not acknowledged', async () => {
    const created = await fetch(gw.mcpUrl(WS), {
      method: 'POST',
      headers: modernHeaders(key.apiKey, 'tools/call', 'call_flow_tool'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'call_flow_tool',
          arguments: { flow_slug: 'nap', tool_name: 'take_nap', input: { ms: 800 } },
          _meta: envelope(true),
        },
      }),
    });
    const task = ((await created.json()) as { result: { resultType: string; taskId: string } }).result;
    expect(task.resultType).toBe('task');
    const taskId = task.taskId;

    const refused = await rawListen(
      gw.mcpUrl(WS),
      key.apiKey,
      { taskIds: [taskId] },
      { declaresTasks: false },
    );
    expect(refused.status).toBe(400);
    expect(refused.messages[0]?.error?.code).toBe(-32021);

    const { status, type, messages } = await rawListen(
      gw.mcpUrl(WS),
      key.apiKey,
      { taskIds: [taskId, `${taskId}x`, 'forged'] },
      { declaresTasks: true, id: 'tasks-listen' },
    );
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/event-stream/);
    const [ack, ...rest] = messages;
    expect(ack).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [taskId] }, _meta: { [SUB_META]: 'tasks-listen' } },
    });
    const pushes = rest.filter((m) => m.method === 'notifications/tasks');
    expect(pushes.length).toBeGreaterThanOrEqual(1);
    for (const push of pushes) {
      expect(push.params?.taskId).toBe(taskId);
      expect(push.params?._meta?.[SUB_META]).toBe('tasks-listen');
    }
    const last = pushes.at(-1);
    expect(last?.params?.status).toBe('completed');
    expect(last?.params?.result).toMatchObject({ resultType: 'complete' });
    // The final push is what tasks/get answers now (without the result envelope's own fields).
    const got = await fetch(gw.mcpUrl(WS), {
      method: 'POST',
      headers: modernHeaders(key.apiKey, 'tasks/get', taskId),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tasks/get',
        params: { taskId, _meta: envelope(true) },
      }),
    });
    const {
      _meta: _ignored,
      resultType: _type,
      ...view
    } = ((await got.json()) as { result: Record<string, unknown> }).result;
    const { _meta: _pushMeta, ...pushed } = last?.params ?? {};
    expect(pushed).toEqual(view);
    // Nothing but task statuses on a task's stream (no progress, no messages), then the empty result.
    expect(rest.slice(0, -1).every((m) => m.method === 'notifications/tasks')).toBe(true);
    expect(rest.at(-1)).toMatchObject({
      id: 'tasks-listen',
      result: { _meta: { [SUB_META]: 'tasks-listen' } },
    });
  }, 30_000);

  it('refuses a third open stream for the key (cap 2), and ends a stream at its maximum duration', async () => {
    const client = await v2Client(gw.mcpUrl(WS), key.apiKey);
    try {
      const runId = await startNap(client, 60_000);
      const uri = `flowgate://runs/${runId}`;
      const first = rawListen(gw.mcpUrl(WS), key.apiKey, { resourceSubscriptions: [uri] }, { id: 'a' });
      const second = rawListen(gw.mcpUrl(WS), key.apiKey, { resourceSubscriptions: [uri] }, { id: 'b' });
      await new Promise((r) => setTimeout(r, 1_000));
      const third = await rawListen(gw.mcpUrl(WS), key.apiKey, { resourceSubscriptions: [uri] }, { id: 'c' });
      expect(third.status).toBe(200);
      expect(third.messages[0]?.error).toMatchObject({
        code: -32600,
        data: { code: 'too_many_listens', bound: 'key', limit: 2 },
      });
      // Another key is not affected by this key's streams.
      const elsewhere = await rawListen(
        gw.mcpUrl(OTHER),
        otherKey.apiKey,
        { resourceSubscriptions: [] },
        { id: 'd' },
      );
      expect(elsewhere.messages.map((m) => m.method ?? 'result')).toEqual([
        'notifications/subscriptions/acknowledged',
        'result',
      ]);
      for (const stream of await Promise.all([first, second])) {
        expect(stream.ms).toBeGreaterThanOrEqual(MAX_SECONDS * 1000 - 100);
        expect(stream.ms).toBeLessThan(MAX_SECONDS * 1000 + 5_000);
        expect(stream.messages[0]?.params?.notifications).toEqual({ resourceSubscriptions: [uri] });
        expect(stream.messages.at(-1)?.result?._meta?.[SUB_META]).toBeDefined();
      }
      // The slots were given back.
      expect(gw.running.deps.mcpListens.gate.held()).toEqual({ total: 0, keys: 0 });
      await cancelRun(WS, runId);
    } finally {
      await client.close();
    }
  }, 30_000);

  it('delivers on a second gateway on the same database, which runs nothing itself', async () => {
    const starter = await v2Client(gw.mcpUrl(WS), key.apiKey);
    const listener = await v2Client(replica.mcpUrl(WS), key.apiKey);
    try {
      const runId = await startNap(starter, 800);
      const updates: string[] = [];
      listener.setNotificationHandler('notifications/resources/updated', (n) => {
        updates.push(n.params.uri);
      });
      const sub = await listener.listen({ resourceSubscriptions: [`flowgate://runs/${runId}/result`] });
      expect(sub.honoredFilter).toEqual({ resourceSubscriptions: [`flowgate://runs/${runId}/result`] });
      expect(await sub.closed).toBe('graceful');
      expect(updates).toEqual([`flowgate://runs/${runId}/result`]);
    } finally {
      await starter.close();
      await listener.close();
    }
  }, 30_000);
  it('tells a changed tool list (the workspace policy) and ends once the key is revoked', async () => {
    const revocable = await gw.mintKey(WS, ['workspace.full'], 'revocable');
    const client = await v2Client(gw.mcpUrl(WS), revocable.apiKey);
    try {
      let changed = 0;
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        changed++;
      });
      const listened = Date.now();
      const sub = await client.listen({ toolsListChanged: true, promptsListChanged: true });
      expect(sub.honoredFilter).toEqual({ toolsListChanged: true });
      await gw.setPolicy(WS, { disabledTools: ['send_feedback'] });
      await until(() => changed === 1, 3_000);
      await gw.setPolicy(WS, { disabledTools: [] });
      await until(() => changed === 2, 3_000);
      const revoked = await gw.admin(
        'DELETE',
        `/api/workspaces/${WS}/service-accounts/${revocable.serviceAccountId}/keys/${revocable.keyId}`,
      );
      expect(revoked.status).toBeLessThan(300);
      expect(await sub.closed).toBe('graceful');
      // Ended by the revocation, before the stream's maximum duration.
      expect(Date.now() - listened).toBeLessThan(MAX_SECONDS * 1000 - 500);
    } finally {
      await client.close();
    }
  }, 40_000);

  it('tells a per-flow endpoint when a release changes its tool list, and nothing for a release that keeps it', async () => {
    const flowUrl = `${gw.url}/api/workspaces/${WS}/flows/greeter/mcp`;
    const client = await v2Client(flowUrl, key.apiKey);
    try {
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
      let changed = 0;
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        changed++;
      });
      const sub = await client.listen({ toolsListChanged: true, promptsListChanged: true });
      expect(sub.honoredFilter).toEqual({ toolsListChanged: true });
      // A new version whose interfaces are the same: its run changes, its tools/list does not.
      await installFlow(gw, WS, 'greeter', greeter(['greet'], '(fn [x] {:hello (:who x)})'));
      // Three rechecks (one per second here) see the new version and find the same list.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(changed).toBe(0);
      // A version that adds an MCP tool is told within a recheck or two.
      await installFlow(gw, WS, 'greeter', greeter(['greet', 'greet_loudly'], '(fn [x] {:hello (:who x)})'));
      const released = Date.now();
      await until(() => changed === 1, 3_000);
      expect(Date.now() - released).toBeLessThan(3_000);
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toEqual([
        'greet',
        'greet_loudly',
        'get_run_status',
        'inspect_run_step',
      ]);
      // Renaming one is a change too; nothing else was pushed in between.
      await installFlow(gw, WS, 'greeter', greeter(['greet', 'shout'], '(fn [x] {:hello (:who x)})'));
      await until(() => changed === 2, 3_000);
      await sub.close();
      expect(await sub.closed).toBe('local');
      expect(changed).toBe(2);
    } finally {
      await client.close();
    }
  }, 40_000);

  it('ends open streams with their graceful result when the gateway shuts down, so shutdown does not wait for them', async () => {
    const client = await v2Client(gw.mcpUrl(WS), key.apiKey);
    try {
      const runId = await startNap(client, 60_000);
      const stream = rawListen(replica.mcpUrl(WS), key.apiKey, {
        resourceSubscriptions: [`flowgate://runs/${runId}`],
      });
      await new Promise((r) => setTimeout(r, 1_000));
      const started = Date.now();
      replicaClosed = true;
      const closed = replica.close();
      const { messages, ms } = await stream;
      const streamEndedAfter = Date.now() - started;
      await closed;
      expect(streamEndedAfter).toBeLessThan(1_000);
      expect(ms).toBeLessThan(MAX_SECONDS * 1000);
      // The run may still have been starting when the stream opened (an update or two), then the graceful end.
      const kinds = messages.map((m) => m.method ?? 'result');
      expect(kinds[0]).toBe('notifications/subscriptions/acknowledged');
      expect(kinds.at(-1)).toBe('result');
      for (const m of messages.slice(1, -1)) {
        expect(m.method).toBe('notifications/resources/updated');
        expect(m.params?.uri).toBe(`flowgate://runs/${runId}`);
      }
      await cancelRun(WS, runId);
    } finally {
      await client.close();
    }
  }, 30_000);
});
