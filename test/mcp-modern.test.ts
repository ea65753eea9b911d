import { LATEST_PROTOCOL_VERSION, TOOL_NAMES } from '@flowgate/workspace-mcp';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import {
  StdioClientTransport as V2StdioTransport,
  getDefaultEnvironment as v2DefaultEnv,
} from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_INFO, connectClient } from './support/clients.js';
import {
  ADMIN_TOKEN,
  type HttpAnswer,
  type ServiceAccountKey,
  startTestGateway,
  type TestGateway,
} from './support/gateway.js';
import { asRpc, mcpPost, rpc, STACK_TRACE } from './support/mcp.js';
import { bridgeCommand, ROOT } from './support/stdio-bridge.js';

/**
 * The 2026-07-28 revision against the real gateway: the SDK v2 client pinned to it and in auto mode (probe
 * server/discover, no initialize), on the workspace endpoint and the per-flow endpoint; the v1 client on the same
 * endpoint still on 2025-11-25; and the raw wire rules (envelope, Mcp-Method/Mcp-Name, unsupported revisions).
 */

const WS = 'ws-modern';
const V = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '0.0.1' },
};

const GREET = `{:slug :greet
 :description "Greets someone"
 :invocations {:default {:inputs [{:name :name :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "greet_person" :invocation :default}]}
 :flow (flow/step :function :greet {:code (fn [x] {:greeting (str "hello " (:name x))}) :input (flow/input)})}`;

let gw: TestGateway;
let key: ServiceAccountKey;
let url: string;
let flowUrl: string;

beforeAll(async () => {
  gw = await startTestGateway({ FLOWGATE_WORKER: 'true' });
  await gw.createWorkspace(WS);
  key = await gw.mintKey(WS, ['workspace.full'], 'modern');
  const pushed = await fetch(`${gw.url}/api/workspaces/${WS}/flows/greet/draft`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/edn' },
    body: GREET,
  });
  expect(pushed.status).toBe(200);
  expect((await gw.admin('POST', `/api/workspaces/${WS}/flows/greet/release`, {})).status).toBe(200);
  url = gw.mcpUrl(WS);
  flowUrl = `${gw.url}/api/workspaces/${WS}/flows/greet/mcp`;
}, 120_000);

afterAll(async () => {
  await gw?.close();
});

interface Seen {
  method: string;
  headers: Record<string, string>;
}

/** A v2 client whose HTTP requests are recorded, so the tests can see what went over the wire. */
async function v2(target: string, mode: 'pin' | 'auto'): Promise<{ client: V2Client; seen: Seen[] }> {
  const seen: Seen[] = [];
  const recording: typeof fetch = async (input, init) => {
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => {
        headers[name] = value;
      });
      seen.push({ method: (JSON.parse(init.body) as { method?: string }).method ?? '', headers });
    }
    return fetch(input, init);
  };
  const transport = new V2Transport(new URL(target), {
    requestInit: { headers: { Authorization: `Bearer ${key.apiKey}` } },
    fetch: recording,
  });
  const client = new V2Client(CLIENT_INFO, {
    capabilities: {},
    versionNegotiation: { mode: mode === 'pin' ? { pin: V } : 'auto' },
  });
  await client.connect(transport);
  return { client, seen };
}

