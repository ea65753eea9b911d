import { seedWorkspace } from '@flowgate/workspace/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { TOOL_NAMES } from './catalog.js';
import type { McpRequestContext } from './context.js';
import { handleMcpMessage } from './dispatch.js';
import { serverIcons } from './icons.js';
import {
  classifyMessage,
  decodeHeaderValue,
  encodeHeaderValue,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  type ModernHeaders,
  modernRequestHeaders,
  modernResult,
  modernResultJson,
  parseEnvelope,
} from './revision.js';
import { useTestDb } from './testing.js';

const V = '2026-07-28';
const ENVELOPE = {
  [META_PROTOCOL_VERSION]: V,
  [META_CLIENT_CAPABILITIES]: {},
  [META_CLIENT_INFO]: { name: 'agent-x', version: '4.5.6' },
};
const SERVER = { name: 'flowgate-workspace-mcp', title: 'Flowgate workspace MCP', version: '0.1.0' };

function headers(
  method: string | null,
  name: string | null = null,
  version: string | null = V,
): ModernHeaders {
  return { protocolVersion: version, method, name };
}

function b64(value: string): string {
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

describe('parseEnvelope', () => {
  it('gives version, client info and capabilities of a complete envelope', () => {
    expect(parseEnvelope(ENVELOPE)).toEqual({
      ok: true,
      version: V,
      clientInfo: { name: 'agent-x', version: '4.5.6' },
      clientCapabilities: {},
    });
  });

  it('accepts an envelope without clientInfo (a SHOULD, not a MUST) and ignores foreign keys', () => {
    const parsed = parseEnvelope({
      [META_PROTOCOL_VERSION]: V,
      [META_CLIENT_CAPABILITIES]: { sampling: {} },
      reason: 'why',
      progressToken: 3,
    });
    expect(parsed).toMatchObject({ ok: true, clientInfo: null, clientCapabilities: { sampling: {} } });
  });

  it('reports missing required keys first, in order', () => {
    expect(parseEnvelope({})).toMatchObject({
      ok: false,
      missing: [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES],
      issue: { key: META_PROTOCOL_VERSION, problem: 'missing' },
    });
    expect(parseEnvelope({ [META_PROTOCOL_VERSION]: V })).toMatchObject({
      ok: false,
      issue: { key: META_CLIENT_CAPABILITIES, problem: 'missing' },
    });
  });

  it.each([
    [{ ...ENVELOPE, [META_PROTOCOL_VERSION]: 20260728 }, META_PROTOCOL_VERSION],
    [{ ...ENVELOPE, [META_CLIENT_CAPABILITIES]: 'all' }, META_CLIENT_CAPABILITIES],
    [{ ...ENVELOPE, [META_CLIENT_INFO]: { name: 'no-version' } }, `${META_CLIENT_INFO}.version`],
  ])('names the malformed key (%#)', (meta, key) => {
    const parsed = parseEnvelope(meta);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issue.key).toBe(key);
  });

  it('bounds a self-reported client name', () => {
    const parsed = parseEnvelope({
      ...ENVELOPE,
      [META_CLIENT_INFO]: { name: 'n'.repeat(5000), version: '1' },
    });
    expect(parsed.ok && parsed.clientInfo?.name.length).toBe(200);
  });
});

describe('decodeHeaderValue', () => {
  it('passes plain values through and decodes the Base64 sentinel as UTF-8', () => {
    expect(decodeHeaderValue('search_flows')).toBe('search_flows');
    expect(decodeHeaderValue(b64('flowgate://flows/ü'))).toBe('flowgate://flows/ü');
  });

  it.each([
    '=?base64?not base64?=',
    '=?base64?QQ?=',
    `=?base64?${Buffer.from([0xff, 0xfe]).toString('base64')}?=`,
  ])('refuses a broken sentinel %s', (value) => {
    expect(decodeHeaderValue(value)).toBeUndefined();
  });
});

