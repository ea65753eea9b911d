import { readFileSync } from 'node:fs';
import { AppError } from '@flowgate/core';
import { createTestDb } from '@flowgate/db/testing';
import { REDACTED } from '@flowgate/secrets';
import { seedWorkspace, storedFeedback, testWorkspaceDeps } from '@flowgate/workspace/testing';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { AUDIT_PREVIEW_LIMITS } from './audit-preview.js';
import { CATALOG, TOOL_NAMES } from './catalog.js';
import { DEFAULT_SERVER_VERSION } from './context.js';
import {
  handleMcpMessage,
  MAX_BATCH_SIZE,
  SUPPORTED_METHODS,
  toolsListSerialisationCount,
} from './dispatch.js';
import { parseNarrowingHeaders } from './narrowing.js';
import { adaptContentForVersion, parseErrorResult } from './protocol.js';
import { callTool, makeCtx, rpc, useTestDb } from './testing.js';

/** The longest text any redaction call was given: hostile input must reach redaction only as a bounded preview. */
const redaction = vi.hoisted(() => ({ longest: 0 }));
vi.mock('@flowgate/secrets', async (importOriginal) => {
  const { probeRedaction } = await import('./redaction-probe.js');
  return probeRedaction(await importOriginal<typeof import('@flowgate/secrets')>(), redaction);
});

const env = useTestDb();
beforeAll(async () => {
  await seedWorkspace(env.db, 'ws-acme', 'Acme');
});

const parse = (body: string | null) => JSON.parse(body as string);

function narrow(headers: Parameters<typeof parseNarrowingHeaders>[0]) {
  const r = parseNarrowingHeaders(headers);
  if (!r.ok) throw new Error(r.error.message);
  return r.narrowing;
}

describe('initialize', () => {
  it.each(['2025-11-25', '2025-06-18', '2025-03-26'])('echoes the supported version %s', async (version) => {
    const ctx = env.ctx({ protocolVersionHeader: null });
    const { status, body } = await rpc(ctx, 'initialize', {
      protocolVersion: version,
      capabilities: {},
      clientInfo: { name: 'c', version: '1' },
    });
    expect(status).toBe(200);
    expect(body.result).toEqual({
      protocolVersion: version,
      // Experimental Tasks (2025-11-25 only) for a caller who can run flows, as this one can.
      capabilities:
        version === '2025-11-25'
          ? {
              tools: {},
              resources: {},
              prompts: {},
              tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
            }
          : { tools: {}, resources: {}, prompts: {} },
      // title from 2025-06-18, icons from 2025-11-25.
      serverInfo:
        version === '2025-03-26'
          ? { name: 'flowgate-workspace-mcp', version: '0.1.0' }
          : version === '2025-06-18'
            ? { name: 'flowgate-workspace-mcp', title: 'Flowgate workspace MCP', version: '0.1.0' }
            : {
                name: 'flowgate-workspace-mcp',
                title: 'Flowgate workspace MCP',
                version: '0.1.0',
                icons: [
                  {
                    src: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
                    mimeType: 'image/svg+xml',
                    sizes: ['any'],
                  },
                ],
              },
      instructions: expect.stringContaining('flowgate://mcp-docs/overview'),
    });
    expect(body.result.instructions).toContain('ws-acme');
  });

  it.each([['2024-11-05'], ['2026-07-28'], [undefined], [42]])(
    'answers the latest version when %s is requested',
    async (requested) => {
      const { body } = await rpc(
        env.ctx(),
        'initialize',
        requested === undefined ? {} : { protocolVersion: requested },
      );
      expect(body.result.protocolVersion).toBe('2025-11-25');
    },
  );

  it('is exempt from MCP-Protocol-Version validation and reports the client to the gateway', async () => {
    const seen: unknown[] = [];
    const ctx = env.ctx({
      protocolVersionHeader: '1999-01-01',
      serverVersion: '9.9.9',
      onInitialize: (i) => seen.push(i),
    });
    const { status, body } = await rpc(ctx, 'initialize', {
      protocolVersion: '2025-06-18',
      clientInfo: { name: 'codex', version: '0.50' },
    });
    expect(status).toBe(200);
    expect(body.result.serverInfo.version).toBe('9.9.9');
    expect(seen).toEqual([
      {
        clientInfo: { name: 'codex', version: '0.50' },
        requestedVersion: '2025-06-18',
        negotiatedVersion: '2025-06-18',
      },
    ]);
  });

  it('survives a throwing onInitialize hook', async () => {
    const ctx = env.ctx({
      onInitialize: () => {
        throw new Error('log sink down');
      },
    });
    const { status, body } = await rpc(ctx, 'initialize', { protocolVersion: '2025-06-18' });
    expect(status).toBe(200);
    expect(body.result.protocolVersion).toBe('2025-06-18');
    expect(ctx.errors).toHaveLength(1);
  });

  it('reports the package version by default', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(DEFAULT_SERVER_VERSION).toBe(pkg.version);
  });

  it('advertises no listChanged and no subscribe', async () => {
    const { body } = await rpc(env.ctx(), 'initialize', { protocolVersion: '2025-11-25' });
    expect(JSON.stringify(body.result.capabilities)).not.toMatch(/listChanged|subscribe/);
  });
});

