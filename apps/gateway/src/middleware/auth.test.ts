import { createHash, generateKeyPairSync } from 'node:crypto';
import { schema } from '@flowgate/db';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../testing.js';

let h: Harness;
let keyA: { serviceAccountId: string; keyId: string; apiKey: string };
let keyB: { serviceAccountId: string; keyId: string; apiKey: string };

const wsRoutes = (ws: string): Array<[string, string, unknown?]> => [
  ['GET', `/api/workspaces/${ws}/service-accounts`],
  ['POST', `/api/workspaces/${ws}/service-accounts`, { name: 'x', capabilities: [] }],
  ['PATCH', `/api/workspaces/${ws}/service-accounts/sa_x`, { status: 'disabled' }],
  ['POST', `/api/workspaces/${ws}/service-accounts/sa_x/keys`, {}],
  ['GET', `/api/workspaces/${ws}/service-accounts/sa_x/keys`],
  ['DELETE', `/api/workspaces/${ws}/service-accounts/sa_x/keys/k`],
  [
    'POST',
    `/api/workspaces/${ws}/connections`,
    { name: 'c', type: 'secret', auth: { type: 'bearer', secret: 's' } },
  ],
  ['GET', `/api/workspaces/${ws}/connections`],
  ['GET', `/api/workspaces/${ws}/mcp-policy`],
  ['PUT', `/api/workspaces/${ws}/mcp-policy`, { readOnly: true }],
  ['GET', `/api/workspaces/${ws}/audit`],
  ['GET', `/api/workspaces/${ws}/runs`],
  ['GET', `/api/workspaces/${ws}/runs/run_abcdefghijkl`],
  ['POST', `/api/workspaces/${ws}/mcp`, { jsonrpc: '2.0', id: 1, method: 'ping' }],
];

beforeAll(async () => {
  h = await createHarness();
  await h.createWorkspace('ws-a');
  await h.createWorkspace('ws-b');
  keyA = await h.createServiceAccount('ws-a', ['workspace.full'], 'a-full');
  keyB = await h.createServiceAccount('ws-b', ['runs.read'], 'b-runs');
});
afterAll(async () => h?.close());

describe('401 before anything else', () => {
  it('no token, malformed header, unknown key → 401 with a Bearer challenge', async () => {
    const none = await h.request('GET', '/api/workspaces/ws-a/runs', { token: null });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="flowgate"');
    const basic = await h.request('GET', '/api/workspaces/ws-a/runs', {
      token: null,
      headers: { authorization: 'Basic abc' },
    });
    expect(basic.status).toBe(401);
    expect(basic.headers.get('www-authenticate')).toBe('Bearer realm="flowgate", error="invalid_token"');
    const unknown = await h.request('GET', '/api/workspaces/ws-a/runs', {
      token: `fgk_${'A'.repeat(16)}_${'b'.repeat(43)}`,
    });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer realm="flowgate", error="invalid_token"');
    expect(await unknown.json()).toMatchObject({ code: 'invalid_token' });
  });

  it('refuses a token in the query string even with a valid header', async () => {
    const res = await h.request('GET', `/api/workspaces/ws-a/runs?access_token=${keyA.apiKey}`, {
      token: keyA.apiKey,
    });
    expect(res.status).toBe(401);
    const text = await res.text();
    expect(JSON.parse(text).code).toBe('token_in_query');
    expect(text).not.toContain(keyA.apiKey);
    const upper = await h.request('GET', '/api/workspaces/ws-a/runs?ACCESS_TOKEN=x&limit=5', {
      token: keyA.apiKey,
    });
    expect(upper.status).toBe(401);
    const harmless = await h.request('GET', '/api/workspaces/ws-a/runs?limit=5', { token: keyA.apiKey });
    expect(harmless.status).toBe(200);
  });
});

