import { AppError } from '@flowgate/core';
import { type DbHandle, repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../audit.js';
import type { McpCheck, McpCheckTarget, WorkspaceDeps } from '../scope.js';
import { seedWorkspace, TEST_NOW, testWorkspaceDeps } from '../testing.js';
import { openWorkspace, type Workspace } from '../workspace.js';
import { fixedHeaderProblems } from './headers.js';

let h: DbHandle;
beforeAll(async () => {
  h = await createTestDb();
});
afterAll(async () => {
  await h?.close();
});

let workspaces = 0;
async function workspace(
  over: Partial<WorkspaceDeps> = {},
): Promise<{ id: string; ws: Workspace; events: AuditEvent[] }> {
  const id = await seedWorkspace(h.db, `ws-mcpconn-${++workspaces}`, 'MCP connections');
  const events: AuditEvent[] = [];
  return {
    id,
    events,
    ws: openWorkspace(testWorkspaceDeps(h.db, over), {
      workspaceId: id,
      actor: { kind: 'user', id: 'usr_1' },
      audit: { record: (e) => events.push(e) },
    }),
  };
}

const SECRET = 'mcp-bearer-canary-7f3e9a1c55';

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

describe('fixedHeaderProblems', () => {
  it('accepts plain values under ordinary names', () => {
    expect(fixedHeaderProblems({ 'X-Tenant': 'acme', Accept_Language: 'en\tfr' }, null)).toEqual([]);
  });

  it('refuses reserved, secret-looking, api-key, duplicate and malformed names', () => {
    const problems = fixedHeaderProblems(
      {
        Authorization: 'x',
        'mcp-session-id': 'x',
        'MCP-Protocol-Version': 'x',
        'X-Api-Token': 'x',
        'X-Key': 'x',
        'x-tenant': 'a',
        'X-Tenant': 'b',
        'Bad Name': 'x',
        __proto__x: 'x',
      },
      'x-key',
    );
    expect(problems.map((p) => p.path)).toEqual([
      'headers.Authorization',
      'headers.mcp-session-id',
      'headers.MCP-Protocol-Version',
      'headers.X-Api-Token',
      'headers.X-Key',
      'headers.X-Tenant',
      'headers.Bad Name',
      'headers.__proto__x',
    ]);
    expect(problems[3]?.message).toMatch(/looks like a credential.*auth/);
    expect(problems[4]?.message).toBe('X-Key carries the api-key secret of this connection');
    expect(problems[5]?.message).toBe('X-Tenant is given twice (header names ignore case)');
  });

  it('refuses line breaks, long values, credential-shaped values and more than 20 headers', () => {
    expect(
      fixedHeaderProblems(
        { 'X-A': 'a\r\nX-Evil: 1', 'X-B': 'b'.repeat(1001), 'X-C': `Bearer ${SECRET}` },
        null,
      ).map((p) => [p.path, p.message]),
    ).toEqual([
      ['headers.X-A', 'no line breaks or control characters'],
      ['headers.X-B', 'at most 1000 characters'],
      ['headers.X-C', 'the value looks like a credential; send it with auth so it is encrypted at rest'],
    ]);
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));
    expect(fixedHeaderProblems(many, null)).toEqual([
      { path: 'headers', message: 'at most 20 fixed headers' },
    ]);
  });
});