describe('protocol version header', () => {
  it('rejects an unsupported MCP-Protocol-Version with HTTP 400', async () => {
    const res = await handleMcpMessage(
      { jsonrpc: '2.0', id: 7, method: 'ping' },
      env.ctx({ protocolVersionHeader: '2024-11-05' }),
    );
    expect(res.status).toBe(400);
    expect(parse(res.body)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32600,
        message: expect.stringContaining('Unsupported MCP-Protocol-Version "2024-11-05"'),
        data: { supported: ['2025-11-25', '2025-06-18', '2025-03-26'] },
      },
    });
  });

  it('treats an absent header as 2025-03-26 and otherwise uses the header', async () => {
    for (const [header, expected] of [
      [null, '2025-03-26'],
      ['', '2025-03-26'],
      ['2025-06-18', '2025-06-18'],
      [' 2025-11-25 ', '2025-11-25'],
    ] as const) {
      const { body } = await callTool(
        env.ctx({ protocolVersionHeader: header }),
        'get_workspace_context',
        {},
      );
      expect(body.result.structuredContent.protocol.version).toBe(expected);
    }
  });
});

describe('server/discover without the 2026-07-28 envelope', () => {
  it('is a 2025-era request: 400 -32601 naming the envelope and initialize', async () => {
    for (const header of ['2025-11-25', null]) {
      const res = await handleMcpMessage(
        { jsonrpc: '2.0', id: 'd1', method: 'server/discover', params: {} },
        env.ctx({ protocolVersionHeader: header }),
      );
      expect(res.status).toBe(400);
      const body = parse(res.body);
      expect(body.id).toBe('d1');
      expect(body.error.code).toBe(-32601);
      expect(body.error.message).toContain('2026-07-28');
      expect(body.error.message).toContain('initialize');
    }
  });

  it('under a 2026-07-28 header it is a modern request missing its _meta: 400 -32602', async () => {
    const res = await handleMcpMessage(
      { jsonrpc: '2.0', id: 'd2', method: 'server/discover', params: {} },
      env.ctx({ protocolVersionHeader: '2026-07-28', mcpMethodHeader: 'server/discover' }),
    );
    expect(res.status).toBe(400);
    expect(parse(res.body).error).toMatchObject({ code: -32602, data: { envelope: { missing: ['_meta'] } } });
  });
});

describe('JSON-RPC envelope', () => {
  it('answers a parse error with -32700 and HTTP 400', () => {
    const res = parseErrorResult();
    expect(res.status).toBe(400);
    expect(parse(res.body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error: body is not valid JSON' },
    });
  });

  it.each([
    ['a string', 'hello', null],
    ['null', null, null],
    ['a number', 5, null],
    ['a wrong jsonrpc version', { jsonrpc: '1.0', id: 3, method: 'ping' }, 3],
    ['a missing jsonrpc', { id: 3, method: 'ping' }, 3],
    ['a null id', { jsonrpc: '2.0', id: null, method: 'ping' }, null],
    ['an object id', { jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, null],
    ['a boolean id', { jsonrpc: '2.0', id: true, method: 'ping' }, null],
    ['a missing method', { jsonrpc: '2.0', id: 4 }, 4],
    ['a numeric method', { jsonrpc: '2.0', id: 4, method: 12 }, 4],
    ['an empty method', { jsonrpc: '2.0', id: 4, method: '' }, 4],
  ])('rejects %s with -32600 and HTTP 400', async (_what, message, id) => {
    const res = await handleMcpMessage(message, env.ctx());
    expect(res.status).toBe(400);
    const body = parse(res.body);
    expect(body.id).toBe(id);
    expect(body.error.code).toBe(-32600);
  });

  it('answers params that are not an object with -32602', async () => {
    const res = await handleMcpMessage(
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: [1, 2] },
      env.ctx(),
    );
    expect(res.status).toBe(200);
    expect(parse(res.body).error).toEqual({
      code: -32602,
      message: 'Invalid params: params must be an object',
    });
  });

  it('answers notifications and client responses with 202 and no body', async () => {
    const ctx = env.ctx();
    expect(await handleMcpMessage({ jsonrpc: '2.0', method: 'notifications/initialized' }, ctx)).toEqual({
      status: 202,
      body: null,
    });
    expect(
      await handleMcpMessage(
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
        ctx,
      ),
    ).toEqual({ status: 202, body: null });
    expect(await handleMcpMessage({ jsonrpc: '2.0', id: 9, result: {} }, ctx)).toEqual({
      status: 202,
      body: null,
    });
    expect(await handleMcpMessage({ jsonrpc: '2.0', id: 9, error: { code: 1, message: 'x' } }, ctx)).toEqual({
      status: 202,
      body: null,
    });
    // A notification never runs a method (no audit, no services).
    expect(
      await handleMcpMessage(
        { jsonrpc: '2.0', method: 'tools/call', params: { name: 'send_feedback' } },
        ctx,
      ),
    ).toEqual({ status: 202, body: null });
    expect(ctx.audits).toEqual([]);
  });

  it('answers unknown methods with -32601 and HTTP 200', async () => {
    for (const method of ['tools/delete', 'logging/setLevel', 'completion/complete', 'resources/subscribe']) {
      const { status, body } = await rpc(env.ctx(), method, {});
      expect(status).toBe(200);
      expect(body.error).toEqual({ code: -32601, message: `Method not found: ${method}` });
    }
  });

  it('answers ping with an empty object and accepts string ids', async () => {
    const res = await handleMcpMessage({ jsonrpc: '2.0', id: 'abc', method: 'ping' }, env.ctx());
    expect(parse(res.body)).toEqual({ jsonrpc: '2.0', id: 'abc', result: {} });
  });

  it('serves the documented methods', () => {
    expect([...SUPPORTED_METHODS].sort()).toEqual(
      [
        'initialize',
        'ping',
        'prompts/get',
        'prompts/list',
        'resources/list',
        'resources/read',
        'resources/templates/list',
        'tasks/cancel',
        'tasks/get',
        'tasks/list',
        'tasks/result',
        'tasks/update',
        'tools/call',
        'tools/list',
        'subscriptions/listen',
      ].sort(),
    );
  });
});

