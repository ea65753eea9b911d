import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_INFO } from './support/clients.js';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { asRpc, mcpPost, rpc } from './support/mcp.js';
import { installFlow, type Loopback, startLoopback } from './support/runs.js';

/**
 * Progress while waiting, against the real gateway and its in-process worker: a waiting tools/call with a progress
 * token is answered as an SSE stream — one notifications/progress per step as it ends (step id and status only), then
 * the result, the same as the JSON answer — with the SDK v1 client (2025-11-25) and the v2 client pinned to
 * 2026-07-28, on the workspace endpoint (call_flow_tool) and the per-flow endpoint; without a token the answer is JSON.
 */

const WS = 'ws-progress';
const SLOW_MS = 1_500;
/** What the three steps report, in order: a pure step, an :http step to a slow loopback API, another pure step. */
const EXPECTED = [
  { progress: 1, message: 'prepare completed' },
  { progress: 2, message: 'fetch completed' },
  { progress: 3, message: 'finish completed' },
];

let gw: TestGateway;
let key: ServiceAccountKey;
let api: Loopback;
/** When the loopback API answered the :http step (the middle step ends just after). */
const answeredAt: number[] = [];

const flow = (url: string) => `{:slug :three
 :invocations {:default {:inputs [{:name :n :type :integer :required true}]}}
 :interfaces {:mcp [{:tool-name "three_steps" :invocation :default}]}
 :flow (let [input (flow/input)
             a (flow/step :function :prepare {:code (fn [x] {:n (:n x) :secret-ish "step data"}) :input input})
             b (flow/step :http :fetch {:url "${url}/slow" :method :get})
             c (flow/step :function :finish {:code (fn [x] {:total (* 2 (:n x))}) :input a})]
         c)}`;

/** A pure step, a durable sleep (the run parks, then a worker resumes it), another pure step. */
const NAPPER = `{:slug :napper
 :invocations {:default {:inputs [{:name :ms :type :integer :required true}]}}
 :interfaces {:mcp [{:tool-name "nap_between" :invocation :default}]}
 :flow (let [input (flow/input)
             a (flow/step :function :before {:code (fn [x] {:ms (:ms x)}) :input input})
             _ (flow/step :sleep :nap {:duration-ms (:ms a)})]
         (flow/step :function :after {:code (fn [x] {:slept (:ms x)}) :input a}))}`;

beforeAll(async () => {
  api = await startLoopback(async () => {
    await new Promise((r) => setTimeout(r, SLOW_MS));
    answeredAt.push(Date.now());
    return { status: 200, json: { ok: true } };
  });
  gw = await startTestGateway({ FLOWGATE_WORKER: 'true', FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true' });
  await gw.createWorkspace(WS);
  await installFlow(gw, WS, 'three', flow(api.url));
  await installFlow(gw, WS, 'napper', NAPPER);
  key = await gw.mintKey(WS, ['workspace.full'], 'progress');
}, 120_000);

afterAll(async () => {
  await gw?.close();
  await api?.close();
});

interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

interface CallOutput {
  run: { runId: string; status: string };
  created: boolean;
  result: { value: unknown } | null;
}

async function v1Client(url: string): Promise<V1Client> {
  const client = new V1Client(CLIENT_INFO, { capabilities: {} });
  await client.connect(
    new V1Transport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key.apiKey}` } } }),
  );
  return client;
}

async function v2Client(url: string): Promise<V2Client> {
  const client = new V2Client(CLIENT_INFO, {
    capabilities: {},
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  });
  await client.connect(
    new V2Transport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key.apiKey}` } } }),
  );
  return client;
}

type Call = (
  name: string,
  args: Record<string, unknown>,
  onprogress?: (p: Progress) => void,
) => Promise<{ structuredContent?: unknown; isError?: boolean; content: unknown }>;

async function withClient<T>(
  flavour: 'sdk-v1' | 'sdk-v2',
  url: string,
  fn: (call: Call) => Promise<T>,
): Promise<T> {
  if (flavour === 'sdk-v1') {
    const client = await v1Client(url);
    try {
      return await fn(async (name, args, onprogress) => {
        const result = await client.callTool(
          { name, arguments: args },
          undefined,
          onprogress ? { onprogress } : {},
        );
        return result as { structuredContent?: unknown; isError?: boolean; content: unknown };
      });
    } finally {
      await client.close();
    }
  }
  const client = await v2Client(url);
  expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  try {
    return await fn(async (name, args, onprogress) => {
      const result = await client.callTool({ name, arguments: args }, onprogress ? { onprogress } : {});
      return result as { structuredContent?: unknown; isError?: boolean; content: unknown };
    });
  } finally {
    await client.close();
  }
}

/** The call's answer with the progress it reported, each stamped with when it arrived. */
async function callWithProgress(call: Call, name: string, args: Record<string, unknown>) {
  const seen: Array<Progress & { at: number }> = [];
  const before = answeredAt.length;
  const result = await call(name, args, (p) => seen.push({ ...p, at: Date.now() }));
  // The notification for the first step arrived while the :http step still waited on the slow API.
  expect(answeredAt.length).toBe(before + 1);
  expect(seen[0]?.at).toBeLessThan(answeredAt[before] ?? 0);
  return { result, progress: seen.map(({ at: _at, ...p }) => p) };
}