describe('mcp-server connections: create and update', () => {
  it('stores fixed headers in config, encrypts the secret, shows header names and audits names only', async () => {
    const { id, ws, events } = await workspace();
    const created = await ws.connections.create({
      name: 'tools',
      type: 'mcp-server',
      baseUrl: 'https://mcp.example.test/mcp',
      auth: { type: 'api-key', secret: SECRET, headerName: 'X-Mcp-Key' },
      headers: { 'X-Tenant': 'acme-tenant-value', 'X-Region': 'eu' },
    });
    expect(created).toMatchObject({
      type: 'mcp-server',
      authType: 'api-key',
      hasSecret: true,
      headerName: 'X-Mcp-Key',
      fixedHeaderNames: ['X-Region', 'X-Tenant'],
      model: null,
      health: null,
    });
    const row = await repos.getConnection(h.db, id, created.id);
    expect(row?.config).toEqual({
      headerName: 'X-Mcp-Key',
      'header:X-Tenant': 'acme-tenant-value',
      'header:X-Region': 'eu',
    });
    expect(row?.secretCiphertext).not.toContain(SECRET);

    const updated = await ws.connections.update(created.id, { headers: { 'X-Tenant': 'other' } });
    expect(updated.fixedHeaderNames).toEqual(['X-Tenant']);
    expect((await repos.getConnection(h.db, id, created.id))?.config).toEqual({
      headerName: 'X-Mcp-Key',
      'header:X-Tenant': 'other',
    });
    const cleared = await ws.connections.update(created.id, { headers: {} });
    expect(cleared.fixedHeaderNames).toEqual([]);

    expect(events.map((e) => [e.action, e.arguments])).toEqual([
      [
        'connections.create',
        {
          name: 'tools',
          type: 'mcp-server',
          baseUrl: 'https://mcp.example.test/mcp',
          auth: { type: 'api-key', secret: SECRET, headerName: 'X-Mcp-Key' },
          headers: ['X-Region', 'X-Tenant'],
        },
      ],
      ['connections.update', { connectionId: created.id, headers: ['X-Tenant'], rotated: false }],
      ['connections.update', { connectionId: created.id, headers: [], rotated: false }],
    ]);
    // The recorder's sink redacts `auth.secret` (a secret-named key); header values never reach it.
    expect(JSON.stringify(events)).not.toMatch(/acme-tenant-value|"other"/);
  });

  it('clears the last health check when the fixed headers change', async () => {
    const { id, ws } = await workspace();
    const created = await ws.connections.create({
      name: 'tools',
      type: 'mcp-server',
      baseUrl: 'https://mcp.example.test/mcp',
      auth: { type: 'none' },
    });
    await repos.setConnectionHealth(h.db, id, created.id, { ok: true, checkedAt: TEST_NOW });
    expect((await ws.connections.update(created.id, { headers: { 'X-Tenant': 'b' } })).health).toBeNull();
  });

  it('refuses basic auth, models, reserved api-key headers and bad fixed headers, storing nothing', async () => {
    const { id, ws } = await workspace();
    const base = { name: 'tools', type: 'mcp-server' as const, baseUrl: 'https://mcp.example.test/mcp' };
    const basic = await refusal(ws.connections.create({ ...base, auth: { type: 'basic', secret: 'u:p' } }));
    expect([basic.code, basic.message]).toEqual([
      'invalid_request',
      'an mcp-server authenticates with none, bearer or api-key',
    ]);
    const model = await refusal(ws.connections.create({ ...base, model: 'm', auth: { type: 'none' } }));
    expect(model.message).toBe('only an llm-provider has a model');
    const session = await refusal(
      ws.connections.create({
        ...base,
        auth: { type: 'api-key', secret: SECRET, headerName: 'Mcp-Session-Id' },
      }),
    );
    expect(session.message).toBe(
      'Mcp-Session-Id is set by Flowgate or the protocol and cannot carry the api key',
    );
    const secretHeader = await refusal(
      ws.connections.create({ ...base, auth: { type: 'none' }, headers: { 'X-Auth-Token': 'abc' } }),
    );
    expect(secretHeader.issues).toEqual([
      {
        path: 'headers.X-Auth-Token',
        message:
          'X-Auth-Token looks like a credential; fixed headers are stored and shown in plain text. Send a ' +
          'credential with auth (bearer, or api-key with headerName) so it is encrypted at rest.',
      },
    ]);
    const clash = await refusal(
      ws.connections.create({
        ...base,
        auth: { type: 'api-key', secret: SECRET, headerName: 'X-Tenant-Key' },
        headers: { 'x-tenant-key': 'v' },
      }),
    );
    expect(clash.message).toBe(
      'fixed header refused: headers.x-tenant-key: x-tenant-key carries the api-key secret of this connection',
    );
    const http = await refusal(
      ws.connections.create({
        name: 'api',
        type: 'http-api',
        baseUrl: 'https://api.example.test',
        auth: { type: 'none' },
        headers: { 'X-Tenant': 'a' },
      }),
    );
    expect(http.message).toBe('only an mcp-server has fixed headers');
    expect(await repos.listConnections(h.db, id, { limit: 10 })).toEqual([]);
  });

  it('checks an update against the connection as it is: its auth, its headers, its type', async () => {
    const { id, ws } = await workspace();
    const tools = await ws.connections.create({
      name: 'tools',
      type: 'mcp-server',
      baseUrl: 'https://mcp.example.test/mcp',
      auth: { type: 'api-key', secret: SECRET, headerName: 'X-Mcp-Key' },
      headers: { 'X-Tenant': 'acme' },
    });
    const reuse = await refusal(ws.connections.update(tools.id, { headers: { 'x-mcp-key': 'v' } }));
    expect(reuse.issues?.[0]?.path).toBe('headers.x-mcp-key');
    const switched = await refusal(
      ws.connections.update(tools.id, {
        auth: { type: 'api-key', secret: SECRET, headerName: 'X-Tenant' },
      }),
    );
    expect(switched.issues?.[0]?.message).toBe('X-Tenant carries the api-key secret of this connection');
    const basic = await refusal(ws.connections.update(tools.id, { auth: { type: 'basic', secret: 'u:p' } }));
    expect(basic.message).toBe('an mcp-server authenticates with none, bearer or api-key');
    const bearer = await ws.connections.update(tools.id, { auth: { type: 'bearer', secret: SECRET } });
    expect(bearer).toMatchObject({ authType: 'bearer', headerName: null, fixedHeaderNames: ['X-Tenant'] });

    const api = await ws.connections.create({
      name: 'api',
      type: 'http-api',
      baseUrl: 'https://api.example.test',
      auth: { type: 'none' },
    });
    expect((await refusal(ws.connections.update(api.id, { headers: {} }))).message).toBe(
      'only an mcp-server has fixed headers',
    );
    expect((await repos.getConnection(h.db, id, tools.id))?.config).toEqual({ 'header:X-Tenant': 'acme' });
  });
});