describe('batches', () => {
  const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });

  it('are served under 2025-03-26 (explicit or assumed)', async () => {
    for (const header of [null, '2025-03-26']) {
      const res = await handleMcpMessage(
        [ping(1), { jsonrpc: '2.0', method: 'notifications/initialized' }, ping(2)],
        env.ctx({ protocolVersionHeader: header }),
      );
      expect(res.status).toBe(200);
      expect(parse(res.body)).toEqual([
        { jsonrpc: '2.0', id: 1, result: {} },
        { jsonrpc: '2.0', id: 2, result: {} },
      ]);
    }
  });

  it('are refused under later versions with -32600 and HTTP 400', async () => {
    for (const header of ['2025-06-18', '2025-11-25']) {
      const res = await handleMcpMessage([ping(1)], env.ctx({ protocolVersionHeader: header }));
      expect(res.status).toBe(400);
      expect(parse(res.body)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: `JSON-RPC batches are not supported in protocol version ${header} (only 2025-03-26)`,
        },
      });
    }
  });

  it('answers each bad element in place and refuses initialize inside a batch', async () => {
    const res = await handleMcpMessage(
      [
        ping(1),
        { jsonrpc: '1.0', id: 2, method: 'ping' },
        { jsonrpc: '2.0', id: 3, method: 'initialize', params: {} },
        { jsonrpc: '2.0', id: 4, method: 'nope' },
      ],
      env.ctx({ protocolVersionHeader: null }),
    );
    expect(res.status).toBe(200);
    expect(
      parse(res.body).map((r: { id: unknown; error?: { code: number } }) => [r.id, r.error?.code ?? 'ok']),
    ).toEqual([
      [1, 'ok'],
      [2, -32600],
      [3, -32600],
      [4, -32601],
    ]);
  });

  it('answers an all-notification batch with 202, and refuses empty or oversized batches', async () => {
    const ctx = env.ctx({ protocolVersionHeader: null });
    expect(await handleMcpMessage([{ jsonrpc: '2.0', method: 'notifications/initialized' }], ctx)).toEqual({
      status: 202,
      body: null,
    });
    const empty = await handleMcpMessage([], ctx);
    expect(empty.status).toBe(400);
    expect(parse(empty.body).error.code).toBe(-32600);
    const big = await handleMcpMessage(
      Array.from({ length: MAX_BATCH_SIZE + 1 }, (_, i) => ping(i)),
      ctx,
    );
    expect(big.status).toBe(400);
    expect(parse(big.body).error.message).toContain('too large');
  });

  it('validate an unsupported version header before anything else', async () => {
    const res = await handleMcpMessage([ping(1)], env.ctx({ protocolVersionHeader: 'garbage' }));
    expect(res.status).toBe(400);
    expect(parse(res.body).error.message).toContain('Unsupported MCP-Protocol-Version');
  });
});

