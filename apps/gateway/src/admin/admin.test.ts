import { repos, schema } from '@flowgate/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, TEST_ADMIN_TOKEN } from '../testing.js';

let h: Harness;

async function counts() {
  const db = h.db.db;
  const [w, sa, k, cn, p] = await Promise.all([
    db.select().from(schema.workspaces),
    db.select().from(schema.serviceAccounts),
    db.select().from(schema.apiKeys),
    db.select().from(schema.connections),
    db.select().from(schema.workspaceMcpPolicies),
  ]);
  return {
    workspaces: w.length,
    serviceAccounts: sa.length,
    keys: k.length,
    connections: cn.length,
    policies: p.length,
  };
}

beforeAll(async () => {
  h = await createHarness();
  await h.createWorkspace('ws-admin', 'Admin tests');
});
afterAll(async () => h?.close());

describe('workspaces', () => {
  it('creates a workspace with the documented answer and refuses a duplicate', async () => {
    const res = await h.request('POST', '/api/admin/workspaces', { body: { id: 'ws-new', name: 'New' } });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toEqual({ id: 'ws-new', name: 'New', createdAt: expect.any(String) });
    const dup = await h.request('POST', '/api/admin/workspaces', { body: { id: 'ws-new', name: 'Again' } });
    expect(dup.status).toBe(409);
    expect(await dup.json()).toEqual({ code: 'conflict', message: 'workspace ws-new already exists' });
  });

  it('needs the operator token', async () => {
    const { apiKey } = await h.createServiceAccount('ws-admin', ['workspace.full']);
    const res = await h.request('POST', '/api/admin/workspaces', {
      token: apiKey,
      body: { id: 'ws-x1', name: 'x' },
    });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('insufficient_role');
    const anon = await h.request('POST', '/api/admin/workspaces', {
      token: null,
      body: { id: 'ws-x2', name: 'x' },
    });
    expect(anon.status).toBe(401);
  });
});