describe('encodeHeaderValue and modernRequestHeaders (what a forwarder sends)', () => {
  it.each(['search_flows', 'flowgate://flows/ü', ' padded', '', '=?base64?QUI=?='])(
    'round-trips %j',
    (value) => {
      const encoded = encodeHeaderValue(value);
      expect(/^[\x20-\x7e]*$/.test(encoded)).toBe(true);
      expect(decodeHeaderValue(encoded)).toBe(value);
    },
  );

  it('derives the headers of an enveloped request and nothing for 2025-era messages', () => {
    expect(
      modernRequestHeaders({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'x', _meta: ENVELOPE },
      }),
    ).toEqual({ 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'x' });
    expect(modernRequestHeaders({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} })).toBeNull();
    expect(
      modernRequestHeaders({ jsonrpc: '2.0', method: 'notifications/x', params: { _meta: ENVELOPE } }),
    ).toBeNull();
    expect(modernRequestHeaders([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }])).toBeNull();
  });
});

describe('classifyMessage', () => {
  const call = { name: 'search_flows', arguments: {}, _meta: ENVELOPE };

  it('leaves 2025-era messages alone', () => {
    expect(classifyMessage('tools/list', {}, true, headers(null, null, '2025-11-25'))).toEqual({
      kind: 'legacy',
    });
    expect(classifyMessage('tools/list', {}, true, headers(null, null, null))).toEqual({ kind: 'legacy' });
    expect(classifyMessage('initialize', { protocolVersion: V }, true, headers(null, null, null))).toEqual({
      kind: 'legacy',
    });
  });

  it('serves a request whose envelope and headers agree', () => {
    expect(classifyMessage('tools/call', call, true, headers('tools/call', 'search_flows'))).toEqual({
      kind: 'modern',
      envelope: {
        version: V,
        clientInfo: { name: 'agent-x', version: '4.5.6' },
        clientCapabilities: {},
      },
    });
    // Optional whitespace around field values is not part of them; Base64-encoded names are decoded.
    expect(classifyMessage('tools/call', call, true, headers(' tools/call ', b64('search_flows'))).kind).toBe(
      'modern',
    );
  });

  function rejected(...args: Parameters<typeof classifyMessage>) {
    const verdict = classifyMessage(...args);
    if (verdict.kind !== 'reject') throw new Error(`expected a rejection, got ${verdict.kind}`);
    expect(verdict.status).toBe(400);
    return verdict.error;
  }

  it.each([
    ['MCP-Protocol-Version missing', headers('tools/call', 'search_flows', null)],
    ['Mcp-Method missing', headers(null, 'search_flows')],
    ['Mcp-Method differs', headers('tools/list', 'search_flows')],
    ['Mcp-Name missing', headers('tools/call', null)],
    ['Mcp-Name differs', headers('tools/call', 'get_flow_definition')],
    ['Mcp-Name broken Base64', headers('tools/call', '=?base64?%%%?=')],
    ['versions differ', headers('tools/call', 'search_flows', '2025-11-25')],
  ])('%s: -32020', (_, h) => {
    expect(rejected('tools/call', call, true, h).code).toBe(-32020);
  });

  it('checks Mcp-Name against params.uri for resources/read and params.name for prompts/get', () => {
    const read = { uri: 'flowgate://mcp-docs/overview', _meta: ENVELOPE };
    expect(classifyMessage('resources/read', read, true, headers('resources/read', read.uri)).kind).toBe(
      'modern',
    );
    expect(rejected('resources/read', read, true, headers('resources/read', 'flowgate://x')).code).toBe(
      -32020,
    );
    const prompt = { name: 'debug_run', arguments: {}, _meta: ENVELOPE };
    expect(classifyMessage('prompts/get', prompt, true, headers('prompts/get', 'debug_run')).kind).toBe(
      'modern',
    );
    expect(rejected('prompts/get', prompt, true, headers('prompts/get')).code).toBe(-32020);
    // Methods without a name need no Mcp-Name.
    expect(classifyMessage('tools/list', { _meta: ENVELOPE }, true, headers('tools/list')).kind).toBe(
      'modern',
    );
  });

  it('answers an unsupported revision with -32022 listing what is served', () => {
    const meta = { ...ENVELOPE, [META_PROTOCOL_VERSION]: '2027-01-01' };
    const error = rejected('tools/list', { _meta: meta }, true, headers('tools/list', null, '2027-01-01'));
    expect(error).toMatchObject({
      code: -32022,
      data: { supported: ['2026-07-28'], requested: '2027-01-01' },
    });
    // A 2025 version named in the envelope is no way around initialize.
    const legacy = { ...ENVELOPE, [META_PROTOCOL_VERSION]: '2025-11-25' };
    expect(
      rejected('tools/list', { _meta: legacy }, true, headers('tools/list', null, '2025-11-25')).code,
    ).toBe(-32022);
  });

  it('answers a missing or malformed envelope with -32602 naming the key', () => {
    expect(rejected('tools/list', {}, true, headers('tools/list'))).toMatchObject({
      code: -32602,
      data: { envelope: { missing: ['_meta'] } },
    });
    expect(
      rejected('tools/list', { _meta: { [META_PROTOCOL_VERSION]: V } }, true, headers('tools/list')),
    ).toMatchObject({
      code: -32602,
      data: { envelope: { key: META_CLIENT_CAPABILITIES, problem: 'missing' } },
    });
    expect(rejected('tools/list', { _meta: { reason: 'x' } }, true, headers('tools/list'))).toMatchObject({
      code: -32602,
      data: { envelope: { missing: [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES] } },
    });
  });

  it('refuses initialize under a 2026-07-28 header and treats a fully enveloped initialize as modern', () => {
    expect(rejected('initialize', { protocolVersion: '2025-11-25' }, true, headers('initialize')).code).toBe(
      -32020,
    );
    expect(classifyMessage('initialize', { _meta: ENVELOPE }, true, headers('initialize')).kind).toBe(
      'modern',
    );
  });

  it('needs no headers on notifications', () => {
    expect(
      classifyMessage('notifications/cancelled', { _meta: ENVELOPE }, false, headers(null, null, null)).kind,
    ).toBe('modern');
  });
});