describe.each(['pin', 'auto'] as const)('SDK v2 client, versionNegotiation %s', (mode) => {
  it('negotiates 2026-07-28 with server/discover and never sends initialize', async () => {
    const { client, seen } = await v2(url, mode);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(V);
      expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} });
      expect(client.getInstructions()).toContain(WS);
      expect(seen.map((s) => s.method)).toContain('server/discover');
      expect(seen.map((s) => s.method)).not.toContain('initialize');
    } finally {
      await client.close();
    }
  });

  it('lists and calls tools, reads a resource and gets a prompt', async () => {
    const { client, seen } = await v2(url, mode);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual([...TOOL_NAMES]);

      const ctx = await client.callTool({ name: 'get_workspace_context', arguments: {} });
      expect(ctx.isError).toBeFalsy();
      expect((ctx.structuredContent as { protocol: { version: string } }).protocol.version).toBe(V);
      const call = seen.find((s) => s.method === 'tools/call');
      expect(call?.headers).toMatchObject({
        'mcp-protocol-version': V,
        'mcp-method': 'tools/call',
        'mcp-name': 'get_workspace_context',
      });

      const uri = 'flowgate://mcp-docs/overview';
      const read = await client.readResource({ uri });
      expect(read.contents[0]).toMatchObject({ uri, mimeType: 'text/markdown' });

      const prompts = (await client.listPrompts()).prompts;
      expect(prompts.length).toBeGreaterThan(0);
      const prompt = await client.getPrompt({
        name: 'review_flow_definition',
        arguments: { flow_slug: 'greet' },
      });
      expect(prompt.messages[0]?.content).toMatchObject({ type: 'text' });
      expect(seen.map((s) => s.method)).not.toContain('initialize');
    } finally {
      await client.close();
    }
  });

  it('serves the per-flow endpoint: its flow tool runs', async () => {
    const { client } = await v2(flowUrl, mode);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(V);
      // Its direct tool starts runs, so the Tasks extension is offered here too; a release of the flow changes its
      // tools, which subscriptions/listen tells.
      expect(client.getServerCapabilities()).toEqual({
        tools: { listChanged: true },
        extensions: { 'io.modelcontextprotocol/tasks': {} },
      });
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('greet_person');
      const result = await client.callTool({ name: 'greet_person', arguments: { name: 'Ada' } });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.structuredContent)).toContain('hello Ada');
    } finally {
      await client.close();
    }
  });
});