describe('service accounts and keys', () => {
  it('creates, lists, updates an account and shows a key exactly once', async () => {
    const created = await h.request('POST', '/api/workspaces/ws-admin/service-accounts', {
      body: { name: 'reader', capabilities: ['flows.read', 'runs.read', 'flows.read'] },
    });
    expect(created.status).toBe(201);
    const sa = await created.json();
    expect(sa).toMatchObject({ name: 'reader', capabilities: ['flows.read', 'runs.read'], status: 'active' });
    expect(sa.serviceAccountId).toMatch(/^sa_[A-Za-z0-9]{16}$/);

    const list = await (await h.request('GET', '/api/workspaces/ws-admin/service-accounts')).json();
    expect(list.items.map((i: { serviceAccountId: string }) => i.serviceAccountId)).toContain(
      sa.serviceAccountId,
    );

    const patched = await h.request(
      'PATCH',
      `/api/workspaces/ws-admin/service-accounts/${sa.serviceAccountId}`,
      {
        body: { status: 'disabled', name: 'reader-2' },
      },
    );
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({
      name: 'reader-2',
      status: 'disabled',
      capabilities: ['flows.read', 'runs.read'],
    });

    const keyRes = await h.request(
      'POST',
      `/api/workspaces/ws-admin/service-accounts/${sa.serviceAccountId}/keys`,
      {
        body: { name: 'ci', expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
      },
    );
    expect(keyRes.status).toBe(201);
    expect(keyRes.headers.get('cache-control')).toBe('no-store');
    const key = await keyRes.json();
    expect(key.serviceAccountId).toBe(sa.serviceAccountId);
    expect(key.key.apiKey).toMatch(new RegExp(`^fgk_${key.key.keyId}_[A-Za-z0-9]{43}$`));

    const keys = await (
      await h.request('GET', `/api/workspaces/ws-admin/service-accounts/${sa.serviceAccountId}/keys`)
    ).json();
    expect(keys.items).toEqual([
      {
        keyId: key.key.keyId,
        name: 'ci',
        createdAt: expect.any(String),
        expiresAt: key.key.expiresAt,
        lastUsedAt: null,
        revokedAt: null,
      },
    ]);
    expect(JSON.stringify(keys)).not.toContain(key.key.apiKey.split('_')[2]);

    const del = await h.request(
      'DELETE',
      `/api/workspaces/ws-admin/service-accounts/${sa.serviceAccountId}/keys/${key.key.keyId}`,
    );
    expect(del.status).toBe(204);
    const again = await h.request(
      'DELETE',
      `/api/workspaces/ws-admin/service-accounts/${sa.serviceAccountId}/keys/nope`,
    );
    expect(again.status).toBe(404);
  });

  it('lists with a bounded page and an opaque cursor', async () => {
    await h.createWorkspace('ws-page');
    for (let i = 0; i < 5; i++) {
      await h.request('POST', '/api/workspaces/ws-page/service-accounts', {
        body: { name: `sa${i}`, capabilities: [] },
      });
    }
    const first = await (await h.request('GET', '/api/workspaces/ws-page/service-accounts?limit=3')).json();
    expect(first.items).toHaveLength(3);
    expect(typeof first.nextCursor).toBe('string');
    const second = await (
      await h.request('GET', `/api/workspaces/ws-page/service-accounts?limit=3&cursor=${first.nextCursor}`)
    ).json();
    expect(second.items).toHaveLength(2);
    expect(second.nextCursor).toBeNull();
    const bad = await h.request('GET', '/api/workspaces/ws-page/service-accounts?cursor=%%%');
    expect(bad.status).toBe(400);
  });
});

describe('bad input changes nothing', () => {
  const cases: Array<[string, string, string, unknown, number, string]> = [
    [
      'missing name',
      'POST',
      '/api/workspaces/ws-admin/service-accounts',
      { capabilities: [] },
      400,
      'validation_failed',
    ],
    [
      'wrong type',
      'POST',
      '/api/workspaces/ws-admin/service-accounts',
      { name: 5, capabilities: 'flows.read' },
      400,
      'validation_failed',
    ],
    [
      'unknown capability',
      'POST',
      '/api/workspaces/ws-admin/service-accounts',
      { name: 'x', capabilities: ['root'] },
      400,
      'validation_failed',
    ],
    [
      'extra field',
      'POST',
      '/api/workspaces/ws-admin/service-accounts',
      { name: 'x', capabilities: [], admin: true },
      400,
      'validation_failed',
    ],
    [
      'bad workspace id',
      'POST',
      '/api/admin/workspaces',
      { id: 'Bad_ID', name: 'x' },
      400,
      'validation_failed',
    ],
    [
      'past expiry',
      'POST',
      '/api/workspaces/ws-admin/service-accounts/sa_missing/keys',
      { expiresAt: '2001-01-01T00:00:00Z' },
      400,
      'validation_failed',
    ],
    [
      'key for unknown account',
      'POST',
      '/api/workspaces/ws-admin/service-accounts/sa_missing/keys',
      {},
      404,
      'not_found',
    ],
    [
      'patch unknown account',
      'PATCH',
      '/api/workspaces/ws-admin/service-accounts/sa_missing',
      { status: 'disabled' },
      404,
      'not_found',
    ],
    [
      'empty patch',
      'PATCH',
      '/api/workspaces/ws-admin/service-accounts/sa_missing',
      {},
      400,
      'validation_failed',
    ],
    [
      'connection without secret',
      'POST',
      '/api/workspaces/ws-admin/connections',
      { name: 'c', type: 'http-api', baseUrl: 'https://x.test', auth: { type: 'bearer' } },
      400,
      'validation_failed',
    ],
    [
      'connection bad url',
      'POST',
      '/api/workspaces/ws-admin/connections',
      { name: 'c', type: 'http-api', baseUrl: 'file:///etc/passwd', auth: { type: 'none' } },
      400,
      'validation_failed',
    ],
    [
      'policy bad ip',
      'PUT',
      '/api/workspaces/ws-admin/mcp-policy',
      { allowedIps: ['10.0.0.0/99'] },
      400,
      'validation_failed',
    ],
    [
      'policy bad origin',
      'PUT',
      '/api/workspaces/ws-admin/mcp-policy',
      { allowedOrigins: ['https://a.test/path'] },
      400,
      'validation_failed',
    ],
    [
      'policy unknown tool',
      'PUT',
      '/api/workspaces/ws-admin/mcp-policy',
      { disabledTools: ['rm_rf'] },
      400,
      'validation_failed',
    ],
    [
      'NUL in a string',
      'POST',
      '/api/workspaces/ws-admin/service-accounts',
      { name: 'a\u0000b', capabilities: [] },
      400,
      'invalid_request',
    ],
    [
      'unknown workspace',
      'POST',
      '/api/workspaces/ws-nowhere/service-accounts',
      { name: 'x', capabilities: [] },
      404,
      'not_found',
    ],
  ];

  it.each(cases)('%s → %s %s %s %s', async (_label, method, path, body, status, code) => {
    const before = await counts();
    const res = await h.request(method, path, { body });
    expect(res.status).toBe(status);
    const json = await res.json();
    expect(json.code).toBe(code);
    expect(typeof json.message).toBe('string');
    expect(await counts()).toEqual(before);
  });

  it('rejects malformed JSON, a wrong media type and an oversize body', async () => {
    const before = await counts();
    const malformed = await h.request('POST', '/api/workspaces/ws-admin/service-accounts', {
      body: '{"name": ',
    });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).code).toBe('invalid_request');
    const text = await h.request('POST', '/api/workspaces/ws-admin/service-accounts', {
      body: 'name=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    const huge = await h.request('POST', '/api/workspaces/ws-admin/service-accounts', {
      body: { name: 'x', capabilities: [], pad: 'x'.repeat(2 * 1024 * 1024) },
    });
    expect(huge.status).toBe(413);
    expect((await huge.json()).code).toBe('payload_too_large');
    expect(await counts()).toEqual(before);
  });

  it('error bodies never echo the token', async () => {
    const token = 'fgk_AAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
    const res = await h.request('GET', '/api/workspaces/ws-admin/service-accounts', { token });
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain('BBBBBBBB');
  });
});