describe('modern results', () => {
  it('carry resultType, cache hints on cacheable methods and the server identity in _meta', () => {
    expect(modernResult('tools/call', { content: [] }, SERVER)).toEqual({
      resultType: 'complete',
      content: [],
      _meta: { [META_SERVER_INFO]: SERVER },
    });
    expect(modernResult('resources/read', { contents: [], _meta: { x: 1 } }, SERVER)).toEqual({
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      contents: [],
      _meta: { x: 1, [META_SERVER_INFO]: SERVER },
    });
  });

  it('splice into a serialised result without parsing it', () => {
    const json = modernResultJson('tools/list', '{"tools":[{"name":"a"}]}', SERVER);
    expect(JSON.parse(json)).toEqual({
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { [META_SERVER_INFO]: SERVER },
      tools: [{ name: 'a' }],
    });
    expect(JSON.parse(modernResultJson('tools/list', '{}', SERVER))).toMatchObject({
      resultType: 'complete',
    });
  });
});

// ---- through the dispatcher ------------------------------------------------------------------------------

const env = useTestDb();
beforeAll(async () => {
  await seedWorkspace(env.db, 'ws-acme', 'Acme');
});

async function modern(
  method: string,
  params: Record<string, unknown> = {},
  over: Partial<McpRequestContext> = {},
  name: string | null = null,
) {
  const ctx = env.ctx({
    protocolVersionHeader: V,
    mcpMethodHeader: method,
    mcpNameHeader: name,
    clientInfo: { name: 'curl/8', version: null },
    ...over,
  });
  const res = await handleMcpMessage(
    {
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: { ...ENVELOPE, ...((params._meta as Record<string, unknown> | undefined) ?? {}) },
      },
    },
    ctx,
  );
  return { status: res.status, body: res.body === null ? null : JSON.parse(res.body), ctx };
}