describe('SDK v2 stdio client pinned to 2026-07-28 → flowgate mcp stdio → gateway', () => {
  it('the bridge derives the 2026 headers from each body, so the revision works end to end', async () => {
    const { command, args } = bridgeCommand(gw.url, ['--workspace-id', WS, '--token-env-var', 'FG_KEY']);
    const transport = new V2StdioTransport({
      command,
      args,
      cwd: ROOT,
      env: { ...v2DefaultEnv(), FG_KEY: key.apiKey },
      stderr: 'pipe',
    });
    const client = new V2Client(CLIENT_INFO, { capabilities: {}, versionNegotiation: { mode: { pin: V } } });
    await client.connect(transport);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(V);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
      const ctx = await client.callTool({ name: 'get_workspace_context', arguments: {} });
      expect((ctx.structuredContent as { protocol: { version: string } }).protocol.version).toBe(V);
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('audit under 2026-07-28', () => {
  it('names the client from _meta clientInfo and the revision', async () => {
    const { client } = await v2(url, 'pin');
    try {
      await client.callTool({ name: 'search_flows', arguments: {}, _meta: { reason: 'modern audit check' } });
    } finally {
      await client.close();
    }
    const items = await gw.waitForAudit(WS, (all) => all.some((e) => e.reason === 'modern audit check'));
    expect(items.find((e) => e.reason === 'modern audit check')).toMatchObject({
      action: 'search_flows',
      outcome: 'ok',
      protocolVersion: V,
      clientName: CLIENT_INFO.name,
      clientVersion: CLIENT_INFO.version,
    });
  });
});

describe('the v1 client on the same endpoint', () => {
  it('still negotiates 2025-11-25 with initialize', async () => {
    const s = await connectClient('sdk-v1', url, { token: key.apiKey });
    try {
      expect(s.protocolVersion()).toBe(LATEST_PROTOCOL_VERSION);
      expect((await s.listTools()).map((t) => t.name)).toEqual([...TOOL_NAMES]);
    } finally {
      await s.close();
    }
  });
});

// ---- raw HTTP ----------------------------------------------------------------------------------------------

async function post(
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string>,
  target = url,
): Promise<HttpAnswer> {
  const answer = await mcpPost(target, {
    token: key.apiKey,
    protocolVersion: null,
    headers,
    body: rpc(method, params, 'm1'),
  });
  expect(answer.headers.get('mcp-session-id')).toBeNull();
  expect(answer.text).not.toMatch(STACK_TRACE);
  return answer;
}

const modernHeaders = (method: string, name?: string): Record<string, string> => ({
  'mcp-protocol-version': V,
  'mcp-method': method,
  ...(name === undefined ? {} : { 'mcp-name': name }),
});

describe('raw 2026-07-28 requests', () => {
  it('server/discover answers without initialize, with resultType and cache hints', async () => {
    for (const target of [url, flowUrl]) {
      const a = await post('server/discover', { _meta: META }, modernHeaders('server/discover'), target);
      expect(a.status).toBe(200);
      expect(asRpc(a).result).toMatchObject({
        resultType: 'complete',
        supportedVersions: [V],
        ttlMs: 0,
        cacheScope: 'private',
        serverInfo: { name: 'flowgate-workspace-mcp' },
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'flowgate-workspace-mcp' } },
      });
    }
  });

  it('a tools/call with matching headers is served', async () => {
    const a = await post(
      'tools/call',
      { name: 'search_flows', arguments: {}, _meta: META },
      modernHeaders('tools/call', 'search_flows'),
    );
    expect(a.status).toBe(200);
    expect(asRpc(a).result).toMatchObject({ resultType: 'complete' });
  });

  it.each([
    ['no Mcp-Method', { 'mcp-protocol-version': V, 'mcp-name': 'search_flows' }],
    ['no MCP-Protocol-Version', { 'mcp-method': 'tools/call', 'mcp-name': 'search_flows' }],
    ['no Mcp-Name', modernHeaders('tools/call')],
    ['Mcp-Method differs', modernHeaders('tools/list', 'search_flows')],
    ['Mcp-Name differs', modernHeaders('tools/call', 'release_flow')],
    [
      'header version differs',
      { ...modernHeaders('tools/call', 'search_flows'), 'mcp-protocol-version': '2025-11-25' },
    ],
  ])('%s → 400 -32020', async (_, headers) => {
    const a = await post('tools/call', { name: 'search_flows', arguments: {}, _meta: META }, headers);
    expect(a.status).toBe(400);
    expect(asRpc(a)).toMatchObject({ id: 'm1', error: { code: -32020 } });
  });

  it('checks Mcp-Name against params.uri on resources/read, Base64 sentinel included', async () => {
    const uri = 'flowgate://mcp-docs/overview';
    const encoded = `=?base64?${Buffer.from(uri).toString('base64')}?=`;
    expect(
      (await post('resources/read', { uri, _meta: META }, modernHeaders('resources/read', encoded))).status,
    ).toBe(200);
    const wrong = await post(
      'resources/read',
      { uri, _meta: META },
      modernHeaders('resources/read', 'flowgate://x'),
    );
    expect(wrong.status).toBe(400);
    expect(asRpc(wrong).error?.code).toBe(-32020);
  });

  it.each([
    ['no _meta', {}, ['_meta']],
    ['no clientCapabilities', { _meta: { 'io.modelcontextprotocol/protocolVersion': V } }, undefined],
  ])('%s → 400 -32602 naming the key', async (_, params, missing) => {
    const a = await post('tools/list', params, modernHeaders('tools/list'));
    expect(a.status).toBe(400);
    const error = asRpc(a).error;
    expect(error?.code).toBe(-32602);
    if (missing) expect(error?.data).toEqual({ envelope: { missing } });
    else expect(error?.message).toContain('io.modelcontextprotocol/clientCapabilities');
  });

  it('an unsupported revision → 400 -32022 with the supported list', async () => {
    const meta = { ...META, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' };
    const a = await post(
      'tools/list',
      { _meta: meta },
      {
        'mcp-protocol-version': '2027-01-01',
        'mcp-method': 'tools/list',
      },
    );
    expect(a.status).toBe(400);
    expect(asRpc(a).error).toMatchObject({
      code: -32022,
      data: { supported: [V], requested: '2027-01-01' },
    });
  });

  it('initialize and ping do not exist in 2026-07-28; a 2025 initialize under a 2026 header is a mismatch', async () => {
    const ping = await post('ping', { _meta: META }, modernHeaders('ping'));
    expect(ping.status).toBe(404);
    expect(asRpc(ping).error).toMatchObject({ code: -32601 });
    expect(asRpc(ping).id).toBe('m1');
    const init = await post(
      'initialize',
      { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      modernHeaders('initialize'),
    );
    expect(init.status).toBe(400);
    expect(asRpc(init).error?.code).toBe(-32020);
  });

  it('2025 requests on the same endpoint get no 2026 fields', async () => {
    const a = await mcpPost(url, {
      token: key.apiKey,
      protocolVersion: '2025-11-25',
      body: rpc('tools/list'),
    });
    expect(a.status).toBe(200);
    expect(asRpc(a).result).not.toHaveProperty('resultType');
    expect(asRpc(a).result).not.toHaveProperty('ttlMs');
  });
});