describe('connections', () => {
  it('stores the secret encrypted and never returns it on any read path', async () => {
    const secret = 'sk-live-verysecretvalue-12345';
    const res = await h.request('POST', '/api/workspaces/ws-admin/connections', {
      body: {
        name: 'crm',
        type: 'http-api',
        baseUrl: 'https://crm.example.test',
        auth: { type: 'bearer', secret },
      },
    });
    expect(res.status).toBe(201);
    const created = await res.text();
    expect(created).not.toContain(secret);
    const conn = JSON.parse(created);
    expect(conn).toMatchObject({
      name: 'crm',
      type: 'http-api',
      baseUrl: 'https://crm.example.test',
      auth: { type: 'bearer', hasSecret: true },
    });

    const raw = await h.db.db.select().from(schema.connections);
    const row = raw.find((r) => r.id === conn.connectionId);
    expect(row?.secretCiphertext).toMatch(/^v1\./);
    expect(row?.secretCiphertext).not.toContain(secret);
    expect(h.deps.secretBox.decrypt(row?.secretCiphertext as string, 'ws-admin')).toBe(secret);

    const list = await (await h.request('GET', '/api/workspaces/ws-admin/connections')).text();
    expect(list).toContain(conn.connectionId);
    expect(list).not.toContain(secret);
    expect(list).not.toContain('v1.');
    await h.deps.audit.flush();
    const audit = await (await h.request('GET', '/api/workspaces/ws-admin/audit?limit=200')).text();
    expect(audit).toContain('connections.create');
    expect(audit).not.toContain(secret);

    const dup = await h.request('POST', '/api/workspaces/ws-admin/connections', {
      body: { name: 'crm', type: 'secret', auth: { type: 'bearer', secret: 'x' } },
    });
    expect(dup.status).toBe(409);
  });

  it('moves a connection and rotates its secret, never echoing it; a bad patch changes nothing', async () => {
    const first = 'sk-first-rotation-canary-0a1b2c3d';
    const second = 'sk-second-rotation-canary-4e5f6a7b';
    const created = await h.request('POST', '/api/workspaces/ws-admin/connections', {
      body: {
        name: 'moving',
        type: 'http-api',
        baseUrl: 'https://old.example.test',
        auth: { type: 'bearer', secret: first },
      },
    });
    const { connectionId } = (await created.json()) as { connectionId: string };
    const path = `/api/workspaces/ws-admin/connections/${connectionId}`;

    const moved = await h.request('PATCH', path, {
      body: { baseUrl: 'https://new.example.test', secret: second },
    });
    expect(moved.status).toBe(200);
    const text = await moved.text();
    expect(text).not.toContain(second);
    expect(JSON.parse(text)).toMatchObject({
      connectionId,
      baseUrl: 'https://new.example.test',
      auth: { type: 'bearer', hasSecret: true },
      health: null,
    });
    const row = (await h.db.db.select().from(schema.connections)).find((r) => r.id === connectionId);
    expect(h.deps.secretBox.decrypt(row?.secretCiphertext as string, 'ws-admin')).toBe(second);

    for (const body of [{}, { baseUrl: 'ftp://x.test' }, { type: 'secret' }]) {
      expect((await h.request('PATCH', path, { body })).status).toBe(400);
    }
    const missing = await h.request('PATCH', '/api/workspaces/ws-admin/connections/conn_missing0000000000', {
      body: { baseUrl: 'https://x.test' },
    });
    expect(missing.status).toBe(404);
    const after = (await h.db.db.select().from(schema.connections)).find((r) => r.id === connectionId);
    expect(after?.baseUrl).toBe('https://new.example.test');

    await h.deps.audit.flush();
    const audit = await (await h.request('GET', '/api/workspaces/ws-admin/audit?limit=200')).text();
    expect(audit).toContain('connections.update');
    expect(audit).not.toContain(second);
    expect(audit).not.toContain(first);
  });

  // Issue 12 finding 4: each of these put a credential where every reader of the connection sees it.
  const credentialUrls = [
    'https://user:pass@api.example.test/v1',
    'https://user@api.example.test/v1',
    'https://api.example.test/v1?api_key=canary0001',
    'https://api.example.test/crm?hapikey=canary0002',
    'https://api.example.test/data?appid=canary0003',
    'https://bucket.example.test/x?X-Amz-Signature=canary0004',
    'https://app.example.test/api;jsessionid=canary0005',
    'https://app.example.test/cb#access_token=canary0006',
    'https://hooks.example.test/services/T0000AAAA/B0000BBBB/canary0007canary0007canary',
  ];

  it('refuses credentials in baseUrl at create and update, pointing to the secret', async () => {
    const created = await h.request('POST', '/api/workspaces/ws-admin/connections', {
      body: {
        name: 'clean',
        type: 'http-api',
        baseUrl: 'https://clean.example.test',
        auth: { type: 'none' },
      },
    });
    const { connectionId } = (await created.json()) as { connectionId: string };
    for (const baseUrl of credentialUrls) {
      const res = await h.request('POST', '/api/workspaces/ws-admin/connections', {
        body: { name: 'leaky', type: 'http-api', baseUrl, auth: { type: 'none' } },
      });
      expect(res.status, baseUrl).toBe(400);
      const body = (await res.json()) as { issues: Array<{ path: string; message: string }> };
      expect(body.issues[0]?.path).toBe('baseUrl');
      expect(body.issues[0]?.message).toMatch(/auth\.secret/);
      const patched = await h.request('PATCH', `/api/workspaces/ws-admin/connections/${connectionId}`, {
        body: { baseUrl },
      });
      expect(patched.status, baseUrl).toBe(400);
      expect(((await patched.json()) as { issues: Array<{ message: string }> }).issues[0]?.message).toMatch(
        /secret/,
      );
    }
    const row = (await h.db.db.select().from(schema.connections)).find((r) => r.id === connectionId);
    expect(row?.baseUrl).toBe('https://clean.example.test');
  });

  it('shows rows stored before the refusal with only scheme, host, port and a clean path', async () => {
    for (const [i, baseUrl] of credentialUrls.entries()) {
      await h.db.db.insert(schema.connections).values({
        id: `conn_legacy${String(i).padStart(10, '0')}`,
        workspaceId: 'ws-admin',
        name: `legacy-${i}`,
        type: 'http-api',
        baseUrl,
        authType: 'none',
        secretCiphertext: null,
        config: {},
      });
    }
    const list = await (await h.request('GET', '/api/workspaces/ws-admin/connections?limit=200')).text();
    for (const secret of ['pass', 'user@', 'canary']) expect(list).not.toContain(secret);
    const items = (JSON.parse(list) as { items: Array<{ name: string; baseUrl: string }> }).items;
    const legacy = items.filter((c) => c.name.startsWith('legacy-')).map((c) => c.baseUrl);
    expect(legacy).toContain('https://api.example.test/v1');
    expect(legacy).toContain('https://app.example.test/api');
    expect(legacy).toContain('https://hooks.example.test/services/T0000AAAA/B0000BBBB/[redacted]');
  });

  it('keeps the default model of an llm-provider connection, and refuses one on other types', async () => {
    const res = await h.request('POST', '/api/workspaces/ws-admin/connections', {
      body: {
        name: 'llm',
        type: 'llm-provider',
        baseUrl: 'https://llm.example.test/v1',
        model: 'gpt-test-mini',
        auth: { type: 'bearer', secret: 'sk-llm-0123456789' },
      },
    });
    expect(res.status).toBe(201);
    const conn = await res.json();
    expect(conn).toMatchObject({ name: 'llm', type: 'llm-provider', model: 'gpt-test-mini' });
    const raw = await h.db.db.select().from(schema.connections);
    // Where the worker reads an :llm step's model from when the step names none.
    expect(raw.find((r) => r.id === conn.connectionId)?.config).toEqual({ model: 'gpt-test-mini' });

    const wrong = await h.request('POST', '/api/workspaces/ws-admin/connections', {
      body: {
        name: 'not-llm',
        type: 'http-api',
        baseUrl: 'https://api.example.test',
        model: 'gpt-test-mini',
        auth: { type: 'none' },
      },
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({
      code: 'validation_failed',
      issues: [{ path: 'model', message: 'only an llm-provider has a model' }],
    });
  });
});

describe('mcp-server connections', () => {
  const base = '/api/workspaces/ws-admin/connections';
  const key = 'mcp-admin-key-canary-51c0ffee';

  it('creates one with an api-key header and fixed headers, shows header names and the last check', async () => {
    const res = await h.request('POST', base, {
      body: {
        name: 'remote-tools',
        type: 'mcp-server',
        baseUrl: 'https://mcp.example.test/mcp',
        auth: { type: 'api-key', secret: key, headerName: 'X-Mcp-Key' },
        headers: { 'X-Tenant': 'tenant-value-acme' },
      },
    });
    expect(res.status).toBe(201);
    const text = await res.text();
    expect(text).not.toContain(key);
    expect(text).not.toContain('tenant-value-acme');
    const created = JSON.parse(text);
    expect(created).toEqual({
      connectionId: expect.stringMatching(/^conn_/),
      name: 'remote-tools',
      type: 'mcp-server',
      baseUrl: 'https://mcp.example.test/mcp',
      auth: { type: 'api-key', hasSecret: true, headerName: 'X-Mcp-Key' },
      model: null,
      fixedHeaderNames: ['X-Tenant'],
      status: 'active',
      health: null,
      createdAt: expect.any(String),
    });
    const path = `${base}/${created.connectionId}`;

    const targets: Array<{ url: string; headers: Record<string, string> }> = [];
    h.deps.workspaceDeps.mcpCheck = async (t) => {
      targets.push({ url: t.url.href, headers: t.headers });
      return { protocolVersion: '2025-06-18', serverName: 'remote', serverVersion: '3.1', tools: ['a', 'b'] };
    };
    try {
      const check = await h.request('POST', `${path}/check`);
      expect(await check.json()).toMatchObject({
        ok: true,
        status: 'healthy',
        mcp: { protocolVersion: '2025-06-18', serverName: 'remote', toolCount: 2 },
      });
    } finally {
      delete h.deps.workspaceDeps.mcpCheck;
    }
    expect(targets).toEqual([
      { url: 'https://mcp.example.test/mcp', headers: { 'X-Tenant': 'tenant-value-acme', 'X-Mcp-Key': key } },
    ]);
    const listed = (await (await h.request('GET', `${base}?limit=200`)).json()) as {
      items: Array<{ connectionId: string; health: unknown }>;
    };
    expect(listed.items.find((c) => c.connectionId === created.connectionId)?.health).toEqual({
      ok: true,
      checkedAt: expect.any(String),
      mcp: { protocolVersion: '2025-06-18', serverName: 'remote', serverVersion: '3.1', toolCount: 2 },
    });

    const patched = await h.request('PATCH', path, {
      body: { headers: { 'X-Region': 'eu', 'X-Team': 'ops' } },
    });
    expect(await patched.json()).toMatchObject({ fixedHeaderNames: ['X-Region', 'X-Team'], health: null });
    const row = (await h.db.db.select().from(schema.connections)).find((r) => r.id === created.connectionId);
    expect(row?.config).toEqual({ headerName: 'X-Mcp-Key', 'header:X-Region': 'eu', 'header:X-Team': 'ops' });

    await h.deps.audit.flush();
    const audit = await (await h.request('GET', '/api/workspaces/ws-admin/audit?limit=200')).text();
    expect(audit).toContain('X-Region');
    for (const value of [key, 'tenant-value-acme', '"ops"']) expect(audit).not.toContain(value);
  });

  it('refuses what does not belong to an mcp-server, and headers that look like credentials', async () => {
    const before = await counts();
    const create = (body: Record<string, unknown>) =>
      h.request('POST', base, {
        body: { name: 'refused', type: 'mcp-server', baseUrl: 'https://mcp.example.test/mcp', ...body },
      });
    const basic = await create({ auth: { type: 'basic', secret: 'u:p' } });
    expect(await basic.json()).toMatchObject({
      code: 'validation_failed',
      issues: [{ path: 'auth.type', message: 'an mcp-server authenticates with none, bearer or api-key' }],
    });
    const model = await create({ auth: { type: 'none' }, model: 'm' });
    expect((await model.json()).issues).toEqual([
      { path: 'model', message: 'only an llm-provider has a model' },
    ]);
    const tokenHeader = await create({ auth: { type: 'none' }, headers: { 'X-Access-Token': 'abc' } });
    expect(tokenHeader.status).toBe(400);
    expect(await tokenHeader.json()).toMatchObject({
      code: 'invalid_request',
      issues: [
        {
          path: 'headers.X-Access-Token',
          message: expect.stringMatching(/^X-Access-Token looks like a credential/),
        },
      ],
    });
    const session = await create({ auth: { type: 'none' }, headers: { 'Mcp-Session-Id': 'x' } });
    expect((await session.json()).issues[0].path).toBe('headers.Mcp-Session-Id');
    const tooMany = await create({
      auth: { type: 'none' },
      headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])),
    });
    expect((await tooMany.json()).issues).toEqual([{ path: 'headers', message: 'at most 20 fixed headers' }]);
    const onHttp = await h.request('POST', base, {
      body: {
        name: 'refused',
        type: 'http-api',
        baseUrl: 'https://api.example.test',
        auth: { type: 'none' },
        headers: { 'X-Tenant': 'a' },
      },
    });
    expect((await onHttp.json()).issues).toEqual([
      { path: 'headers', message: 'only an mcp-server has fixed headers' },
    ]);
    expect(await counts()).toEqual(before);
  });
});