describe('dispatch under 2026-07-28', () => {
  it('answers server/discover without initialize', async () => {
    const { status, body } = await modern('server/discover');
    expect(status).toBe(200);
    expect(body.result).toEqual({
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      supportedVersions: ['2026-07-28'],
      capabilities: {
        tools: {},
        resources: { subscribe: true },
        prompts: {},
        extensions: { 'io.modelcontextprotocol/tasks': {} },
      },
      // The icons once, here; every result's `_meta` carries the identity without them.
      serverInfo: { ...SERVER, icons: serverIcons() },
      instructions: expect.stringContaining('ws-acme'),
      _meta: { [META_SERVER_INFO]: SERVER },
    });
  });

  it('lists tools from the cached list with the 2026 fields', async () => {
    const { body } = await modern('tools/list');
    expect(body.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    expect(body.result.tools.map((t: { name: string }) => t.name)).toEqual([...TOOL_NAMES]);
  });

  it('calls a tool, reporting 2026-07-28 and auditing the envelope client', async () => {
    const { body, ctx } = await modern(
      'tools/call',
      { name: 'get_workspace_context', arguments: {}, _meta: { reason: 'checking' } },
      {},
      'get_workspace_context',
    );
    expect(body.result.resultType).toBe('complete');
    expect(body.result.isError).toBeUndefined();
    expect(body.result.structuredContent.protocol.version).toBe(V);
    expect(ctx.audits).toHaveLength(1);
    expect(ctx.audits[0]).toMatchObject({
      kind: 'tools/call',
      clientName: 'agent-x',
      clientVersion: '4.5.6',
      protocolVersion: V,
      reason: 'checking',
    });
  });

  it('falls back to the gateway-derived client when the envelope has no clientInfo', async () => {
    const meta = { [META_CLIENT_INFO]: undefined };
    const { ctx } = await modern(
      'tools/call',
      { name: 'get_workspace_context', _meta: meta },
      {},
      'get_workspace_context',
    );
    expect(ctx.audits[0]).toMatchObject({ clientName: 'curl/8', protocolVersion: V });
  });

  it('reads a resource and gets a prompt', async () => {
    const uri = 'flowgate://mcp-docs/overview';
    const read = await modern('resources/read', { uri }, {}, uri);
    expect(read.body.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    expect(read.body.result.contents[0].text).toContain('2026-07-28');
    const missing = await modern('resources/read', { uri: 'flowgate://nope' }, {}, 'flowgate://nope');
    expect(missing.status).toBe(200);
    expect(missing.body.error).toMatchObject({ code: -32602, data: { uri: 'flowgate://nope' } });
    const prompts = await modern('prompts/list');
    const first = prompts.body.result.prompts[0];
    expect(prompts.body.result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
    expect(typeof first.name).toBe('string');
  });

  it('answers initialize, ping (deleted in 2026-07-28) and unknown methods with HTTP 404 -32601', async () => {
    for (const method of ['initialize', 'ping', 'logging/setLevel', 'no/such']) {
      const { status, body } = await modern(method);
      expect(status).toBe(404);
      expect(body).toMatchObject({ id: 1, error: { code: -32601 } });
    }
  });

  it('rejects a header mismatch with HTTP 400 and the request id', async () => {
    const { status, body } = await modern('tools/list', {}, { mcpMethodHeader: 'tools/call' });
    expect(status).toBe(400);
    expect(body).toMatchObject({ id: 1, error: { code: -32020 } });
  });

  it('accepts an enveloped notification with 202 and refuses batches with a modern element', async () => {
    const note = await handleMcpMessage(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: ENVELOPE } },
      env.ctx({ protocolVersionHeader: V }),
    );
    expect(note).toEqual({ status: 202, body: null });
    const batch = await handleMcpMessage(
      [{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: ENVELOPE } }],
      env.ctx({ protocolVersionHeader: null }),
    );
    expect(batch.status).toBe(400);
    expect(JSON.parse(batch.body as string).error.code).toBe(-32600);
  });

  it('leaves 2025 requests on the same context untouched', async () => {
    const res = await handleMcpMessage(
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      env.ctx({ protocolVersionHeader: '2025-11-25' }),
    );
    const body = JSON.parse(res.body as string);
    expect(body.result.resultType).toBeUndefined();
    expect(body.result.ttlMs).toBeUndefined();
  });
});