describe('tools/list', () => {
  it('lists the visible catalog descriptors', async () => {
    const { body } = await rpc(env.ctx(), 'tools/list');
    expect(body.result).toEqual({
      tools: CATALOG.map((t) => ({
        ...JSON.parse(JSON.stringify(t.descriptor)),
        icons: [{ src: `https://flowgate.test/icons/${t.toolsets[0]}.svg` }],
      })),
    });
  });

  it('answers with the cached list as UTF-8 pieces equal to the text, for single messages only', async () => {
    // An id with quotes and non-ASCII, so the spliced envelope is checked byte for byte.
    const id = 'id "quoted" ≤ é';
    const single = await handleMcpMessage({ jsonrpc: '2.0', id, method: 'tools/list' }, env.ctx());
    const parts = single.parts ?? [];
    expect(parts).toHaveLength(3);
    expect(Buffer.concat(parts).toString('utf8')).toBe(single.body);
    expect(parse(single.body).id).toBe(id);
    // The list's pieces are the cached bytes themselves, the same array for every answer (never a copy).
    const again = await handleMcpMessage({ jsonrpc: '2.0', id: 7, method: 'tools/list' }, env.ctx());
    expect(again.parts?.[1]).toBe(parts[1]);
    expect(again.parts?.[2]).toBe(parts[2]);
    // Small integer ids share their head too; other ids get one of their own, spliced exactly.
    const seven = await handleMcpMessage({ jsonrpc: '2.0', id: 7, method: 'tools/list' }, env.ctx());
    expect(seven.parts?.[0]).toBe(again.parts?.[0]);
    expect(Buffer.concat(seven.parts ?? []).toString('utf8')).toBe(seven.body);
    for (const other of [1024, -1, 2.5, '7']) {
      const first = await handleMcpMessage({ jsonrpc: '2.0', id: other, method: 'tools/list' }, env.ctx());
      const second = await handleMcpMessage({ jsonrpc: '2.0', id: other, method: 'tools/list' }, env.ctx());
      expect(second.parts?.[0]).not.toBe(first.parts?.[0]);
      expect(Buffer.concat(second.parts ?? []).toString('utf8')).toBe(second.body);
      expect(parse(second.body).id).toBe(other);
    }
    // Anything not assembled from cached bytes carries text only.
    const ping = await handleMcpMessage({ jsonrpc: '2.0', id: 2, method: 'ping' }, env.ctx());
    expect(ping.parts).toBeUndefined();
    const batch = await handleMcpMessage(
      [{ jsonrpc: '2.0', id: 3, method: 'tools/list' }],
      env.ctx({ protocolVersionHeader: '2025-03-26' }),
    );
    expect(batch.parts).toBeUndefined();
    expect(parse(batch.body)[0].result.tools.length).toBe(CATALOG.length);
  });

  it('lists and pings without opening the workspace use cases', async () => {
    const ctx = env.ctx();
    Object.defineProperty(ctx, 'workspace', {
      get() {
        throw new Error('workspace opened');
      },
    });
    expect((await rpc(ctx, 'tools/list')).body.result.tools.length).toBe(CATALOG.length);
    expect((await rpc(ctx, 'ping')).body.result).toEqual({});
    // A call needs them, and reaches the getter.
    const onError = vi.fn();
    const called = await rpc(
      {
        ...env.ctx(),
        onError,
        get workspace(): never {
          throw new Error('workspace opened');
        },
      },
      'tools/call',
      { name: 'check_connections', arguments: {} },
    );
    expect(called.body.error).toEqual({ code: -32603, message: 'Internal error' });
    expect(String(onError.mock.calls[0]?.[0])).toBe('Error: workspace opened');
  });

  it('serialises once per distinct visible set', async () => {
    const names = (body: { result?: { tools: { name: string }[] } }) => body.result?.tools.map((t) => t.name);
    // The full set (listed by earlier tests too): repeating it never serialises again.
    await rpc(env.ctx(), 'tools/list');
    const warm = toolsListSerialisationCount();
    for (let i = 0; i < 5; i++) await rpc(env.ctx(), 'tools/list');
    expect(toolsListSerialisationCount()).toBe(warm);
    // A visible set no other test lists: serialised once, then served as it was.
    const narrowing = narrow({ tools: 'get_step_reference,send_feedback' });
    const first = await rpc(env.ctx({ narrowing }), 'tools/list');
    expect(names(first.body)).toEqual(['get_step_reference', 'send_feedback']);
    expect(toolsListSerialisationCount()).toBe(warm + 1);
    for (let i = 0; i < 5; i++) {
      const again = await rpc(env.ctx({ narrowing }), 'tools/list');
      expect(again.body.result).toEqual(first.body.result);
    }
    expect(toolsListSerialisationCount()).toBe(warm + 1);
    // The same set reached another way (headers or params) is the same entry.
    const viaParams = await rpc(env.ctx(), 'tools/list', { tools: ['get_step_reference', 'send_feedback'] });
    expect(viaParams.body.result).toEqual(first.body.result);
    expect(toolsListSerialisationCount()).toBe(warm + 1);
  });

  it('narrows further with params and rejects unknown names there with -32602', async () => {
    const ok = await rpc(env.ctx(), 'tools/list', { toolsets: ['setup'], excludeTools: 'check_connections' });
    expect(ok.body.result.tools.map((t: { name: string }) => t.name)).toEqual([
      'list_connections',
      'check_flow_readiness',
    ]);
    const bad = await rpc(env.ctx(), 'tools/list', { tools: ['run_flow'] });
    expect(bad.status).toBe(200);
    expect(bad.body.error).toEqual({
      code: -32602,
      message: expect.stringContaining('tools: unknown "run_flow"'),
      data: {
        unknown: ['run_flow'],
        valid: [...TOOL_NAMES],
      },
    });
  });

  it('rejects a cursor it never issued', async () => {
    const { body } = await rpc(env.ctx(), 'tools/list', { cursor: 'bm9wZQ.AAAAAAAAAAAAAAAAAAAAAA' });
    expect(body.error).toEqual({ code: -32602, message: 'Invalid cursor' });
  });
});

