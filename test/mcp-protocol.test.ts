import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, TOOL_NAMES } from '@flowgate/workspace-mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inToolsets, without } from './support/catalog.js';
import {
  answer,
  type HttpAnswer,
  type ServiceAccountKey,
  startTestGateway,
  type TestGateway,
} from './support/gateway.js';
import {
  asRpc,
  initializeParams,
  type McpPostOptions,
  mcpPost,
  rpc,
  STACK_TRACE,
  STREAMABLE_ACCEPT,
  toolNamesOf,
} from './support/mcp.js';

/**
 * The Streamable HTTP wire contract (docs/mcp-surface.md, "Transport") and the request outcomes before it, with raw
 * fetch.
 */

const WS = 'ws-proto';
const OTHER_WS = 'ws-proto-other';
const MAX_BODY = 16 * 1024;
const MAX_RESULT = 16 * 1024;
const ALLOWED_ORIGIN = 'https://app.example.test';
const WS_ORIGIN = 'https://workspace-ui.example.test';

let gw: TestGateway;
let key: ServiceAccountKey;
let otherKey: ServiceAccountKey;
let url: string;

beforeAll(async () => {
  gw = await startTestGateway({
    FLOWGATE_MAX_BODY_BYTES: String(MAX_BODY),
    FLOWGATE_MCP_MAX_RESULT_BYTES: String(MAX_RESULT),
    FLOWGATE_ALLOWED_ORIGINS: ALLOWED_ORIGIN,
  });
  await gw.createWorkspace(WS);
  await gw.createWorkspace(OTHER_WS);
  await gw.setPolicy(WS, { allowedOrigins: [WS_ORIGIN] });
  key = await gw.mintKey(WS, ['workspace.full']);
  otherKey = await gw.mintKey(OTHER_WS, ['workspace.full']);
  url = gw.mcpUrl(WS);
});

afterAll(async () => {
  await gw?.close();
});

/**
 * Every answer in this file is checked for what must never appear: a stack trace, or a session id other than the
 * signed client token an initialize answer carries (no server-side session ever exists).
 */
