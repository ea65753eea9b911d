import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anyRequest, type FuzzAnswer, type FuzzRequest, isRpcResponse, judge, sseMessages } from './fuzz.js';

const mcp: FuzzRequest = { method: 'POST', path: '/api/workspaces/ws-fuzz/mcp', headers: {}, surface: 'mcp' };
const admin: FuzzRequest = {
  method: 'GET',
  path: '/api/workspaces/ws-fuzz/flows',
  headers: {},
  surface: 'admin',
};
const json = (status: number, body: unknown, ms = 5): FuzzAnswer => ({
  status,
  contentType: 'application/json',
  text: JSON.stringify(body),
  ms,
});

describe('the fuzzer’s oracle', () => {
  it('accepts JSON-RPC results and errors, and the gateway’s error body on HTTP errors', () => {
    expect(judge(mcp, json(200, { jsonrpc: '2.0', id: 1, result: { tools: [] } }))).toBeUndefined();
    expect(
      judge(mcp, json(400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } })),
    ).toBeUndefined();
    expect(judge(mcp, json(401, { code: 'unauthorized', message: 'missing bearer token' }))).toBeUndefined();
    expect(judge(mcp, { status: 202, contentType: '', text: '', ms: 1 })).toBeUndefined();
    expect(judge(admin, json(200, { items: [] }))).toBeUndefined();
    expect(
      judge(
        admin,
        json(422, { flowSlug: 'echo', valid: false, diagnostics: [{ code: 'definition_not_a_map' }] }),
      ),
    ).toBeUndefined();
  });

  it('refuses a 5xx, a slow answer, a non-JSON-RPC 200, a bare error and broken JSON or SSE', () => {
    expect(judge(mcp, json(500, { code: 'internal_error', message: 'x' }))).toBe(
      'status 500: {"code":"internal_error","message":"x"}',
    );
    expect(judge(mcp, json(200, { jsonrpc: '2.0', id: 1, result: {} }, 2500))).toBe(
      'answered in 2500 ms (limit 2000 ms)',
    );
    expect(judge(mcp, json(200, { ok: true }))).toBe('status 200 but not a JSON-RPC response: {"ok":true}');
    expect(judge(admin, json(404, { error: 'nope' }))).toBe(
      'status 404 without an error body: {"error":"nope"}',
    );
    expect(judge(mcp, { status: 200, contentType: 'application/json', text: '{"jsonrpc"', ms: 1 })).toBe(
      'content-type application/json but the body is not JSON: {"jsonrpc"',
    );
    expect(
      judge(mcp, { status: 200, contentType: 'text/event-stream', text: 'data: {oops\n\n', ms: 1 }),
    ).toBe('SSE event data is not JSON: {oops');
    expect(judge(mcp, { status: 400, contentType: 'text/html', text: '<h1>bad</h1>', ms: 1 })).toBe(
      'status 400 with content-type "text/html"',
    );
  });

  it('knows a JSON-RPC response from lookalikes', () => {
    expect(isRpcResponse({ jsonrpc: '2.0', id: 'a', error: { code: -32601, message: 'no' } })).toBe(true);
    expect(isRpcResponse({ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'both' } })).toBe(
      false,
    );
    expect(isRpcResponse({ jsonrpc: '2.0', result: {} })).toBe(false);
    expect(isRpcResponse({ jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'x' } })).toBe(false);
    expect(isRpcResponse({ jsonrpc: '1.0', id: 1, result: {} })).toBe(false);
  });

  it('reads every event of an SSE body', () => {
    expect(sseMessages('event: message\ndata: {"a":1}\n\ndata: {"b":\ndata: 2}\n\n')).toEqual([
      { a: 1 },
      { b: 2 },
    ]);
  });

  it('generates only requests fetch can send: header values in printable ASCII, no body on GET', () => {
    const target = {
      url: '',
      adminToken: 'a'.repeat(30),
      fullKey: 'fgk_full',
      readKey: 'fgk_read',
      runId: 'run_1',
    };
    for (const r of fc.sample(anyRequest(target), { seed: 7, numRuns: 500 })) {
      for (const v of Object.values(r.headers)) expect(v).toMatch(/^[\x20-\x7e]*$/);
      if (r.method === 'GET') expect(r.body).toBeUndefined();
      expect(r.path.startsWith('/')).toBe(true);
    }
  });
});