describe('tools/call', () => {
  // Issue 12 finding 7: the refusal counted the truncated diagnostics, and said "0 error(s)".
  it('counts errors from the whole validation when create_flow_draft refuses', async () => {
    const keys = Array.from({ length: 250 }, (_, i) => `:extra-${i} 1`).join(' ');
    const { body } = await callTool(env.ctx(), 'create_flow_draft', {
      flow_literal: `{${keys} :flow (flow/input)}`,
    });
    expect(body.result.isError).toBe(true);
    const text = body.result.content[0].text as string;
    expect(text).not.toContain('0 error(s)');
    expect(body.result.structuredContent.details.summary).toMatchObject({ warnings: 250 });
    expect(body.result.structuredContent.details.summary.errors).toBeGreaterThanOrEqual(1);
    expect(body.result.structuredContent.details.diagnostics[0].severity).toBe('error');
  });

  it('suggests the closest tool for a misspelled tool name', async () => {
    const { body } = await callTool(env.ctx(), 'get_run_staus', {});
    expect(body.error).toEqual({
      code: -32602,
      message: 'Unknown tool: get_run_staus; did you mean get_run_status?',
      data: { tool: 'get_run_staus', didYouMean: 'get_run_status' },
    });
  });

  it('answers an unknown tool with -32602', async () => {
    const ctx = env.ctx();
    const { status, body } = await callTool(ctx, 'run_flow', {});
    expect(status).toBe(200);
    expect(body.error).toEqual({
      code: -32602,
      message: 'Unknown tool: run_flow',
      data: { tool: 'run_flow' },
    });
    expect(ctx.audits[0]).toMatchObject({
      kind: 'tools/call',
      action: 'run_flow',
      outcome: 'error',
      errorCode: 'unknown_tool',
    });
  });

  it('answers a missing or non-string name with -32602', async () => {
    for (const params of [{}, { name: 3 }, { name: '' }]) {
      const { body } = await rpc(env.ctx(), 'tools/call', params);
      expect(body.error).toEqual({ code: -32602, message: 'params.name must be a tool name' });
    }
  });

  it('returns the blocked-tool result for a hidden tool, without reading the workspace', async () => {
    const ctx = env.ctx({
      capabilities: new Set(['feedback.send']),
      narrowing: narrow({ toolsets: 'context,feedback' }),
    });
    const { result, statements } = await env.statementsDuring(() =>
      callTool(ctx, 'list_connections', { limit: 5 }),
    );
    expect(statements).toEqual([]);
    const { status, body } = result;
    expect(status).toBe(200);
    const message =
      'list_connections is not available: the token lacks connections.read (grant it to the principal); ' +
      'X-MCP-Toolsets (context, feedback) includes none of its toolsets (read, setup). ' +
      'See structuredContent.details.blockers; read flowgate://mcp-docs/tool-safety.';
    expect(body.result).toEqual({
      isError: true,
      content: [{ type: 'text', text: message }],
      structuredContent: {
        error: { code: 'tool_blocked', message },
        details: {
          tool: 'list_connections',
          blockers: [
            { reason: 'missing_service_account_capabilities', missingCapabilities: ['connections.read'] },
            {
              reason: 'toolset_policy',
              toolToolsets: ['read', 'setup'],
              activeToolsets: ['context', 'feedback'],
            },
          ],
        },
      },
    });
    expect(ctx.audits).toEqual([
      expect.objectContaining({
        outcome: 'blocked',
        errorCode: 'tool_blocked',
        blockers: body.result.structuredContent.details.blockers,
      }),
    ]);
  });

  it('returns invalid_arguments with issues when the schema rejects the arguments', async () => {
    const ctx = env.ctx();
    const { result, statements } = await env.statementsDuring(() =>
      callTool(ctx, 'list_connections', { limit: 1000, extra: true }),
    );
    expect(statements).toEqual([]);
    const { body } = result;
    expect(body.result).toEqual({
      isError: true,
      content: [{ type: 'text', text: expect.stringMatching(/^Invalid arguments for list_connections: /) }],
      structuredContent: {
        error: { code: 'invalid_arguments', message: body.result.content[0].text },
        details: {
          issues: [
            { path: 'limit', message: expect.stringContaining('100') },
            { path: '(root)', message: 'Unrecognized key "extra"; valid: limit, cursor' },
          ],
        },
      },
    });
    expect(ctx.audits[0]).toMatchObject({ outcome: 'error', errorCode: 'invalid_arguments' });
  });

  it('names the valid argument keys when a key is unknown, so the call can be repaired in one step', async () => {
    const { body } = await callTool(env.ctx(), 'check_flow_readiness', {
      flow_slug: 'enrich-company',
      source: 'draft',
      versions: 2,
    });
    expect(body.result.structuredContent.details.issues).toEqual([
      {
        path: '(root)',
        message: 'Unrecognized keys "source", "versions"; valid: flow_slug, installation_id, target',
      },
    ]);
    expect(body.result.structuredContent.error.message).toBe(
      'Invalid arguments for check_flow_readiness: (root): Unrecognized keys "source", "versions"; valid: flow_slug, installation_id, target',
    );
  });

  it('treats non-object arguments as invalid arguments and absent arguments as {}', async () => {
    const bad = await callTool(env.ctx(), 'get_workspace_context', [1]);
    expect(bad.body.result.structuredContent.error.code).toBe('invalid_arguments');
    const none = await callTool(env.ctx(), 'get_workspace_context');
    expect(none.body.result.isError).toBeUndefined();
  });

  it('returns structuredContent plus the same JSON as text on success', async () => {
    const { body } = await callTool(env.ctx(), 'send_feedback', {
      summary: 'Docs unclear',
      details: 'The overview skips pagination.',
      area: 'docs',
    });
    expect(body.result.isError).toBeUndefined();
    expect(body.result.structuredContent).toEqual({
      feedbackId: expect.stringMatching(/^fb_/),
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      redacted: false,
    });
    expect(body.result.content).toEqual([
      { type: 'text', text: JSON.stringify(body.result.structuredContent) },
    ]);
    const stored = await storedFeedback(env.db, 'ws-acme');
    expect(stored.find((f) => f.id === body.result.structuredContent.feedbackId)?.summary).toBe(
      'Docs unclear',
    );
  });

  it('turns an AppError from the workspace into an isError result with its code', async () => {
    // The workspace answers not_found for a workspace that does not exist (deleted after the key was issued).
    const ctx = env.ctx({ workspaceId: 'ws-gone' });
    const { body } = await callTool(ctx, 'get_workspace_context', {});
    expect(body.result).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'workspace not found' }],
      structuredContent: {
        error: { code: 'not_found', message: 'workspace not found' },
      },
    });
    expect(ctx.audits[0]).toMatchObject({ outcome: 'error', errorCode: 'not_found' });
  });

  it('keeps AppError issues as details', async () => {
    // No use case behind a tool throws issues today; a workspace that does stands in, to pin how dispatch maps them.
    const real = env.ctx().workspace();
    const ctx = env.ctx({
      workspace: () => ({
        ...real,
        feedback: {
          send: async () => {
            throw new AppError('validation_failed', 'Bad link', [
              { path: 'resource_uri', message: 'unknown resource' },
            ]);
          },
        },
      }),
    });
    const { body } = await callTool(ctx, 'send_feedback', { summary: 's', details: 'd', area: 'mcp' });
    expect(body.result.structuredContent).toEqual({
      error: { code: 'validation_failed', message: 'Bad link' },
      details: { issues: [{ path: 'resource_uri', message: 'unknown resource' }] },
    });
  });

  it('answers unexpected failures with a generic -32603 and hands the error to the gateway', async () => {
    // A database that went away under the workspace: every read and write fails below the use cases.
    const gone = await createTestDb();
    await gone.close();
    for (const [name, args] of [
      ['list_connections', {}],
      ['send_feedback', { summary: 'Storage down?', details: 'x', area: 'other' }],
    ] as const) {
      const ctx = makeCtx(testWorkspaceDeps(gone.db));
      const res = await handleMcpMessage(
        { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name, arguments: args } },
        ctx,
      );
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body as string)).toEqual({
        jsonrpc: '2.0',
        id: 5,
        error: { code: -32603, message: 'Internal error' },
      });
      expect(ctx.errors).toHaveLength(1);
      const error = ctx.errors[0] as Error;
      expect(error).toBeInstanceOf(Error);
      expect(res.body).not.toContain(error.message);
      expect(ctx.audits[0]).toMatchObject({ action: name, outcome: 'error', errorCode: 'internal_error' });
    }
  });

  it('never sends structuredContent that breaks the output schema', async () => {
    // Only a misbehaving workspace could hand back such a receipt; dispatch must refuse to send it.
    const real = env.ctx().workspace();
    const ctx = env.ctx({
      workspace: () => ({
        ...real,
        feedback: {
          send: async (input) => ({
            feedbackId: 7 as unknown as string,
            createdAt: 'now',
            redacted: false,
            stored: input,
          }),
        },
      }),
    });
    const { body } = await callTool(ctx, 'send_feedback', { summary: 's', details: 'd', area: 'mcp' });
    expect(body.error).toEqual({ code: -32603, message: 'Internal error' });
    expect(ctx.errors).toHaveLength(1);
  });
});