function checked(answer: HttpAnswer): HttpAnswer {
  const session = answer.headers.get('mcp-session-id');
  if (session !== null) {
    expect(session).toMatch(/^fgc1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(answer.text).toContain('"protocolVersion"');
  }
  expect(answer.text).not.toMatch(STACK_TRACE);
  return answer;
}

async function post(options: Partial<McpPostOptions> & { body: unknown }): Promise<HttpAnswer> {
  return checked(
    await mcpPost(url, { token: key.apiKey, protocolVersion: LATEST_PROTOCOL_VERSION, ...options }),
  );
}

async function send(init: RequestInit, target = url): Promise<HttpAnswer> {
  return checked(await answer(await fetch(target, init)));
}

describe('initialize and version negotiation', () => {
  it.each(SUPPORTED_PROTOCOL_VERSIONS)('initialize under %s echoes the version', async (version) => {
    const a = await post({ body: rpc('initialize', initializeParams(version), 1), protocolVersion: null });
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toMatch(/^application\/json/);
    const body = asRpc(a);
    expect(body.id).toBe(1);
    expect(body.result?.protocolVersion).toBe(version);
    // Nothing can be pushed, so no listChanged or subscribe.
    // Tasks exist from 2025-11-25 on and are offered to a key that can run flows (this one can).
    expect(body.result?.capabilities).toEqual(
      version === '2025-11-25'
        ? {
            tools: {},
            resources: {},
            prompts: {},
            tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
          }
        : { tools: {}, resources: {}, prompts: {} },
    );
    const serverInfo = body.result?.serverInfo as Record<string, unknown>;
    expect(serverInfo.name).toBe('flowgate-workspace-mcp');
    // Implementation.title exists from 2025-06-18 on.
    expect('title' in serverInfo).toBe(version !== '2025-03-26');
    expect(typeof body.result?.instructions).toBe('string');
  });

  it.each(['2024-11-05', '1999-01-01', 'not-a-version'])(
    'initialize with unsupported %s answers the latest version',
    async (version) => {
      const a = await post({
        body: rpc('initialize', initializeParams(version), 'init-x'),
        protocolVersion: null,
      });
      expect(a.status).toBe(200);
      const body = asRpc(a);
      expect(body.id).toBe('init-x');
      expect(body.error).toBeUndefined();
      expect(body.result?.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    },
  );

  it('an unsupported MCP-Protocol-Version header after initialize is 400', async () => {
    const a = await post({ body: rpc('tools/list', {}, 7), protocolVersion: '2024-01-01' });
    expect(a.status).toBe(400);
    const body = asRpc(a);
    expect(body.error?.code).toBe(-32600);
    expect(body.error?.message).toContain('2024-01-01');
  });

  it('an absent MCP-Protocol-Version header after initialize works as 2025-03-26', async () => {
    const list = await post({ body: rpc('tools/list', {}, 8), protocolVersion: null });
    expect(list.status).toBe(200);
    expect(toolNamesOf(asRpc(list).result)).toEqual([...TOOL_NAMES]);
    const call = await post({
      body: rpc('tools/call', { name: 'get_workspace_context', arguments: {} }, 9),
      protocolVersion: null,
    });
    expect(call.status).toBe(200);
    const structured = asRpc(call).result?.structuredContent as { protocol: { version: string } };
    expect(structured.protocol.version).toBe('2025-03-26');
  });

  it.each(SUPPORTED_PROTOCOL_VERSIONS)(
    'requests carrying MCP-Protocol-Version %s are served',
    async (version) => {
      const a = await post({ body: rpc('ping', undefined, 'p'), protocolVersion: version });
      expect(a.status).toBe(200);
      expect(asRpc(a)).toEqual({ jsonrpc: '2.0', id: 'p', result: {} });
    },
  );

  it('server/discover under 2026-07-28 without its _meta envelope is 400 -32602 (test/mcp-modern.test.ts serves it)', async () => {
    const a = await post({ body: rpc('server/discover', {}, 'd'), protocolVersion: '2026-07-28' });
    expect(a.status).toBe(400);
    expect(asRpc(a).error?.code).toBe(-32602);
  });
});

describe('HTTP methods and media types', () => {
  it.each(['GET', 'DELETE'])('%s is 405 with Allow: POST', async (method) => {
    const a = await send({
      method,
      headers: { authorization: `Bearer ${key.apiKey}`, accept: STREAMABLE_ACCEPT },
    });
    expect(a.status).toBe(405);
    expect(a.headers.get('allow')).toBe('POST');
  });

  it.each(['application/json', 'text/event-stream', 'text/html'])(
    'Accept: %s alone is 406',
    async (accept) => {
      const a = await post({ body: rpc('ping', undefined, 1), headers: { accept } });
      expect(a.status).toBe(406);
    },
  );

  it('Accept with wildcards that allow both is served', async () => {
    const a = await post({ body: rpc('ping', undefined, 1), headers: { accept: '*/*' } });
    expect(a.status).toBe(200);
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx'])(
    'Content-Type: %s is 415',
    async (type) => {
      const a = await post({ body: rpc('ping', undefined, 1), headers: { 'content-type': type } });
      expect(a.status).toBe(415);
    },
  );

  it('Content-Type with a charset parameter is served', async () => {
    const a = await post({
      body: rpc('ping', undefined, 1),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(a.status).toBe(200);
  });

  it('FLOWGATE_MCP_MAX_RESULT_BYTES reaches the MCP handler: reported as the enforced cap', async () => {
    const context = asRpc(
      checked(await post({ body: rpc('tools/call', { name: 'get_workspace_context', arguments: {} }) })),
    );
    const result = context.result as {
      content: unknown[];
      structuredContent: { limits: Record<string, number> };
    };
    expect(result.structuredContent.limits.maxToolResultBytes).toBe(MAX_RESULT);
    // The reported value is the cap the result builder enforces on each side (result-cap.test.ts covers the cutting).
    expect(Buffer.byteLength(JSON.stringify(result.content))).toBeLessThanOrEqual(MAX_RESULT);
    expect(Buffer.byteLength(JSON.stringify(result.structuredContent))).toBeLessThanOrEqual(MAX_RESULT);
  });

  it('a body over FLOWGATE_MAX_BODY_BYTES is 413', async () => {
    const big = JSON.stringify(
      rpc('tools/call', { name: 'send_feedback', arguments: { details: 'x'.repeat(MAX_BODY) } }),
    );
    const a = await post({ body: big });
    expect(a.status).toBe(413);
    expect((a.json as { code: string }).code).toBe('payload_too_large');
  });

  it('a streamed body over the limit without Content-Length is 413 too', async () => {
    const chunk = new TextEncoder().encode(
      `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'y'.repeat(MAX_BODY)}"}}`,
    );
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(chunk);
        controller.close();
      },
    });
    const a = await send({
      method: 'POST',
      headers: {
        authorization: `Bearer ${key.apiKey}`,
        'content-type': 'application/json',
        accept: STREAMABLE_ACCEPT,
      },
      body: stream,
      // Node's fetch needs this for a stream body; it is not in the DOM RequestInit type.
      duplex: 'half',
    } as RequestInit);
    expect(a.status).toBe(413);
  });
});

describe('JSON-RPC errors', () => {
  it('malformed JSON is HTTP 400 with -32700', async () => {
    const a = await post({ body: '{"jsonrpc":"2.0","id":1,"method":' });
    expect(a.status).toBe(400);
    expect(asRpc(a)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it.each([
    ['wrong jsonrpc version', { jsonrpc: '1.0', id: 1, method: 'ping' }],
    ['null id', { jsonrpc: '2.0', id: null, method: 'ping' }],
    ['object id', { jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }],
    ['non-string method', { jsonrpc: '2.0', id: 1, method: 42 }],
    ['a bare string', 'ping'],
  ])('an invalid envelope (%s) is -32600', async (_label, body) => {
    const a = await post({ body: JSON.stringify(body) });
    expect(a.status).toBe(400);
    expect(asRpc(a).error?.code).toBe(-32600);
  });

  it('an unknown method is -32601 with HTTP 200 and the id echoed', async () => {
    const a = await post({ body: rpc('flows/teleport', {}, 'm-1') });
    expect(a.status).toBe(200);
    expect(asRpc(a)).toMatchObject({ jsonrpc: '2.0', id: 'm-1', error: { code: -32601 } });
  });

  it('an invalid tools/list cursor is -32602', async () => {
    const a = await post({ body: rpc('tools/list', { cursor: 'not-a-real-cursor' }, 3) });
    expect(a.status).toBe(200);
    expect(asRpc(a).error?.code).toBe(-32602);
  });

  it('an unknown resource is -32602 naming the uri', async () => {
    const a = await post({ body: rpc('resources/read', { uri: 'flowgate://nowhere/1' }, 4) });
    expect(a.status).toBe(200);
    expect(asRpc(a).error).toMatchObject({ code: -32602, data: { uri: 'flowgate://nowhere/1' } });
  });

  it('a notification is 202 with an empty body', async () => {
    const a = await post({ body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    expect(a.status).toBe(202);
    expect(a.text).toBe('');
  });

  it('a batch under 2025-06-18 (and 2025-11-25) is rejected', async () => {
    for (const version of ['2025-06-18', '2025-11-25']) {
      const a = await post({
        body: [rpc('ping', undefined, 1), rpc('tools/list', {}, 2)],
        protocolVersion: version,
      });
      expect(a.status).toBe(400);
      expect(asRpc(a).error?.code).toBe(-32600);
    }
  });

  it('a batch under 2025-03-26 is accepted and answered as an array (notifications get no entry)', async () => {
    const a = await post({
      body: [
        rpc('ping', undefined, 'b1'),
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        rpc('tools/list', {}, 'b2'),
        rpc('no/such/method', {}, 'b3'),
      ],
      protocolVersion: '2025-03-26',
    });
    expect(a.status).toBe(200);
    expect(Array.isArray(a.json)).toBe(true);
    const answers = a.json as Array<{
      id: string;
      result?: Record<string, unknown>;
      error?: { code: number };
    }>;
    expect(answers.map((x) => x.id)).toEqual(['b1', 'b2', 'b3']);
    expect(answers[0]?.result).toEqual({});
    expect(toolNamesOf(answers[1]?.result)).toEqual([...TOOL_NAMES]);
    expect(answers[2]?.error?.code).toBe(-32601);
  });

  it('a batch of notifications only under 2025-03-26 is 202', async () => {
    const a = await post({
      body: [{ jsonrpc: '2.0', method: 'notifications/initialized' }],
      protocolVersion: '2025-03-26',
    });
    expect(a.status).toBe(202);
    expect(a.text).toBe('');
  });
});

describe('hostile input never yields a stack trace', () => {
  it.each([
    ['params as an array', { ...rpc('tools/list', undefined, 'h1'), params: [1, 2] }, -32602],
    ['a numeric tool name', rpc('tools/call', { name: 42 }, 'h2'), -32602],
    ['arguments as a string', rpc('tools/call', { name: 'send_feedback', arguments: 'x' }, 'h3'), 'isError'],
    ['a numeric resource uri', rpc('resources/read', { uri: 7 }, 'h4'), -32602],
    ['a prompt without a name', rpc('prompts/get', {}, 'h5'), -32602],
  ] as const)('%s is answered without a stack trace', async (_label, message, expected) => {
    const a = await post({ body: message });
    expect(a.status).toBe(200);
    const body = asRpc(a);
    expect(body.id).toBe(message.id);
    if (expected === 'isError') expect(body.result?.isError).toBe(true);
    else expect(body.error?.code).toBe(expected);
  });

  it('deeply nested arguments are refused as invalid arguments', async () => {
    let nested: unknown = 'leaf';
    for (let i = 0; i < 2000; i++) nested = { n: nested };
    const a = await post({
      body: rpc('tools/call', {
        name: 'send_feedback',
        arguments: { summary: 's', details: 'd', area: 'mcp', context: nested },
      }),
    });
    expect(a.status).toBe(200);
    const result = asRpc(a).result as { isError: boolean; structuredContent: { error: { code: string } } };
    expect(result.isError).toBe(true);
    expect(result.structuredContent.error.code).toBe('invalid_arguments');
  });
});

describe('authentication, tenancy and origin', () => {
  it('no token is 401 with the Bearer challenge', async () => {
    const a = await post({ body: rpc('ping', undefined, 1), token: null });
    expect(a.status).toBe(401);
    expect(a.headers.get('www-authenticate')).toBe('Bearer realm="flowgate"');
    expect(a.json).toMatchObject({ code: expect.any(String), message: expect.any(String) });
  });

  it('an unknown key is 401 with error="invalid_token" and is never echoed', async () => {
    const bogus = `fgk_${key.keyId}_${'A'.repeat(43)}`;
    const a = await post({ body: rpc('ping', undefined, 1), token: bogus });
    expect(a.status).toBe(401);
    expect(a.headers.get('www-authenticate')).toBe('Bearer realm="flowgate", error="invalid_token"');
    expect(a.text).not.toContain(bogus);
  });

  it.each(['access_token', 'token', 'api_key'])(
    'a token in the query string (?%s=) is 401',
    async (param) => {
      const a = await send(
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key.apiKey}`,
            'content-type': 'application/json',
            accept: STREAMABLE_ACCEPT,
          },
          body: JSON.stringify(rpc('ping', undefined, 1)),
        },
        `${url}?${param}=${encodeURIComponent(key.apiKey)}`,
      );
      expect(a.status).toBe(401);
      expect(a.headers.get('www-authenticate')).toMatch(/^Bearer realm="flowgate"/);
      expect(a.text).not.toContain(key.apiKey);
    },
  );

  it('a key of another workspace is 403', async () => {
    const a = await post({ body: rpc('ping', undefined, 1), token: otherKey.apiKey });
    expect(a.status).toBe(403);
    expect(a.text).not.toContain(otherKey.apiKey);
  });

  it('a key for a workspace that does not exist is 403 (existence is not revealed)', async () => {
    const a = checked(
      await mcpPost(gw.mcpUrl('ws-does-not-exist'), { token: key.apiKey, body: rpc('ping', undefined, 1) }),
    );
    expect(a.status).toBe(403);
  });

  it('Origin https://evil.test is 403', async () => {
    const a = await post({ body: rpc('ping', undefined, 1), headers: { origin: 'https://evil.test' } });
    expect(a.status).toBe(403);
  });

  it('Origins allowed by the deployment or by the workspace policy are served; none at all is fine', async () => {
    for (const origin of [ALLOWED_ORIGIN, WS_ORIGIN]) {
      const a = await post({ body: rpc('ping', undefined, 1), headers: { origin } });
      expect(a.status, origin).toBe(200);
    }
    expect((await post({ body: rpc('ping', undefined, 1) })).status).toBe(200);
  });
});

describe('narrowing headers', () => {
  it('an unknown toolset is 400 naming it and listing the valid ones', async () => {
    const a = await post({ body: rpc('tools/list', {}, 1), headers: { 'X-MCP-Toolsets': 'read, bogus' } });
    expect(a.status).toBe(400);
    const body = a.json as { code: string; message: string; unknown: string[]; valid: string[] };
    expect(body.code).toBe('invalid_narrowing');
    expect(body.unknown).toEqual(['bogus']);
    expect(body.valid).toEqual(expect.arrayContaining(['all', 'read', 'feedback', 'context', 'setup']));
    expect(body.valid).not.toContain('bogus');
    expect(body.message).toContain('bogus');
  });

  it('an unknown tool name in X-MCP-Tools or X-MCP-Exclude-Tools is 400 listing the served tools', async () => {
    for (const header of ['X-MCP-Tools', 'X-MCP-Exclude-Tools']) {
      const a = await post({
        body: rpc('tools/list', {}, 1),
        headers: { [header]: 'send_feedback,frobnicate' },
      });
      expect(a.status, header).toBe(400);
      const body = a.json as { unknown: string[]; valid: string[] };
      expect(body.unknown).toEqual(['frobnicate']);
      expect(body.valid).toEqual([...TOOL_NAMES]);
    }
  });

  it('a non-boolean X-MCP-Readonly is 400', async () => {
    const a = await post({ body: rpc('tools/list', {}, 1), headers: { 'X-MCP-Readonly': 'maybe' } });
    expect(a.status).toBe(400);
    expect((a.json as { unknown: string[] }).unknown).toEqual(['maybe']);
  });

  it('tools/list params narrow further but never widen the header set', async () => {
    const names = async (params: Record<string, unknown>) => {
      const a = await post({ body: rpc('tools/list', params, 1), headers: { 'X-MCP-Toolsets': 'setup' } });
      expect(a.status).toBe(200);
      return toolNamesOf(asRpc(a).result);
    };
    const setup = inToolsets('setup');
    expect(setup).toEqual(expect.arrayContaining(['list_connections', 'check_connections']));
    expect(await names({})).toEqual(setup);
    expect(await names({ excludeTools: ['check_connections'] })).toEqual(without(setup, 'check_connections'));
    const feedbackOrContext = inToolsets('feedback', 'context');
    expect(await names({ toolsets: ['feedback', 'context'] })).toEqual(
      setup.filter((n) => feedbackOrContext.includes(n)),
    );
    expect(await names({ toolsets: 'all' })).toEqual(setup);
  });
});