describe('workspace MCP policy', () => {
  it('updates partially and reads back', async () => {
    const put = await h.request('PUT', '/api/workspaces/ws-admin/mcp-policy', {
      body: { readOnly: true, disabledTools: [], allowedOrigins: ['https://app.example.test'] },
    });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({
      readOnly: true,
      disabledTools: [],
      allowedIps: [],
      allowedOrigins: ['https://app.example.test'],
    });
    const put2 = await h.request('PUT', '/api/workspaces/ws-admin/mcp-policy', { body: { readOnly: false } });
    expect(await put2.json()).toMatchObject({
      readOnly: false,
      allowedOrigins: ['https://app.example.test'],
    });
    const got = await (await h.request('GET', '/api/workspaces/ws-admin/mcp-policy')).json();
    expect(got).toMatchObject({ readOnly: false, allowedOrigins: ['https://app.example.test'] });
    await h.request('PUT', '/api/workspaces/ws-admin/mcp-policy', { body: { allowedOrigins: [] } });
    expect((await repos.getPolicy(h.db.db, 'ws-admin')).allowedOrigins).toEqual([]);
  });
});

describe('audit', () => {
  it('records admin actions with principal and redacted arguments, newest first, paginated', async () => {
    await h.deps.audit.flush();
    const res = await h.request('GET', '/api/workspaces/ws-admin/audit?limit=2');
    expect(res.status).toBe(200);
    const page = await res.json();
    expect(page.items).toHaveLength(2);
    expect(page.items[0].id).toBeGreaterThan(page.items[1].id);
    expect(page.items[0]).toMatchObject({
      workspaceId: 'ws-admin',
      kind: 'admin',
      principalType: 'operator',
      outcome: 'ok',
    });
    const next = await (
      await h.request('GET', `/api/workspaces/ws-admin/audit?limit=200&cursor=${page.nextCursor}`)
    ).json();
    expect(next.items[0].id).toBeLessThan(page.items[1].id);
    expect(TEST_ADMIN_TOKEN).not.toBe('');
  });
});