describe.each(['sdk-v1', 'sdk-v2'] as const)('%s client', (flavour) => {
  it('call_flow_tool with wait_ms and a progress token streams one notification per step, then the result', async () => {
    const idem = `progress-${flavour}`;
    const args = {
      flow_slug: 'three',
      tool_name: 'three_steps',
      input: { n: 21 },
      wait_ms: 15_000,
      idempotency_key: idem,
    };
    const streamed = await withClient(flavour, gw.mcpUrl(WS), async (call) => {
      const { result, progress } = await callWithProgress(call, 'call_flow_tool', args);
      expect(progress).toEqual(EXPECTED);
      return result;
    });
    expect(streamed.isError).toBeFalsy();
    const out = streamed.structuredContent as CallOutput;
    expect(out.run.status).toBe('completed');
    expect(out.result?.value).toEqual({ total: 42 });

    // The same call answered without a token (an idempotent retry of the ended run): the same result, as JSON.
    const plain = await withClient(flavour, gw.mcpUrl(WS), (call) => call('call_flow_tool', args));
    expect(plain).toEqual({
      ...streamed,
      structuredContent: { ...out, created: false },
      content: [
        { type: 'text', text: JSON.stringify({ ...out, created: false }) },
        ...(streamed.content as unknown[]).slice(1),
      ],
    });
  });

  it('a per-flow tool streams the same progress', async () => {
    const flowUrl = `${gw.url}/api/workspaces/${WS}/flows/three/mcp`;
    await withClient(flavour, flowUrl, async (call) => {
      const { result, progress } = await callWithProgress(call, 'three_steps', { n: 5 });
      expect(progress).toEqual(EXPECTED);
      expect((result.structuredContent as CallOutput).result?.value).toEqual({ total: 10 });
    });
  });
});

/** The SSE events of a body, as the JSON each carries. */
function sseMessages(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((block) => block.includes('data: '))
    .map((block) => {
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return JSON.parse(data) as unknown;
    });
}

describe('on the wire', () => {
  const call = (id: number, meta: Record<string, unknown> | null, waitMs: number, idem: string) =>
    mcpPost(gw.mcpUrl(WS), {
      token: key.apiKey,
      protocolVersion: '2025-11-25',
      body: rpc(
        'tools/call',
        {
          name: 'call_flow_tool',
          arguments: {
            flow_slug: 'three',
            tool_name: 'three_steps',
            input: { n: 1 },
            wait_ms: waitMs,
            idempotency_key: idem,
          },
          ...(meta ? { _meta: meta } : {}),
        },
        id,
      ),
    });

  it('a progress token makes the answer an SSE stream: progress events, then the response, then the end', async () => {
    const answer = await call(41, { progressToken: 'tok-1' }, 15_000, 'wire-sse');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/event-stream');
    expect(answer.headers.get('x-accel-buffering')).toBe('no');
    const messages = sseMessages(answer.text);
    expect(messages.slice(0, 3)).toEqual(
      EXPECTED.map((p) => ({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'tok-1', ...p },
      })),
    );
    expect(messages).toHaveLength(4);
    const final = messages[3] as { id: number; result: { structuredContent: CallOutput } };
    expect(final.id).toBe(41);
    expect(final.result.structuredContent.result?.value).toEqual({ total: 2 });
    // Step data never rides on a notification.
    expect(JSON.stringify(messages.slice(0, 3))).not.toContain('step data');
  });

  it('without a token the waiting call is answered as plain JSON, byte for byte what the dispatcher wrote', async () => {
    const answer = await call(42, null, 15_000, 'wire-json');
    expect(answer.headers.get('content-type')).toBe('application/json');
    const rpcAnswer = asRpc(answer);
    expect(answer.text).toBe(JSON.stringify(rpcAnswer));
    expect(rpcAnswer.id).toBe(42);
    expect((rpcAnswer.result as { structuredContent: CallOutput }).structuredContent.result?.value).toEqual({
      total: 2,
    });
    // And the token changes nothing for a call that does not wait: the same bytes as without it.
    const again = await call(42, { progressToken: 'tok-2' }, 0, 'wire-json');
    const againPlain = await call(42, null, 0, 'wire-json');
    expect(again.headers.get('content-type')).toBe('application/json');
    expect(again.text).toBe(againPlain.text);
  });
});

describe('across a durable sleep and a hang-up', () => {
  const napCall = (meta: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(gw.mcpUrl(WS), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify(
        rpc('tools/call', {
          name: 'call_flow_tool',
          arguments: { flow_slug: 'napper', tool_name: 'nap_between', input: { ms: 1_000 }, wait_ms: 15_000 },
          _meta: meta,
        }),
      ),
      ...(signal ? { signal } : {}),
    });

  it('waits through a sleep that ends inside the window, reporting the steps on both sides of it', async () => {
    const res = await napCall({ progressToken: 'nap' });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const messages = sseMessages(await res.text());
    expect(messages.slice(0, -1)).toEqual(
      ['before completed', 'nap completed', 'after completed'].map((message, i) => ({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'nap', progress: i + 1, message },
      })),
    );
    const final = messages.at(-1) as { result: { structuredContent: CallOutput } };
    expect(final.result.structuredContent.run.status).toBe('completed');
    expect(final.result.structuredContent.result?.value).toEqual({ slept: 1_000 });
  });

  it('a client that closes the stream ends its wait at once and leaves nothing held', async () => {
    const client = new AbortController();
    const res = await napCall({ progressToken: 'gone' }, client.signal);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    // The stream is open (the answer's headers came) while the run sleeps: hang up.
    client.abort();
    await res.body?.cancel().catch(() => undefined);
    const deps = gw.running.deps;
    const deadline = Date.now() + 5_000;
    while (deps.mcpWaits.held().total > 0 || deps.runWorkers.pending().waiters > 0) {
      if (Date.now() > deadline) throw new Error('the wait was not released');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(deps.mcpWaits.held()).toEqual({ total: 0, keys: 0 });
  });
});