describe('audit hook', () => {
  it('receives redacted arguments, the reason and the client, for every call', async () => {
    const ctx = env.ctx({ clientInfo: { name: 'claude-code', version: '2.1' } });
    const args = {
      summary: 'Leaked',
      details: 'my token is Bearer abcdefghijklmnop',
      area: 'setup',
      context: { token: 'tok-123456', step: 'init' },
    };
    await callTool(ctx, 'send_feedback', args, { reason: 'user asked to report the setup issue' });
    expect(ctx.audits).toEqual([
      {
        kind: 'tools/call',
        action: 'send_feedback',
        arguments: {
          summary: 'Leaked',
          details: `my token is ${REDACTED}`,
          area: 'setup',
          context: { token: REDACTED, step: 'init' },
        },
        outcome: 'ok',
        errorCode: null,
        blockers: null,
        reason: 'user asked to report the setup issue',
        durationMs: expect.any(Number),
        resourceUris: [],
        runId: null,
        clientName: 'claude-code',
        clientVersion: '2.1',
        protocolVersion: '2025-11-25',
      },
    ]);
    expect(JSON.stringify(ctx.audits)).not.toContain('tok-123456');
    expect(JSON.stringify(ctx.audits)).not.toContain('abcdefghijklmnop');
  });

  it('redacts the reason and bounds it', async () => {
    const ctx = env.ctx();
    await callTool(
      ctx,
      'get_workspace_context',
      {},
      { reason: `because fgk_abc_${'x'.repeat(40)} ${'y'.repeat(600)}` },
    );
    const reason = ctx.audits[0]?.reason as string;
    expect(reason).toContain(REDACTED);
    expect(reason.length).toBeLessThanOrEqual(520);
  });

  it('does not fail the call when the sink throws', async () => {
    const ctx = env.ctx({
      audit: () => {
        throw new Error('queue full');
      },
    });
    const { body } = await callTool(ctx, 'get_workspace_context', {});
    expect(body.result.structuredContent.workspace.id).toBe('ws-acme');
    expect(ctx.errors).toHaveLength(1);
  });
});