describe('tenancy', () => {
  it("a key of workspace A gets 403 on every route of workspace B, and the same for a workspace that doesn't exist", async () => {
    for (const ws of ['ws-b', 'ws-ghost']) {
      for (const [method, path, body] of wsRoutes(ws)) {
        const res = await h.request(method, path, { token: keyA.apiKey, body });
        expect(`${method} ${path} → ${res.status}`).toBe(`${method} ${path} → 403`);
        const json = await res.json();
        expect(json).toEqual({
          code: 'forbidden',
          message: 'this token does not grant access to the requested workspace',
        });
      }
    }
  });

  it("listing in A never shows B's rows", async () => {
    await h.request('POST', '/api/workspaces/ws-b/connections', {
      body: { name: 'b-only', type: 'secret', auth: { type: 'bearer', secret: 'b-secret-value' } },
    });
    const sas = await (await h.request('GET', '/api/workspaces/ws-a/service-accounts')).text();
    expect(sas).toContain(keyA.serviceAccountId);
    expect(sas).not.toContain(keyB.serviceAccountId);
    const conns = await (await h.request('GET', '/api/workspaces/ws-a/connections')).json();
    expect(conns.items.map((c: { name: string }) => c.name)).not.toContain('b-only');
    const keysOfB = await h.request(
      'GET',
      `/api/workspaces/ws-a/service-accounts/${keyB.serviceAccountId}/keys`,
    );
    expect(keysOfB.status).toBe(404);
    const audit = await (await h.request('GET', '/api/workspaces/ws-a/audit?limit=200')).json();
    expect(audit.items.every((e: { workspaceId: string }) => e.workspaceId === 'ws-a')).toBe(true);
  });

  it('workspace.full does not grant management', async () => {
    const res = await h.request('GET', '/api/workspaces/ws-a/service-accounts', { token: keyA.apiKey });
    expect(res.status).toBe(403);
    expect((await res.json()).code).toBe('insufficient_role');
    const runs = await h.request('GET', '/api/workspaces/ws-a/runs', { token: keyA.apiKey });
    expect(runs.status).toBe(200);
    expect(await runs.json()).toEqual({ items: [], nextCursor: null });
  });

  it('a missing capability is 403', async () => {
    const k = await h.createServiceAccount('ws-a', ['flows.read']);
    const res = await h.request('GET', '/api/workspaces/ws-a/runs', { token: k.apiKey });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      code: 'forbidden',
      message: 'this action needs the runs.read capability',
    });
  });
});

