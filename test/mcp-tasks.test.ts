import { LIVE_RUN_STATUSES } from '@flowgate/core';
import { schema } from '@flowgate/db';
import { generateEncryptionKey } from '@flowgate/secrets';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  JsonRpcResponseError,
  type RawClientDispatch,
  type TaskEnabledSession,
} from '@modelcontextprotocol/ext-tasks/client';
import { taskId as asTaskId, type TaskId } from '@modelcontextprotocol/ext-tasks/core';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_INFO } from './support/clients.js';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { asRpc, mcpPost, rpc, STREAMABLE_ACCEPT } from './support/mcp.js';
import { installFlow, SLEEP_NAP_FLOW } from './support/runs.js';

/**
 * Runs as MCP Tasks, driven by the SDK's own requester (`@modelcontextprotocol/ext-tasks`) over the SDK v2 client
 * against the real gateway and its in-process worker, on 2025-11-25 (experimental Tasks: params.task, tasks/get,
 * tasks/result, tasks/list, tasks/cancel) and on 2026-07-28 (the io.modelcontextprotocol/tasks extension: the server
 * directs task creation, tasks/get carries the result).
 */

const WS = 'ws-tasks-a';
const OTHER = 'ws-tasks-b';
const V2 = '2026-07-28';
const NAP_MS = 1500;

const BREAKS = `{:slug :breaks
 :invocations {:default {:inputs [{:name :n :type :integer :required true}]}}
 :interfaces {:mcp [{:tool-name "break_it" :invocation :default}]}
 :flow (flow/step :function :divide {:code (fn [x] (/ 1 (- (:n x) (:n x)))) :input (flow/input)})}`;

const GREET = `{:slug :greet
 :invocations {:default {:inputs [{:name :name :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "greet_person" :invocation :default}]}
 :flow (flow/step :function :greet {:code (fn [x] {:greeting (str "hello " (:name x))}) :input (flow/input)})}`;

type Generation = 'v1' | 'v2';

/** Shared by both replicas: the cursor (and task id) key is derived from it. */
const ENCRYPTION_KEY = generateEncryptionKey();

let gw: TestGateway;
/** A second gateway on the same database with no worker: another replica behind the same load balancer. */
let replica: TestGateway;
let key: ServiceAccountKey;
let otherKey: ServiceAccountKey;

beforeAll(async () => {
  gw = await startTestGateway({ FLOWGATE_WORKER: 'true', FLOWGATE_ENCRYPTION_KEY: ENCRYPTION_KEY });
  replica = await startTestGateway({ FLOWGATE_ENCRYPTION_KEY: ENCRYPTION_KEY }, { db: gw.db });
  await gw.createWorkspace(WS);
  await gw.createWorkspace(OTHER);
  await installFlow(gw, WS, 'nap', SLEEP_NAP_FLOW);
  await installFlow(gw, WS, 'greet', GREET);
  await installFlow(gw, WS, 'breaks', BREAKS);
  await installFlow(gw, OTHER, 'nap', SLEEP_NAP_FLOW);
  key = await gw.mintKey(WS, ['workspace.full'], 'tasks');
  otherKey = await gw.mintKey(OTHER, ['workspace.full'], 'tasks-other');
}, 120_000);

afterAll(async () => {
  await replica?.close();
  await gw?.close();
});

/**
 * ext-tasks needs a raw request path for 2026-07-28 task traffic (the SDK client's codecs do not know task results):
 * a plain POST with the headers that revision requires; ext-tasks supplies the envelope and the task's Mcp-Name.
 */