describe('resource links', () => {
  const blocks = [
    { type: 'text' as const, text: 'Run started' },
    {
      type: 'resource_link' as const,
      uri: 'flowgate://runs/run_1',
      name: 'run_1',
      title: 'Run run_1',
      mimeType: 'application/json',
    },
  ];

  it('are kept for 2025-06-18 and later', () => {
    expect(adaptContentForVersion(blocks, '2025-06-18')).toEqual(blocks);
    expect(adaptContentForVersion(blocks, '2025-11-25')).toEqual(blocks);
  });

  it('become text naming the URI for 2025-03-26 clients', () => {
    expect(adaptContentForVersion(blocks, '2025-03-26')).toEqual([
      { type: 'text', text: 'Run started' },
      {
        type: 'text',
        text: 'Resource: Run run_1 (application/json). Read it with resources/read uri=flowgate://runs/run_1',
      },
    ]);
  });
});

describe('hostile input', () => {
  const PROTOTYPE_NAMES = ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'];

  it.each(PROTOTYPE_NAMES)('answers method %s with -32601, not an inherited property', async (method) => {
    const ctx = env.ctx();
    const { status, body } = await rpc(ctx, method, {});
    expect(status).toBe(200);
    expect(body.error).toEqual({ code: -32601, message: `Method not found: ${method}` });
    expect(ctx.errors).toEqual([]);
  });

  it.each(PROTOTYPE_NAMES)('never resolves %s as a tool, prompt, doc or step type', async (name) => {
    const ctx = env.ctx();
    const tool = await callTool(ctx, name, {});
    expect(tool.body.error).toMatchObject({ code: -32602, message: `Unknown tool: ${name}` });
    const prompt = await rpc(ctx, 'prompts/get', { name, arguments: {} });
    expect(prompt.body.error).toMatchObject({ code: -32602, message: `Unknown prompt: ${name}` });
    const doc = await rpc(ctx, 'resources/read', { uri: `flowgate://mcp-docs/${name}` });
    expect(doc.body.error).toMatchObject({ code: -32602, message: 'Resource not found' });
    const step = await callTool(ctx, 'get_step_reference', { step_type: name });
    expect(step.body.result.structuredContent.error.code).toBe('invalid_arguments');
    const list = await rpc(ctx, 'tools/list', { tools: [name] });
    expect(list.body.error).toMatchObject({ code: -32602 });
    expect(ctx.errors).toEqual([]);
  });

  it('audits a megabyte of arguments as a bounded, marked preview', async () => {
    const ctx = env.ctx();
    const details = 'word '.repeat(200_000);
    const { body } = await callTool(ctx, 'send_feedback', { summary: 's', details, area: 'docs' });
    expect(body.result.structuredContent.error.code).toBe('invalid_arguments');
    const unknown = await callTool(ctx, 'no_such_tool', { blob: details });
    expect(unknown.body.error?.code).toBe(-32602);
    await rpc(ctx, 'prompts/get', { name: 'review_flow_definition', arguments: { flow_slug: details } });
    expect(ctx.audits).toHaveLength(3);
    for (const entry of ctx.audits) {
      expect(entry.arguments).toMatchObject({ truncated: true });
      expect(JSON.stringify(entry.arguments).length).toBeLessThanOrEqual(8192);
    }
    expect(ctx.audits[0]?.arguments).toMatchObject({
      preview: { summary: 's', area: 'docs', details: expect.stringMatching(/^(word ){200}…$/) },
    });
  });

  it('redacts only bounded previews of arguments, reason and prompt arguments built to slow redaction down', async () => {
    // Redacting 300 KB of "a." whole takes tens of seconds (quadratic URL pattern): the work stays bounded only if
    // redaction never sees more than a preview, whatever the size of what was sent.
    const hostile = 'a.'.repeat(150_000);
    const ctx = env.ctx();
    redaction.longest = 0;
    await callTool(ctx, 'no_such_tool', { a: hostile, b: [hostile] }, { reason: hostile });
    await callTool(ctx, 'send_feedback', { summary: hostile, details: hostile, area: 'mcp' });
    await rpc(ctx, 'prompts/get', { name: 'review_flow_definition', arguments: { flow_slug: hostile } });
    expect(redaction.longest).toBeGreaterThan(0);
    expect(redaction.longest).toBeLessThanOrEqual(AUDIT_PREVIEW_LIMITS.maxStringChars + 1);
    expect(ctx.audits).toHaveLength(3);
    expect((ctx.audits[0]?.reason ?? '').length).toBeLessThanOrEqual(501);
  });

  it('strips NUL and lone surrogates from every string of an audit entry', async () => {
    const ctx = env.ctx({ clientInfo: { name: 'cli\u0000ent\uD800', version: '1\u0000.0' } });
    await callTool(
      ctx,
      'send_\u0000feedback',
      { 'k\u0000': ['v\u0000\uDC00', { x: '\uD83D' }] },
      { reason: 'why\u0000 not\uDFFF' },
    );
    await rpc(ctx, 'resources/read', { uri: 'flowgate://mcp-docs/\u0000over\uD800view' });
    await rpc(ctx, 'prompts/get', { name: 'nope\u0000', arguments: { a: 'b\u0000' } });
    expect(ctx.audits).toHaveLength(3);
    expect(ctx.audits[0]).toMatchObject({
      action: 'send_feedback',
      arguments: { k: ['v', { x: '' }] },
      reason: 'why not',
      clientName: 'client',
      clientVersion: '1.0',
    });
    expect(ctx.audits[1]).toMatchObject({
      action: 'flowgate://mcp-docs/overview',
      resourceUris: ['flowgate://mcp-docs/overview'],
      arguments: { uri: 'flowgate://mcp-docs/overview' },
    });
    expect(ctx.audits[2]).toMatchObject({ action: 'nope', arguments: { a: 'b' } });
    const stored = JSON.stringify(ctx.audits);
    expect(stored).not.toMatch(/\\u0000|\\ud[89a-f][0-9a-f]{2}/i);
  });

  it('redacts credentials in the URI of a resources/read audit entry', async () => {
    const ctx = env.ctx();
    const uri = 'flowgate://flows/demo?token=s3cr3t-value-123&installation_id=i1';
    const { body } = await rpc(ctx, 'resources/read', { uri });
    expect(body.error).toMatchObject({ code: -32602, message: 'Resource not found' });
    const redactedUri = `flowgate://flows/demo?token=${REDACTED}&installation_id=i1`;
    expect(ctx.audits).toEqual([
      expect.objectContaining({
        kind: 'resources/read',
        action: redactedUri,
        resourceUris: [redactedUri],
        arguments: { uri: redactedUri },
      }),
    ]);
    expect(JSON.stringify(ctx.audits)).not.toContain('s3cr3t');
  });

  const NUL_MESSAGE = 'must not contain NUL (\\u0000) or unpaired surrogate characters';
  it.each([
    ['send_feedback', { summary: 'a\u0000b', details: 'd', area: 'mcp' }, 'summary', NUL_MESSAGE],
    // zod reports a refused record key as such; the key schema is the shared one all the same.
    [
      'send_feedback',
      { summary: 's', details: 'd', area: 'mcp', context: { 'k\u0000': 1 } },
      'context.k\u0000',
      'Invalid key in record',
    ],
    [
      'send_feedback',
      { summary: 's', details: 'd', area: 'mcp', context: { k: 'v\u0000' } },
      'context.k',
      NUL_MESSAGE,
    ],
    ['send_feedback', { summary: 's', details: 'half \uD800 pair', area: 'mcp' }, 'details', NUL_MESSAGE],
    ['create_flow_draft', { flow_literal: '{:slug :a\u0000}' }, 'flow_literal', NUL_MESSAGE],
    ['validate_flow_definition', { flow_literal: '{:slug :a\u0000}' }, 'flow_literal', NUL_MESSAGE],
    ['release_flow', { flow_slug: 'demo', release_note: 'note\u0000' }, 'release_note', NUL_MESSAGE],
    ['search_flows', { query: 'q\u0000' }, 'query', NUL_MESSAGE],
  ])(
    'answers a NUL or lone surrogate in %s arguments with invalid_arguments (%#)',
    async (tool, args, path, message) => {
      const ctx = env.ctx();
      const { result, statements } = await env.statementsDuring(() => callTool(ctx, tool, args));
      const { body } = result;
      expect(body.error).toBeUndefined();
      expect(body.result.isError).toBe(true);
      expect(body.result.structuredContent.error.code).toBe('invalid_arguments');
      expect(body.result.structuredContent.details.issues).toEqual([{ path, message }]);
      expect(statements).toEqual([]);
      expect(ctx.errors).toEqual([]);
    },
  );
});