describe('key lifecycle', () => {
  it('create → 200 → revoke → 401 at once on this replica, and on another as soon as it hears the change', async () => {
    // A clock that never moves: the other replica's 1 s cache TTL cannot expire, so only the change feed's NOTIFY
    // (which drops the cached principal) can turn its answer to 401.
    const start = Date.now();
    const replica = await createHarness({
      db: h.db,
      env: { FLOWGATE_AUTH_CACHE_TTL_SECONDS: '1' },
      now: () => start,
    });
    try {
      const k = await h.createServiceAccount('ws-a', ['runs.read']);
      expect((await h.request('GET', '/api/workspaces/ws-a/runs', { token: k.apiKey })).status).toBe(200);
      expect((await replica.request('GET', '/api/workspaces/ws-a/runs', { token: k.apiKey })).status).toBe(
        200,
      );
      const del = await h.request(
        'DELETE',
        `/api/workspaces/ws-a/service-accounts/${k.serviceAccountId}/keys/${k.keyId}`,
      );
      expect(del.status).toBe(204);
      expect((await h.request('GET', '/api/workspaces/ws-a/runs', { token: k.apiKey })).status).toBe(401);
      const until = Date.now() + 5_000;
      let status = 200;
      while (status !== 401 && Date.now() < until) {
        status = (await replica.request('GET', '/api/workspaces/ws-a/runs', { token: k.apiKey })).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 25));
      }
      expect(status).toBe(401);
    } finally {
      await replica.close();
    }
  });

  it('an expired key is 401', async () => {
    let elapsed = 0;
    const clocked = await createHarness({ db: h.db, now: () => Date.now() + elapsed });
    const sa = await (
      await clocked.request('POST', '/api/workspaces/ws-a/service-accounts', {
        body: { name: 'exp', capabilities: ['runs.read'] },
      })
    ).json();
    const created = await (
      await clocked.request('POST', `/api/workspaces/ws-a/service-accounts/${sa.serviceAccountId}/keys`, {
        body: { expiresAt: new Date(Date.now() + 60_000).toISOString() },
      })
    ).json();
    const runs = () => clocked.request('GET', '/api/workspaces/ws-a/runs', { token: created.key.apiKey });
    try {
      expect((await runs()).status).toBe(200);
      elapsed = 59_000;
      expect((await runs()).status).toBe(200);
      // Past the expiry: refused even though the key was cached as valid a moment ago.
      elapsed = 61_000;
      expect((await runs()).status).toBe(401);
    } finally {
      await clocked.close();
    }
  });

  it('a disabled account is 403, and enabling it again restores access', async () => {
    const k = await h.createServiceAccount('ws-a', ['runs.read']);
    expect((await h.request('GET', '/api/workspaces/ws-a/runs', { token: k.apiKey })).status).toBe(200);
    await h.request('PATCH', `/api/workspaces/ws-a/service-accounts/${k.serviceAccountId}`, {
      body: { status: 'disabled' },
    });
    const res = await h.request('GET', '/api/workspaces/ws-a/runs', { token: k.apiKey });
    expect(res.status).toBe(403);
    await h.request('PATCH', `/api/workspaces/ws-a/service-accounts/${k.serviceAccountId}`, {
      body: { status: 'active' },
    });
    expect((await h.request('GET', '/api/workspaces/ws-a/runs', { token: k.apiKey })).status).toBe(200);
  });

  it('records lastUsedAt off the hot path', async () => {
    const k = await h.createServiceAccount('ws-a', ['runs.read']);
    await h.request('GET', '/api/workspaces/ws-a/runs', { token: k.apiKey });
    const before = await (
      await h.request('GET', `/api/workspaces/ws-a/service-accounts/${k.serviceAccountId}/keys`)
    ).json();
    expect(before.items[0].lastUsedAt).toBeNull();
    await h.deps.keyUsage.flush();
    const after = await (
      await h.request('GET', `/api/workspaces/ws-a/service-accounts/${k.serviceAccountId}/keys`)
    ).json();
    expect(Date.parse(after.items[0].lastUsedAt)).toBeGreaterThan(Date.now() - 10_000);
  });

  it('no key secret is stored in plaintext anywhere in the database', async () => {
    const k = await h.createServiceAccount('ws-a', ['runs.read']);
    const secret = k.apiKey.split('_')[2] as string;
    const tables = [
      schema.workspaces,
      schema.serviceAccounts,
      schema.apiKeys,
      schema.auditEntries,
      schema.connections,
    ];
    for (const table of tables) {
      const rows = await h.db.db.select().from(table);
      const dump = JSON.stringify(rows);
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(k.apiKey);
    }
    const rows = await h.db.db.select().from(schema.apiKeys);
    const row = rows.find((r) => r.id === k.keyId);
    expect(row?.secretHash).toBe(createHash('sha256').update(secret).digest('hex'));
  });
});

describe('origin and IP allowlist', () => {
  it('an Origin that is not allowed is 403; the deployment origin and workspace origins pass', async () => {
    const evil = await h.request('GET', '/api/workspaces/ws-a/runs', {
      token: keyA.apiKey,
      headers: { origin: 'https://evil.test' },
    });
    expect(evil.status).toBe(403);
    expect((await evil.json()).code).toBe('origin_not_allowed');
    const own = await h.request('GET', '/api/workspaces/ws-a/runs', {
      token: keyA.apiKey,
      headers: { origin: 'http://127.0.0.1:8787' },
    });
    expect(own.status).toBe(200);
    await h.request('PUT', '/api/workspaces/ws-a/mcp-policy', {
      body: { allowedOrigins: ['https://app.example.test'] },
    });
    const listed = await h.request('GET', '/api/workspaces/ws-a/runs', {
      token: keyA.apiKey,
      headers: { origin: 'https://app.example.test' },
    });
    expect(listed.status).toBe(200);
    await h.request('PUT', '/api/workspaces/ws-a/mcp-policy', { body: { allowedOrigins: [] } });
  });

  it('enforces the workspace IP allowlist (v4, v6, CIDR) from the address the trusted proxy appended', async () => {
    const proxied = await createHarness({ db: h.db, env: { FLOWGATE_TRUST_PROXY: '1' } });
    try {
      await proxied.createWorkspace('ws-ip');
      const k = await proxied.createServiceAccount('ws-ip', ['runs.read']);
      await proxied.request('PUT', '/api/workspaces/ws-ip/mcp-policy', {
        body: { allowedIps: ['10.1.0.0/16', '2001:db8::/32'] },
        headers: { 'x-forwarded-for': '10.1.2.3' },
      });
      const from = (header: string) =>
        proxied.request('GET', '/api/workspaces/ws-ip/runs', {
          token: k.apiKey,
          headers: { 'x-forwarded-for': header },
        });
      expect((await from('10.1.200.7')).status).toBe(200);
      expect((await from('2001:db8::5')).status).toBe(200);
      const denied = await from('10.2.0.1');
      expect(denied.status).toBe(403);
      expect((await denied.json()).code).toBe('ip_not_allowed');
      // A forged left-hand entry proves nothing: the proxy appended the real address on the right.
      expect((await from('10.1.2.3, 203.0.113.9')).status).toBe(403);
      expect((await from('203.0.113.9, 10.1.2.3')).status).toBe(200);
      expect((await from('not-an-ip')).status).toBe(403);
      // The untrusting replica ignores the header and has no socket address here: denied.
      const direct = await h.request('GET', '/api/workspaces/ws-ip/runs', {
        token: k.apiKey,
        headers: { 'x-forwarded-for': '10.1.2.3' },
      });
      expect(direct.status).toBe(403);
    } finally {
      await proxied.close();
    }
  });
});