describe('mcp-server connections: the health check', () => {
  function fakeCheck(answer: (t: McpCheckTarget) => ReturnType<McpCheck>) {
    const targets: McpCheckTarget[] = [];
    const check: McpCheck = (t) => {
      targets.push(t);
      return answer(t);
    };
    return { check, targets };
  }

  async function mcpConnection(ws: Workspace, baseUrl = 'https://mcp.example.test/mcp') {
    return ws.connections.create({
      name: 'tools',
      type: 'mcp-server',
      baseUrl,
      auth: { type: 'bearer', secret: SECRET },
      headers: { 'X-Tenant': 'acme' },
    });
  }

  it('opens a session through the port, stores protocol, server and tool names, reports the count', async () => {
    const many = Array.from({ length: 230 }, (_, i) => `tool_${i}`);
    const fake = fakeCheck(async () => ({
      protocolVersion: '2025-06-18',
      serverName: 'Remote\nTools',
      serverVersion: '1.4.0',
      tools: ['search', 'search', 'x'.repeat(129), ...many],
    }));
    const { id, ws } = await workspace({ mcpCheck: fake.check });
    const conn = await mcpConnection(ws);
    const check = await ws.connections.checkOne(conn.id);
    expect(check).toEqual({
      connectionId: conn.id,
      name: 'tools',
      type: 'mcp-server',
      ok: true,
      status: 'healthy',
      httpStatus: null,
      latencyMs: expect.any(Number),
      message: null,
      checkedAt: TEST_NOW,
      mcp: { protocolVersion: '2025-06-18', serverName: 'Remote Tools', toolCount: 233 },
    });
    expect(fake.targets).toEqual([
      {
        url: new URL('https://mcp.example.test/mcp'),
        headers: { 'X-Tenant': 'acme', authorization: `Bearer ${SECRET}` },
        timeoutMs: 2_000,
        allowPrivateNetwork: true,
      },
    ]);
    const health = (await repos.getConnection(h.db, id, conn.id))?.health;
    expect(health).toMatchObject({
      ok: true,
      checkedAt: TEST_NOW,
      mcp: {
        protocolVersion: '2025-06-18',
        serverName: 'Remote Tools',
        serverVersion: '1.4.0',
        toolCount: 233,
      },
    });
    expect(health?.mcp?.tools).toHaveLength(200);
    expect(health?.mcp?.tools.slice(0, 2)).toEqual(['search', 'tool_0']);

    const listed = (await ws.connections.list({ limit: 10, after: null })).items[0];
    expect(listed?.mcp).toEqual({
      protocolVersion: '2025-06-18',
      serverName: 'Remote Tools',
      toolCount: 233,
    });
    expect(listed?.configKeys).toEqual(['header:X-Tenant']);
    const record = (await ws.connections.records({ limit: 10, after: null })).items[0];
    expect(record?.health).toEqual({
      ok: true,
      checkedAt: TEST_NOW,
      mcp: {
        protocolVersion: '2025-06-18',
        serverName: 'Remote Tools',
        serverVersion: '1.4.0',
        toolCount: 233,
      },
    });
  });

  it('turns a refusal into a clear, redacted message and forgets the last tool list', async () => {
    let fail = false;
    const fake = fakeCheck(async (t) => {
      if (fail) {
        const err = new Error(
          `HTTP 401 from server; sent ${t.headers.authorization}\n    at secretStack (x.js:1)`,
        );
        throw err;
      }
      return { protocolVersion: '2025-03-26', serverName: 'r', tools: ['a'] };
    });
    const { id, ws } = await workspace({ mcpCheck: fake.check });
    const conn = await mcpConnection(ws);
    expect((await ws.connections.checkOne(conn.id)).ok).toBe(true);
    fail = true;
    const check = await ws.connections.checkOne(conn.id);
    expect(check).toMatchObject({ ok: false, status: 'unhealthy', httpStatus: null, latencyMs: null });
    expect(check.message).toBe(
      'MCP check failed: HTTP 401 from server; sent Bearer [redacted] at secretStack (x.js:1)',
    );
    expect(check.mcp).toBeUndefined();
    const stored = (await repos.getConnection(h.db, id, conn.id))?.health;
    expect(stored).toEqual({ ok: false, checkedAt: TEST_NOW, message: check.message });
    expect(JSON.stringify(stored)).not.toContain(SECRET);
  });

  it('reports a timeout by its bound', async () => {
    const fake = fakeCheck(async () => {
      throw Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });
    });
    const { ws } = await workspace({ mcpCheck: fake.check });
    const conn = await mcpConnection(ws);
    expect((await ws.connections.checkOne(conn.id)).message).toBe(
      'MCP check failed: no answer within 2000 ms',
    );
  });

  it('is unhealthy with a clear message when the deployment has no MCP client', async () => {
    const { ws } = await workspace();
    const conn = await mcpConnection(ws);
    expect(await ws.connections.checkOne(conn.id)).toMatchObject({
      ok: false,
      status: 'unhealthy',
      message: 'this deployment cannot check MCP servers (no MCP client configured)',
    });
  });

  it('refuses private addresses before calling the port unless the deployment allows them', async () => {
    const fake = fakeCheck(async () => ({ protocolVersion: '2025-06-18', serverName: 'r', tools: [] }));
    const { ws } = await workspace({
      mcpCheck: fake.check,
      outbound: { allowPrivateNetwork: false, timeoutMs: 1_000 },
    });
    const conn = await mcpConnection(ws, 'http://127.0.0.1:9/mcp');
    expect((await ws.connections.checkOne(conn.id)).message).toBe(
      '127.0.0.1 is a private or loopback address, which this deployment does not allow',
    );
    expect(fake.targets).toEqual([]);
    const named = await ws.connections.create({
      name: 'named',
      type: 'mcp-server',
      baseUrl: 'https://mcp.example.test/mcp',
      auth: { type: 'none' },
    });
    expect((await ws.connections.checkOne(named.id)).ok).toBe(true);
    // Names are resolved by the port's own guarded fetch; it is told the policy.
    expect(fake.targets.map((t) => [t.url.hostname, t.allowPrivateNetwork, t.timeoutMs])).toEqual([
      ['mcp.example.test', false, 1_000],
    ]);
  });
});