describe('admin cursors', () => {
  const forged = (position: Record<string, unknown>) =>
    Buffer.from(JSON.stringify(position)).toString('base64url');

  it.each([
    ['runs', { createdAt: '2026-02-30 00:00:00', id: 'run_x' }],
    ['runs', { createdAt: '2026-01-01 24:00:01', id: 'run_x' }],
    ['runs', { createdAt: '+99', id: 'run_x' }],
    ['runs', { createdAt: '0000-01-01 00:00:00', id: 'run_x' }],
    ['audit', { id: 1e19 }],
    ['audit', { id: -1e19 }],
    ['audit', { id: 1e300 }],
    ['audit', { id: 'x' }],
    ['connections', { id: 'conn_x' }],
    ['service-accounts', { id: 'sa_x' }],
    ['flows', { slug: 'x' }],
    ['installations', { id: 'inst_x' }],
  ])(
    'a crafted /%s cursor %j is 400 invalid_cursor, never reaching the database',
    async (route, position) => {
      const res = await h.request(
        'GET',
        `/api/workspaces/ws-admin/${route}?cursor=${encodeURIComponent(forged(position))}`,
      );
      expect(res.status).toBe(400);
      expect((await res.json()).code).toBe('invalid_cursor');
    },
  );

  it.each(['%%%', 'a.b', '.', 'x'.repeat(190), 'x'.repeat(600)])(
    'an unreadable cursor %s is 400 invalid_cursor',
    async (cursor) => {
      for (const route of ['audit', 'runs']) {
        const res = await h.request(
          'GET',
          `/api/workspaces/ws-admin/${route}?cursor=${encodeURIComponent(cursor)}`,
        );
        expect(res.status).toBe(400);
        expect((await res.json()).code).toBe('invalid_cursor');
      }
    },
  );

  it('pages with signed cursors bound to their route and workspace', async () => {
    await h.createWorkspace('ws-cursor-a');
    await h.createWorkspace('ws-cursor-b');
    for (const name of ['one', 'two', 'three']) {
      await h.request('POST', '/api/workspaces/ws-cursor-a/service-accounts', {
        body: { name, capabilities: ['runs.read'] },
      });
      await h.request('POST', '/api/workspaces/ws-cursor-b/service-accounts', {
        body: { name, capabilities: ['runs.read'] },
      });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const res = await h.request('GET', `/api/workspaces/ws-cursor-a/service-accounts?limit=2${q}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: { name: string }[]; nextCursor: string | null };
      seen.push(...page.items.map((i) => i.name));
      cursor = page.nextCursor;
      if (cursor) {
        // The same cursor on another workspace or another list is refused.
        const elsewhere = await h.request(
          'GET',
          `/api/workspaces/ws-cursor-b/service-accounts?cursor=${encodeURIComponent(cursor)}`,
        );
        expect(elsewhere.status).toBe(400);
        expect((await elsewhere.json()).code).toBe('invalid_cursor');
        const otherList = await h.request(
          'GET',
          `/api/workspaces/ws-cursor-a/connections?cursor=${encodeURIComponent(cursor)}`,
        );
        expect(otherList.status).toBe(400);
        // Any other last character of the signature is refused, spare base64url bits included.
        for (const last of ['A', 'B', 'C', 'D', 'w', 'x', '_']) {
          if (last === cursor.at(-1)) continue;
          const tampered = await h.request(
            'GET',
            `/api/workspaces/ws-cursor-a/service-accounts?cursor=${encodeURIComponent(cursor.slice(0, -1) + last)}`,
          );
          expect(tampered.status).toBe(400);
        }
      }
    } while (cursor);
    expect(seen.sort()).toEqual(['one', 'three', 'two']);
  });
});