describe('IP allowlist and the operator', () => {
  it('never locks out the operator token from admin calls, and still applies to MCP traffic and workspace keys', async () => {
    const proxied = await createHarness({ db: h.db, env: { FLOWGATE_TRUST_PROXY: '1' } });
    try {
      await proxied.createWorkspace('ws-ip-op');
      const k = await proxied.createServiceAccount('ws-ip-op', ['workspace.full']);
      const from = '203.0.113.50';
      const put = await proxied.request('PUT', '/api/workspaces/ws-ip-op/mcp-policy', {
        body: { allowedIps: ['10.9.9.9'] },
        headers: { 'x-forwarded-for': from },
      });
      expect(put.status).toBe(200);
      // The operator reads and undoes the policy from an address outside it.
      const read = await proxied.request('GET', '/api/workspaces/ws-ip-op/mcp-policy', {
        headers: { 'x-forwarded-for': from },
      });
      expect(read.status).toBe(200);
      // Workspace principals and MCP traffic stay behind the allowlist.
      const key = await proxied.request('GET', '/api/workspaces/ws-ip-op/runs', {
        token: k.apiKey,
        headers: { 'x-forwarded-for': from },
      });
      expect(key.status).toBe(403);
      expect((await key.json()).code).toBe('ip_not_allowed');
      const mcp = await proxied.request('POST', '/api/workspaces/ws-ip-op/mcp', {
        body: { jsonrpc: '2.0', id: 1, method: 'ping' },
        headers: { 'x-forwarded-for': from, accept: 'application/json, text/event-stream' },
      });
      expect(mcp.status).toBe(403);
      const undo = await proxied.request('PUT', '/api/workspaces/ws-ip-op/mcp-policy', {
        body: { allowedIps: [] },
        headers: { 'x-forwarded-for': from },
      });
      expect(undo.status).toBe(200);
      expect((await undo.json()).allowedIps).toEqual([]);
    } finally {
      await proxied.close();
    }
  });
});

