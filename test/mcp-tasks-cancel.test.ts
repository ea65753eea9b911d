import { generateEncryptionKey } from '@flowgate/secrets';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_INFO } from './support/clients.js';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { getRun, installFlow, type Loopback, startLoopback, waitForRun } from './support/runs.js';

/**
 * 2025-11-25 tasks/cancel of a task whose run is executing (not parked), with the SDK v1 client. That revision's
 * "Cancelling Tasks" says the receiver MUST move the task to `cancelled` before answering, and the task MUST stay
 * `cancelled` even if execution goes on to complete. The run here is inside an HTTP request the test holds open, so
 * the cancel can only be recorded, not applied, when it is answered.
 */

const WS = 'ws-tasks-cancel';

const HOLD = `{:slug :hold
 :requires [{:slot :api :type :http-api}]
 :invocations {:default {:inputs [{:name :tag :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "hold_on" :invocation :default}]}
 :flow (let [r (flow/step :http :held {:connection :api :path "/held" :query {:tag (:tag (flow/input))}})]
         {:status (:status r)})}`;

let gw: TestGateway;
let api: Loopback;
let key: ServiceAccountKey;
/** Lets the held request answer (the run can then finish, whatever the cancel did). */
const releases = new Map<string, () => void>();
/** Resolves once the request of a tag has reached the loopback (the run is executing its step). */
const arrivals = new Map<string, { promise: Promise<void>; resolve: () => void }>();

function arrival(tag: string) {
  let entry = arrivals.get(tag);
  if (!entry) {
    let resolve = () => {};
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    entry = { promise, resolve };
    arrivals.set(tag, entry);
  }
  return entry;
}

beforeAll(async () => {
  api = await startLoopback(async (req) => {
    const tag = req.query.tag ?? '';
    const released = new Promise<void>((r) => releases.set(tag, r));
    arrival(tag).resolve();
    // Held until the test lets it go (bounded, so a failing test does not hang the server).
    await Promise.race([released, new Promise((r) => setTimeout(r, 10_000))]);
    return { status: 200, json: { tag } };
  });
  gw = await startTestGateway({
    FLOWGATE_WORKER: 'true',
    FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
    FLOWGATE_ENCRYPTION_KEY: generateEncryptionKey(),
  });
  await gw.createWorkspace(WS);
  const conn = await gw.createConnection(WS, {
    name: 'api',
    type: 'http-api',
    baseUrl: api.url,
    auth: { type: 'bearer', secret: 'cancel-secret-5a4b3c2d' },
  });
  await installFlow(gw, WS, 'hold', HOLD, { api: conn.connectionId });
  key = await gw.mintKey(WS, ['workspace.full'], 'tasks-cancel');
}, 120_000);

afterAll(async () => {
  for (const release of releases.values()) release();
  await gw?.close();
  await api?.close();
});

async function v1Client(): Promise<Client> {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gw.mcpUrl(WS)), {
      requestInit: { headers: { Authorization: `Bearer ${key.apiKey}` } },
    }),
  );
  return client;
}

async function startHeldTask(client: Client, tag: string): Promise<{ taskId: string; runId: string }> {
  const created = await client.request(
    {
      method: 'tools/call',
      params: {
        name: 'call_flow_tool',
        arguments: { flow_slug: 'hold', tool_name: 'hold_on', input: { tag } },
        task: { ttl: 60_000 },
      },
    },
    CreateTaskResultSchema,
  );
  expect(created.task.status).toBe('working');
  await arrival(tag).promise;
  const page = await gw.admin('GET', `/api/workspaces/${WS}/runs?limit=1`);
  const newest = (page.json as { items: Array<{ runId: string; status: string }> }).items[0];
  if (!newest) throw new Error('no run');
  return { taskId: created.task.taskId, runId: newest.runId };
}

async function errorCode(promise: Promise<unknown>): Promise<number | null> {
  try {
    await promise;
  } catch (error) {
    return error instanceof McpError ? error.code : null;
  }
  throw new Error('expected a rejection');
}

describe('SDK v1 at 2025-11-25: tasks/cancel of a running task', () => {
  it('answers the task as cancelled, and it stays cancelled even when the run then completes', async () => {
    const client = await v1Client();
    try {
      expect(client.getServerCapabilities()?.tasks).toEqual({
        list: {},
        cancel: {},
        requests: { tools: { call: {} } },
      });
      const { taskId, runId } = await startHeldTask(client, 'completes');
      // The run is executing its HTTP step: a cancel can only be recorded now.
      expect((await getRun(gw, WS, runId)).status).toBe('running');

      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      expect(cancelled.taskId).toBe(taskId);
      expect(cancelled.status).toBe('cancelled');
      expect(cancelled).not.toHaveProperty('pollInterval');
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');

      // Let the step answer: the run ends (stopped by the worker, or completed if the answer won the race).
      releases.get('completes')?.();
      const ended = await waitForRun(gw, WS, runId);
      expect(['cancelled', 'completed']).toContain(ended.status);
      const after = await client.experimental.tasks.getTask(taskId);
      expect(after.status).toBe('cancelled');
      const listed = await client.experimental.tasks.listTasks();
      expect(listed.tasks.find((t) => t.taskId === taskId)?.status).toBe('cancelled');
      // Final: a second cancel is refused, as for any task already cancelled.
      expect(await errorCode(client.experimental.tasks.cancelTask(taskId))).toBe(-32602);
      await gw.waitForAudit(WS, (items) => items.some((i) => i.kind === 'tasks/cancel' && i.runId === runId));
    } finally {
      await client.close();
    }
  });

  it('tasks/result of the cancelled task answers at once with the run as it is, not "still working"', async () => {
    const client = await v1Client();
    try {
      const { taskId, runId } = await startHeldTask(client, 'result');
      expect((await client.experimental.tasks.cancelTask(taskId)).status).toBe('cancelled');
      const asked = Date.now();
      const result = (await client.request(
        { method: 'tasks/result', params: { taskId } },
        // The payload is call_flow_tool's own answer for the run.
        CallToolResultSchema,
      )) as { structuredContent?: { run?: { runId?: string } }; _meta?: Record<string, unknown> };
      expect(result.structuredContent?.run?.runId).toBe(runId);
      expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId });
      // Not held for the 20 s a working task's tasks/result may wait.
      expect(Date.now() - asked).toBeLessThan(5_000);
    } finally {
      releases.get('result')?.();
      await client.close();
    }
  });
});