function rawDispatchFor(url: string, token: string): RawClientDispatch {
  let id = 0;
  return async (request, options) => {
    const message = request as { method: string; params?: { name?: unknown } };
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: STREAMABLE_ACCEPT,
      'mcp-protocol-version': V2,
      'mcp-method': message.method,
    };
    if (message.method === 'tools/call' && typeof message.params?.name === 'string')
      headers['mcp-name'] = message.params.name;
    for (const [name, value] of Object.entries(options?.context?.headers ?? {}))
      if (value !== undefined) headers[name.toLowerCase()] = value;
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: `raw-${++id}`, ...message }),
      signal: options?.signal ?? null,
    });
    const body = (await res.json()) as {
      result?: Record<string, never>;
      error?: { code: number; message: string };
    };
    return body.error ? { kind: 'error', error: body.error } : { kind: 'result', result: body.result ?? {} };
  };
}

interface Connected {
  client: Client;
  session: TaskEnabledSession;
  close(): Promise<void>;
}

async function connect(generation: Generation, url: string, token: string): Promise<Connected> {
  const client = new Client(CLIENT_INFO, {
    capabilities: {},
    ...(generation === 'v2' ? { versionNegotiation: { mode: { pin: V2 } } } : {}),
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  const session =
    generation === 'v1'
      ? createTaskSessionFromClient(client, { endpointId: url })
      : createTaskSessionFromClient(client, {
          endpointId: url,
          rawDispatch: rawDispatchFor(url, token),
          v2RequestFraming: { protocolVersion: V2, clientInfo: CLIENT_INFO, clientCapabilities: {} },
        });
  return {
    client,
    session,
    async close() {
      await session.close();
      await client.close();
    },
  };
}

/** A plain SDK client (no ext-tasks): what every client that never asks for a task sees. */
async function plainClient(generation: Generation, url: string, token: string): Promise<Client> {
  const client = new Client(CLIENT_INFO, {
    capabilities: {},
    ...(generation === 'v2' ? { versionNegotiation: { mode: { pin: V2 } } } : {}),
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** Two runs' answers compared: everything but the run's own identity and clock. */
function normalised(result: unknown): unknown {
  const text = JSON.stringify(result, (k, v: unknown) =>
    k === '_meta' || k === 'resultType' ? undefined : v,
  );
  return JSON.parse(
    text.replace(/run_[A-Za-z0-9]+/g, 'RUN').replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, 'TIME'),
  );
}

function callArgs(ms: number) {
  return { flow_slug: 'nap', tool_name: 'take_nap', input: { ms } };
}

async function runStatus(ws: string, runId: string): Promise<string> {
  const res = await gw.admin('GET', `/api/workspaces/${ws}/runs/${runId}`);
  return (res.json as { status: string }).status;
}

/** Waits until one of the workspace's newest runs is parked in its sleep, and returns its id. */
/** The newest run of the workspace, once it parks in its sleep (an older test's sleeper may still be waiting too). */
async function parkedRun(ws: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const page = await gw.admin('GET', `/api/workspaces/${ws}/runs?limit=1`);
    const newest = (page.json as { items: Array<{ runId: string; status: string }> }).items[0];
    if (newest?.status === 'waiting') return newest.runId;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('no run reached its sleep');
}

function taskOf(execution: { kind: string; handle?: { taskId: TaskId } }): TaskId {
  expect(execution.kind).toBe('task');
  if (!execution.handle) throw new Error('no task handle');
  return execution.handle.taskId;
}

async function rejectionCode(promise: Promise<unknown>): Promise<number | null> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof JsonRpcResponseError) return error.code;
    const code = (error as { code?: unknown }).code;
    return typeof code === 'number' ? code : null;
  }
  throw new Error('expected a rejection');
}

describe.each(['v1', 'v2'] as const)('MCP Tasks (%s) with ext-tasks', (generation) => {
  const url = () => gw.mcpUrl(WS);

  it('advertises task support and declares it on call_flow_tool only', async () => {
    const { client, close } = await connect(generation, url(), key.apiKey);
    try {
      const caps = client.getServerCapabilities() as Record<string, unknown>;
      if (generation === 'v2') {
        // 2026-07-28 tasks are server-directed: the extension is the declaration (the SDK's tool codec of that
        // revision has no `execution`).
        expect(caps.extensions).toEqual({ 'io.modelcontextprotocol/tasks': {} });
        return;
      }
      expect(caps.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const { tools } = await client.listTools();
      const declaring = tools.filter((t) => (t as { execution?: unknown }).execution !== undefined);
      expect(declaring.map((t) => [t.name, (t as { execution?: unknown }).execution])).toEqual([
        ['call_flow_tool', { taskSupport: 'optional' }],
      ]);
    } finally {
      await close();
    }
  });

  it('runs a sleeping flow as a task, polled to completion, with the result the call gives without tasks', async () => {
    const { session, close } = await connect(generation, url(), key.apiKey);
    const plain = await plainClient(generation, url(), key.apiKey);
    try {
      const args = { ...callArgs(NAP_MS), idempotency_key: `nap-${generation}` };
      const execution = await session.callTool('call_flow_tool', args, { task: { preference: 'prefer' } });
      const taskId = taskOf(execution);
      const statuses: string[] = [];
      const { outcome } = await execution.settle({
        onEvent: (event) => {
          if (event.type === 'task') statuses.push(event.task.status);
        },
      });
      expect(outcome.status).toBe('completed');
      if (outcome.status !== 'completed') return;
      const result = outcome.result as unknown as {
        structuredContent: { run: { status: string; runId: string }; created: boolean };
      };
      expect(result.structuredContent.run.status).toBe('completed');
      expect(result.structuredContent.created).toBe(true);
      expect(statuses).toContain('completed');
      expect(statuses.every((s) => s === 'working' || s === 'completed')).toBe(true);
      // The same call without tasks (its idempotency key names the same run) answers the same, but for `created`.
      const direct = await plain.callTool({ name: 'call_flow_tool', arguments: args });
      expect((direct.structuredContent as { created: boolean }).created).toBe(false);
      const flipped = JSON.parse(
        JSON.stringify(direct)
          .replaceAll('\\"created\\":false', '\\"created\\":true')
          .replaceAll('"created":false', '"created":true'),
      );
      expect(normalised(result)).toEqual(normalised(flipped));
      // Not only equal after normalising: the very same run, timestamps included.
      expect((direct.structuredContent as { run: unknown }).run).toEqual(result.structuredContent.run);
      // The task outlives the request that created it: any later request (any replica) reads it.
      const again = await session.task(taskId).snapshot();
      expect(again.status).toBe('completed');
      const runId = result.structuredContent.run.runId;
      const audit = await gw.waitForAudit(WS, (items) =>
        items.some((i) => i.kind === 'tasks/create' && i.runId === runId),
      );
      expect(audit.find((i) => i.kind === 'tasks/create' && i.runId === runId)).toMatchObject({
        action: 'call_flow_tool',
        outcome: 'ok',
      });
    } finally {
      await plain.close();
      await close();
    }
  });

  it('runs a per-flow tool as a task with the result the direct call gives', async () => {
    const flowUrl = `${gw.url}/api/workspaces/${WS}/flows/greet/mcp`;
    const { session, client, close } = await connect(generation, flowUrl, key.apiKey);
    const plain = await plainClient(generation, flowUrl, key.apiKey);
    try {
      if (generation === 'v1') {
        const { tools } = await client.listTools();
        expect(tools.find((t) => t.name === 'greet_person')).toMatchObject({
          execution: { taskSupport: 'optional' },
        });
      }
      const execution = await session.callTool(
        'greet_person',
        { name: 'ada' },
        { task: { preference: 'prefer' } },
      );
      taskOf(execution);
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('completed');
      if (outcome.status !== 'completed') return;
      // A flow without a sleep: the plain call waits for its end, so both answers are final.
      const direct = await plain.callTool({ name: 'greet_person', arguments: { name: 'ada' } });
      expect(normalised(outcome.result)).toEqual(normalised(direct));
    } finally {
      await plain.close();
      await close();
    }
  });

  it('cancels a sleeping run through tasks/cancel: the task and the run end cancelled', async () => {
    const { session, close } = await connect(generation, url(), key.apiKey);
    try {
      const execution = await session.callTool('call_flow_tool', callArgs(60_000), {
        task: { preference: 'prefer' },
      });
      const taskId = taskOf(execution);
      // Let it reach its sleep first, so the cancel stops a parked run rather than a queued one.
      expect((await session.task(taskId).snapshot()).status).toBe('working');
      const runId = await parkedRun(WS);
      expect((await session.task(taskId).snapshot()).status).toBe('working');
      await session.cancelTask(taskId);
      let status = '';
      for (let i = 0; i < 50 && status !== 'cancelled'; i++) {
        status = (await session.task(taskId).snapshot()).status;
        if (status !== 'cancelled') await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe('cancelled');
      expect(await runStatus(WS, runId)).toBe('cancelled');
      await gw.waitForAudit(WS, (items) => items.some((i) => i.kind === 'tasks/cancel' && i.runId === runId));
      if (generation === 'v1') {
        // 2025-11-25: a cancel of a task already final is refused, not silently accepted.
        expect(await rejectionCode(session.task(taskId).cancel())).toBe(-32602);
      } else {
        // 2026-07-28: cancellation is a signal, acknowledged for any known task; the task stays as it ended.
        await session.task(taskId).cancel();
        expect((await session.task(taskId).snapshot()).status).toBe('cancelled');
      }
    } finally {
      await close();
    }
  });

  it("answers another workspace's or another principal's task id with not found", async () => {
    const { session, close } = await connect(generation, url(), key.apiKey);
    const other = await connect(generation, gw.mcpUrl(OTHER), otherKey.apiKey);
    const sameWsOther = await gw.mintKey(WS, ['workspace.full'], `peer-${generation}`);
    const peer = await connect(generation, url(), sameWsOther.apiKey);
    try {
      const execution = await session.callTool('call_flow_tool', callArgs(200), {
        task: { preference: 'prefer' },
      });
      const taskId = taskOf(execution);
      await execution.settle();
      expect((await session.task(taskId).snapshot()).status).toBe('completed');
      expect(await rejectionCode(other.session.task(taskId).snapshot())).toBe(-32602);
      expect(await rejectionCode(peer.session.task(taskId).snapshot())).toBe(-32602);
      expect(await rejectionCode(other.session.task(taskId).cancel())).toBe(-32602);
      expect(await rejectionCode(session.task(asTaskId(`${taskId}x`)).snapshot())).toBe(-32602);
    } finally {
      await peer.close();
      await other.close();
      await close();
    }
  });

  it('settles a failing run as the extension says: failed (2025-11-25), completed with the call result (2026-07-28)', async () => {
    const { session, close } = await connect(generation, url(), key.apiKey);
    const plain = await plainClient(generation, url(), key.apiKey);
    try {
      const args = {
        flow_slug: 'breaks',
        tool_name: 'break_it',
        input: { n: 3 },
        idempotency_key: `breaks-${generation}`,
      };
      const execution = await session.callTool('call_flow_tool', args, { task: { preference: 'prefer' } });
      const taskId = taskOf(execution);
      const { outcome } = await execution.settle();
      const view = await session.task(taskId).snapshot();
      expect(view.statusMessage).toBeTruthy();
      if (generation === 'v1') {
        expect(outcome.status).toBe('failed');
        expect(view.status).toBe('failed');
        return;
      }
      // `failed` is kept for a JSON-RPC error of the call; a run that failed is a result the call answers, so the
      // task completes with exactly that result (the run, with its error), as the same call without tasks gives it.
      expect(outcome.status).toBe('completed');
      expect(view.status).toBe('completed');
      if (outcome.status !== 'completed') return;
      const result = outcome.result as unknown as {
        isError?: boolean;
        structuredContent: { run: { status: string; error: { code: string } | null } };
      };
      expect(result.structuredContent.run.status).toBe('failed');
      expect(result.structuredContent.run.error?.code).toBeTruthy();
      expect((view.raw as { error?: unknown }).error).toBeUndefined();
      const direct = await plain.callTool({ name: 'call_flow_tool', arguments: args });
      expect((direct.structuredContent as { run: unknown }).run).toEqual(result.structuredContent.run);
      expect(result.isError ?? false).toBe(direct.isError ?? false);
    } finally {
      await plain.close();
      await close();
    }
  });

  it('answers tasks/get for a task the moment its creation answer arrives, on another replica too', async () => {
    const { session, close } = await connect(generation, url(), key.apiKey);
    const elsewhere = await connect(generation, replica.mcpUrl(WS), key.apiKey);
    try {
      for (let i = 0; i < 5; i++) {
        const execution = await session.callTool('call_flow_tool', callArgs(60_000), {
          task: { preference: 'prefer' },
        });
        const taskId = taskOf(execution);
        await execution.detach();
        // One read, no retry: the run is committed before the creation answer is sent.
        const view = await elsewhere.session.task(taskId).snapshot();
        expect(view.taskId).toBe(taskId);
        expect(view.status).toBe('working');
        await session.cancelTask(taskId);
      }
    } finally {
      await elsewhere.close();
      await close();
    }
  });

  it('expires a task by its TTL without deleting the run', async () => {
    const { session, close } = await connect(generation, url(), key.apiKey);
    try {
      const execution = await session.callTool('call_flow_tool', callArgs(100), {
        task: { preference: 'prefer' },
      });
      const taskId = taskOf(execution);
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('completed');
      if (outcome.status !== 'completed') return;
      const runId = (outcome.result as unknown as { structuredContent: { run: { runId: string } } })
        .structuredContent.run.runId;
      // The default TTL is a day: move the run's creation two days back instead of waiting.
      await gw.db.db
        .update(schema.runs)
        .set({ createdAt: sql`now() - interval '2 days'` })
        .where(eq(schema.runs.id, runId));
      expect(await rejectionCode(session.task(taskId).snapshot())).toBe(-32602);
      if (generation === 'v1') {
        const listed = await session.listTasks();
        expect(listed.tasks.some((t) => t.taskId === taskId)).toBe(false);
      }
      // The run itself is still there.
      expect(await runStatus(WS, runId)).toBe('completed');
    } finally {
      await close();
    }
  });

  it('is answered by any replica: created on one gateway, settled and cancelled through another', async () => {
    const { session, close } = await connect(generation, url(), key.apiKey);
    const elsewhere = await connect(generation, replica.mcpUrl(WS), key.apiKey);
    try {
      const execution = await session.callTool('call_flow_tool', callArgs(200), {
        task: { preference: 'prefer' },
      });
      const taskId = taskOf(execution);
      await execution.detach();
      // The other replica never saw the call; it settles the task from the run alone.
      const outcome = await elsewhere.session.task(taskId).result();
      expect(outcome.status).toBe('completed');
      const sleeper = await session.callTool('call_flow_tool', callArgs(60_000), {
        task: { preference: 'prefer' },
      });
      const sleeperId = taskOf(sleeper);
      await sleeper.detach();
      // Parked first: a run a worker is executing stops at that worker's next lease renewal, which is the run
      // engine's timing, not the task's.
      const runId = await parkedRun(WS);
      await elsewhere.session.cancelTask(sleeperId);
      let status = '';
      for (let i = 0; i < 50 && status !== 'cancelled'; i++) {
        status = (await session.task(sleeperId).snapshot()).status;
        if (status !== 'cancelled') await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe('cancelled');
      expect(await runStatus(WS, runId)).toBe('cancelled');
    } finally {
      await elsewhere.close();
      await close();
    }
  });

  it('leaves a client that never asks for a task with the old behaviour', async () => {
    const plain = await plainClient(generation, url(), key.apiKey);
    try {
      const result = await plain.callTool({ name: 'call_flow_tool', arguments: callArgs(100) });
      expect(result).not.toHaveProperty('task');
      expect(result).not.toHaveProperty('taskId');
      const content = result.structuredContent as { run: { status: string }; created: boolean };
      expect(content.created).toBe(true);
      expect([...LIVE_RUN_STATUSES, 'completed']).toContain(content.run.status);
    } finally {
      await plain.close();
    }
  });
});

/** A raw 2026-07-28 request with the headers that revision requires (Mcp-Name = the task id for task methods). */
function modernPost(method: string, params: Record<string, unknown>, declares: boolean, url = gw.mcpUrl(WS)) {
  const name =
    typeof params.taskId === 'string' ? params.taskId : typeof params.name === 'string' ? params.name : null;
  return mcpPost(url, {
    token: key.apiKey,
    protocolVersion: V2,
    headers: { 'mcp-method': method, ...(name === null ? {} : { 'mcp-name': name }) },
    body: rpc(method, {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': V2,
        'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
        'io.modelcontextprotocol/clientCapabilities': declares
          ? { extensions: { 'io.modelcontextprotocol/tasks': {} } }
          : {},
      },
    }),
  });
}

describe('Tasks extension methods (2026-07-28) with ext-tasks', () => {
  it('acknowledges tasks/update for a known task (no run asks for input, so the responses are ignored)', async () => {
    const { session, close } = await connect('v2', gw.mcpUrl(WS), key.apiKey);
    try {
      const execution = await session.callTool('call_flow_tool', callArgs(60_000), {
        task: { preference: 'prefer' },
      });
      const taskId = taskOf(execution);
      await execution.detach();
      // ext-tasks checks the answer against the extension's UpdateTaskResult schema.
      await session
        .task(taskId)
        .updateJson({ 'never-asked': { action: 'accept', content: { name: 'ada' } } });
      expect((await session.task(taskId).snapshot()).status).toBe('working');
      expect(
        await rejectionCode(session.task(asTaskId(`${taskId}x`)).updateJson({ k: { action: 'decline' } })),
      ).toBe(-32602);
      await session.cancelTask(taskId);
    } finally {
      await close();
    }
  });

  it('refuses tasks/get, tasks/update and tasks/cancel to a request without the extension: -32021, HTTP 400', async () => {
    const { session, close } = await connect('v2', gw.mcpUrl(WS), key.apiKey);
    try {
      const execution = await session.callTool('call_flow_tool', callArgs(60_000), {
        task: { preference: 'prefer' },
      });
      const taskId = taskOf(execution);
      await execution.detach();
      for (const [method, params] of [
        ['tasks/get', { taskId }],
        ['tasks/update', { taskId, inputResponses: {} }],
        ['tasks/cancel', { taskId }],
      ] as const) {
        const answer = await modernPost(method, params, false);
        expect(answer.status).toBe(400);
        expect(asRpc(answer).error).toMatchObject({
          code: -32021,
          data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
        });
      }
      // The refused cancel cancelled nothing; the same request declaring the extension is served.
      expect((await session.task(taskId).snapshot()).status).toBe('working');
      const declared = await modernPost('tasks/cancel', { taskId }, true);
      expect(declared.status).toBe(200);
      expect(asRpc(declared).result?.resultType).toBe('complete');
    } finally {
      await close();
    }
  });

  it('ignores a 2025-style params.task from a client that does not declare the extension', async () => {
    const answer = asRpc(
      await modernPost('tools/call', { name: 'call_flow_tool', arguments: callArgs(100), task: {} }, false),
    );
    expect(answer.result?.resultType).toBe('complete');
    expect(answer.result).not.toHaveProperty('taskId');
    expect(answer.result).not.toHaveProperty('task');
  });

  it('has no tasks/update under 2025-11-25', async () => {
    const answer = asRpc(
      await mcpPost(gw.mcpUrl(WS), {
        token: key.apiKey,
        protocolVersion: '2025-11-25',
        body: rpc('tasks/update', { taskId: 'x', inputResponses: {} }),
      }),
    );
    expect(answer.error?.code).toBe(-32601);
  });
});

describe('tasks/list (2025-11-25)', () => {
  it("pages through the principal's own tasks in this workspace", async () => {
    const mine = await gw.mintKey(WS, ['workspace.full'], 'lister');
    const { session, close } = await connect('v1', gw.mcpUrl(WS), mine.apiKey);
    const other = await connect('v1', gw.mcpUrl(WS), key.apiKey);
    try {
      const created: string[] = [];
      for (let i = 0; i < 23; i++) {
        const execution = await session.callTool(
          'call_flow_tool',
          { flow_slug: 'greet', tool_name: 'greet_person', input: { name: `n${i}` } },
          { task: { preference: 'prefer' } },
        );
        created.push(taskOf(execution));
        await execution.detach();
      }
      const first = await session.listTasks();
      expect(first.tasks).toHaveLength(20);
      expect(first.nextCursor).toBeTruthy();
      const second = await session.listTasks(first.nextCursor);
      expect(second.tasks).toHaveLength(3);
      expect(second.nextCursor).toBeUndefined();
      const listed = [...first.tasks, ...second.tasks].map((t) => t.taskId);
      // The same ids the calls answered with (no TTL asked for), newest first.
      expect(listed).toEqual([...created].reverse());
      // Another principal's list does not show them; a forged cursor is refused.
      const theirs = await other.session.listTasks();
      expect(theirs.tasks.some((t) => created.includes(t.taskId))).toBe(false);
      expect(await rejectionCode(session.listTasks(`${first.nextCursor}x`))).toBe(-32602);
    } finally {
      await other.close();
      await close();
    }
  });

  it('is not a method of the 2026-07-28 Tasks extension (nor is tasks/result)', async () => {
    for (const [method, params] of [
      ['tasks/list', {}],
      ['tasks/result', { taskId: 'x' }],
    ] as const) {
      const answer = await modernPost(method, params, true);
      expect(answer.status).toBe(404);
      expect(asRpc(answer).error?.code).toBe(-32601);
    }
  });
});

describe('tasks/result (2025-11-25)', () => {
  it('answers the final result with the related-task metadata', async () => {
    const init = await mcpPost(gw.mcpUrl(WS), {
      token: key.apiKey,
      protocolVersion: '2025-11-25',
      body: rpc('tools/call', { name: 'call_flow_tool', arguments: callArgs(300), task: { ttl: 120_000 } }),
    });
    const task = asRpc(init).result?.task as {
      taskId: string;
      status: string;
      ttl: number;
      pollInterval: number;
    };
    // The requested TTL is overridden by the documented one, so the id and TTL read the same in tasks/list.
    expect(task).toMatchObject({ status: 'working', ttl: 24 * 60 * 60 * 1000, pollInterval: 1000 });
    const answer = asRpc(
      await mcpPost(gw.mcpUrl(WS), {
        token: key.apiKey,
        protocolVersion: '2025-11-25',
        body: rpc('tasks/result', { taskId: task.taskId }),
      }),
    );
    const result = answer.result as {
      structuredContent: { run: { status: string } };
      content: Array<{ type: string }>;
      _meta: Record<string, unknown>;
    };
    expect(result.structuredContent.run.status).toBe('completed');
    expect(result.content.some((c) => c.type === 'resource_link')).toBe(true);
    expect(result._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId: task.taskId });
  });

  it('is refused to a caller who cannot run flows (no capability, no methods)', async () => {
    const reader = await gw.mintKey(WS, ['flows.read', 'runs.read'], 'reader');
    const init = asRpc(
      await mcpPost(gw.mcpUrl(WS), {
        token: reader.apiKey,
        protocolVersion: '2025-11-25',
        body: rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO }),
      }),
    );
    expect(init.result?.capabilities).not.toHaveProperty('tasks');
    const get = asRpc(
      await mcpPost(gw.mcpUrl(WS), {
        token: reader.apiKey,
        protocolVersion: '2025-11-25',
        body: rpc('tasks/list', {}),
      }),
    );
    expect(get.error?.code).toBe(-32601);
  });
});