describe('JWT principals through the gateway', () => {
  const issuer = 'https://idp.example.test/';
  const audience = 'flowgate';
  let jwtHarness: Harness;
  let privateKey: CryptoKey;
  let publicKey: CryptoKey;
  let otherKey: CryptoKey;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    privateKey = pair.privateKey;
    publicKey = pair.publicKey;
    otherKey = (await generateKeyPair('ES256')).privateKey;
    jwtHarness = await createHarness({
      db: h.db,
      env: {
        FLOWGATE_JWT_ISSUER: issuer,
        FLOWGATE_JWT_AUDIENCE: audience,
        FLOWGATE_JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
      },
    });
  });
  afterAll(async () => jwtHarness?.close());

  const sign = (
    claims: Record<string, unknown>,
    opts: { key?: CryptoKey; iss?: string; aud?: string; exp?: number | string; nbf?: number } = {},
  ) => {
    let jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(opts.iss ?? issuer)
      .setAudience(opts.aud ?? audience)
      .setSubject('user-1')
      .setIssuedAt()
      .setExpirationTime(opts.exp ?? '5m');
    if (opts.nbf !== undefined) jwt = jwt.setNotBefore(opts.nbf);
    return jwt.sign(opts.key ?? privateKey);
  };
  const get = (token: string, ws = 'ws-a') =>
    jwtHarness.request('GET', `/api/workspaces/${ws}/runs`, { token });
  const now = () => Math.floor(Date.now() / 1000);

  it('refuses a workspace admin a policy that excludes their own address (400), and accepts one that includes it', async () => {
    const proxied = await createHarness({
      db: h.db,
      env: {
        FLOWGATE_TRUST_PROXY: '1',
        FLOWGATE_JWT_ISSUER: issuer,
        FLOWGATE_JWT_AUDIENCE: audience,
        FLOWGATE_JWT_PUBLIC_KEY: await exportSPKI(publicKey),
      },
    });
    try {
      await proxied.createWorkspace('ws-ip-self');
      const token = await sign({ workspaces: [{ id: 'ws-ip-self', role: 'admin' }] });
      const put = (allowedIps: string[]) =>
        proxied.request('PUT', '/api/workspaces/ws-ip-self/mcp-policy', {
          token,
          body: { allowedIps },
          headers: { 'x-forwarded-for': '203.0.113.7' },
        });
      const refused = await put(['10.9.9.9']);
      expect(refused.status).toBe(400);
      const body = await refused.json();
      expect(body.code).toBe('invalid_request');
      expect(body.message).toContain('203.0.113.7');
      expect((await put(['203.0.113.0/24'])).status).toBe(200);
      expect((await put([])).status).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  it('accepts a valid token and applies its role', async () => {
    expect((await get(await sign({ workspace_id: 'ws-a', role: 'viewer' }))).status).toBe(200);
    const viewerAdmin = await jwtHarness.request('GET', '/api/workspaces/ws-a/service-accounts', {
      token: await sign({ workspace_id: 'ws-a', role: 'viewer' }),
    });
    expect(viewerAdmin.status).toBe(403);
    const admin = await jwtHarness.request('GET', '/api/workspaces/ws-a/service-accounts', {
      token: await sign({ workspaces: [{ id: 'ws-a', role: 'admin' }] }),
    });
    expect(admin.status).toBe(200);
  });

  it.each([
    ['expired', async () => sign({ workspace_id: 'ws-a', role: 'viewer' }, { exp: now() - 3600 })],
    ['not yet valid', async () => sign({ workspace_id: 'ws-a', role: 'viewer' }, { nbf: now() + 3600 })],
    ['wrong audience', async () => sign({ workspace_id: 'ws-a', role: 'viewer' }, { aud: 'someone-else' })],
    [
      'wrong issuer',
      async () => sign({ workspace_id: 'ws-a', role: 'viewer' }, { iss: 'https://evil.test/' }),
    ],
    ['wrong key', async () => sign({ workspace_id: 'ws-a', role: 'viewer' }, { key: otherKey })],
    [
      'alg none',
      async () => {
        const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
        return `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ sub: 'u', iss: issuer, aud: audience, exp: now() + 300, workspace_id: 'ws-a', role: 'admin' })}.`;
      },
    ],
    [
      'HS256 with the public key as secret',
      async () => {
        const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
        const secret = new TextEncoder().encode(publicKey.export({ type: 'spki', format: 'pem' }).toString());
        return new SignJWT({ workspace_id: 'ws-a', role: 'admin' })
          .setProtectedHeader({ alg: 'HS256' })
          .setIssuer(issuer)
          .setAudience(audience)
          .setSubject('u')
          .setExpirationTime('5m')
          .sign(secret);
      },
    ],
  ])('%s → 401', async (_label, make) => {
    const res = await get(await make());
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="flowgate", error="invalid_token"');
  });

  it('a token for another workspace is 403', async () => {
    const res = await get(await sign({ workspace_id: 'ws-b', role: 'admin' }), 'ws-a');
    expect(res.status).toBe(403);
  });
});
