import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DbHandle, repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { REDACTED } from '@flowgate/secrets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkspaceDeps } from '../scope.js';
import {
  draftOf,
  flowLiteral,
  seedConnection,
  seedWorkspace,
  TEST_CONNECTION_SECRET,
  TEST_NOW,
  testWorkspaceDeps,
} from '../testing.js';
import { openWorkspace, type Workspace } from '../workspace.js';

let h: DbHandle;
let deps: WorkspaceDeps;
/**
 * An outside system: `/denied…` answers 401, `/missing…` 404, `/down…` 503, everything else 200; requests are
 * recorded with their headers.
 */
let server: Server;
let upstream: string;
const requests: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

beforeAll(async () => {
  h = await createTestDb();
  deps = testWorkspaceDeps(h.db);
  server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    const url = req.url ?? '';
    const status = url.startsWith('/denied')
      ? 401
      : url.startsWith('/missing')
        ? 404
        : url.startsWith('/down')
          ? 503
          : 200;
    res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? '{"data":[]}' : '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await h?.close();
});

let workspaces = 0;
async function workspace(over: Partial<WorkspaceDeps> = {}): Promise<{ id: string; ws: Workspace }> {
  const id = await seedWorkspace(h.db, `ws-conn-${++workspaces}`, 'Connections');
  return {
    id,
    ws: openWorkspace(testWorkspaceDeps(h.db, over), {
      workspaceId: id,
      actor: { kind: 'user', id: 'usr_1' },
    }),
  };
}

describe('connections.list', () => {
  it('never returns a secret, a config value or credentials in a base URL', async () => {
    const { id, ws } = await workspace();
    const conn = await seedConnection(deps, id, 1, {
      baseUrl: 'https://admin:hunter2@api.example.test/v1?api_key=abc123def&x=1',
      secret: TEST_CONNECTION_SECRET,
      config: { header_name: 'X-Crm-Key', region: 'eu-west-secret-region' },
      health: {
        ok: false,
        checkedAt: TEST_NOW,
        status: 401,
        message: `rejected Bearer ${TEST_CONNECTION_SECRET}`,
      },
    });
    const page = await ws.connections.list({ limit: 10, after: null });
    expect(page).toEqual({
      items: [
        {
          id: conn,
          name: 'crm-1',
          type: 'http-api',
          baseUrl: 'https://api.example.test/v1',
          authType: 'bearer',
          status: 'active',
          health: { ok: false, checkedAt: TEST_NOW, httpStatus: 401, message: `rejected ${REDACTED}` },
          configKeys: ['header_name', 'region'],
          boundSlots: [],
          createdAt: expect.stringMatching(/^\d{4}-/),
        },
      ],
      nextAfter: null,
    });
    const text = JSON.stringify(page);
    const stored = await repos.getConnection(h.db, id, conn);
    for (const secret of [
      TEST_CONNECTION_SECRET,
      stored?.secretCiphertext,
      'hunter2',
      'admin',
      'abc123def',
      'X-Crm-Key',
      'eu-west-secret-region',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  // Issue 12 finding 4: rows stored before base URLs were checked still reach list_connections.
  it('shows stored base URLs as scheme, host, port and a path without secret-looking segments', async () => {
    const { id, ws } = await workspace();
    const urls = [
      'https://user@api.example.test/v1',
      'https://api.example.test/crm?hapikey=canary0002',
      'https://api.example.test/data?appid=canary0003',
      'https://bucket.example.test/x?X-Amz-Signature=canary0004',
      'https://app.example.test:8443/api;jsessionid=canary0005',
      'https://app.example.test/cb#access_token=canary0006',
      'https://hooks.example.test/services/T0000AAAA/B0000BBBB/canary0007canary0007canary',
    ];
    for (const [i, baseUrl] of urls.entries()) await seedConnection(deps, id, i + 1, { baseUrl });
    const page = await ws.connections.list({ limit: 20, after: null });
    const text = JSON.stringify(page);
    expect(text).not.toContain('canary');
    expect(text).not.toContain('user@');
    expect(page.items.map((c) => c.baseUrl)).toEqual([
      'https://api.example.test/v1',
      'https://api.example.test/crm',
      'https://api.example.test/data',
      'https://bucket.example.test/x',
      'https://app.example.test:8443/api',
      'https://app.example.test/cb',
      `https://hooks.example.test/services/T0000AAAA/B0000BBBB/${REDACTED}`,
    ]);
  });

  it('pages in id order and lists the flow slots each connection is bound to', async () => {
    const { id, ws } = await workspace();
    const ids = [];
    for (let n = 1; n <= 3; n++) ids.push(await seedConnection(deps, id, n));
    await repos.saveDraft(h.db, id, draftOf(flowLiteral('uses-crm', { requires: ['crm'] })));
    await repos.setFlowBindings(h.db, id, 'uses-crm', 'draft', { crm: ids[1] as string });
    const first = await ws.connections.list({ limit: 2, after: null });
    expect(first.items.map((c) => c.id)).toEqual(ids.slice(0, 2));
    expect(first.items[1]?.boundSlots).toEqual([{ flowSlug: 'uses-crm', slot: 'crm', target: 'draft' }]);
    expect(first.nextAfter).toBe(ids[1]);
    const rest = await ws.connections.list({ limit: 2, after: first.nextAfter });
    expect(rest).toMatchObject({ items: [{ id: ids[2], boundSlots: [] }], nextAfter: null });
  });
});

describe('connections.check', () => {
  it('checks with the stored credentials, stores the result and never returns the secret', async () => {
    const { id, ws } = await workspace();
    const ok = await seedConnection(deps, id, 1, {
      baseUrl: `${upstream}/v1`,
      secret: TEST_CONNECTION_SECRET,
    });
    const denied = await seedConnection(deps, id, 2, {
      baseUrl: `${upstream}/denied`,
      secret: TEST_CONNECTION_SECRET,
    });
    const llm = await seedConnection(deps, id, 3, {
      type: 'llm-provider',
      baseUrl: `${upstream}/llm/`,
      authType: 'api-key',
      config: { headerName: 'X-Llm-Key' },
      secret: 'llm-key-0123456789',
    });
    const vault = await seedConnection(deps, id, 4, { type: 'secret', baseUrl: null, secret: 'vaulted' });
    const off = await seedConnection(deps, id, 5, { baseUrl: `${upstream}/off`, disabled: true });
    requests.length = 0;
    const result = await ws.connections.check({
      connectionIds: [ok, denied, llm, vault, off, 'conn_missing'],
      limit: 10,
      after: null,
    });
    expect(result.unknownConnectionIds).toEqual(['conn_missing']);
    expect(result.items.map((c) => [c.connectionId, c.status, c.httpStatus, c.message, c.checkedAt])).toEqual(
      [
        [ok, 'healthy', 200, null, TEST_NOW],
        [denied, 'unhealthy', 401, 'credentials were rejected', TEST_NOW],
        [llm, 'healthy', 200, null, TEST_NOW],
        [vault, 'healthy', null, 'secret is stored', TEST_NOW],
        [off, 'disabled', null, 'connection is disabled', TEST_NOW],
      ],
    );
    expect(requests.map((r) => r.url).sort()).toEqual(['/denied', '/llm/models', '/v1']);
    expect(requests.find((r) => r.url === '/v1')?.headers.authorization).toBe(
      `Bearer ${TEST_CONNECTION_SECRET}`,
    );
    expect(requests.find((r) => r.url === '/llm/models')?.headers['x-llm-key']).toBe('llm-key-0123456789');
    expect(JSON.stringify(result)).not.toMatch(/crm-secret-value|llm-key-0123456789|vaulted/);
    expect((await repos.getConnection(h.db, id, denied))?.health).toEqual({
      ok: false,
      checkedAt: TEST_NOW,
      status: 401,
      message: 'credentials were rejected',
    });
    expect((await repos.getConnection(h.db, id, off))?.health).toBeNull();
  });

  it('judges every type by one rule: any answer below 500 but 401/403 is reachable, so healthy', async () => {
    const { id, ws } = await workspace();
    const api = await seedConnection(deps, id, 1, { baseUrl: `${upstream}/missing/api` });
    const llm = await seedConnection(deps, id, 2, {
      type: 'llm-provider',
      baseUrl: `${upstream}/missing/llm/v1`,
      secret: 'llm-key-0123456789',
    });
    const apiDown = await seedConnection(deps, id, 3, { baseUrl: `${upstream}/down/api` });
    const llmDown = await seedConnection(deps, id, 4, {
      type: 'llm-provider',
      baseUrl: `${upstream}/down/v1`,
    });
    const llmDenied = await seedConnection(deps, id, 5, {
      type: 'llm-provider',
      baseUrl: `${upstream}/denied/v1`,
    });
    const { items } = await ws.connections.check({
      connectionIds: [api, llm, apiDown, llmDown, llmDenied],
      limit: 10,
      after: null,
    });
    expect(items.map((c) => [c.type, c.ok, c.status, c.httpStatus, c.message])).toEqual([
      ['http-api', true, 'healthy', 404, 'reachable; answered HTTP 404'],
      ['llm-provider', true, 'healthy', 404, 'reachable; answered HTTP 404'],
      ['http-api', false, 'unhealthy', 503, 'answered HTTP 503'],
      ['llm-provider', false, 'unhealthy', 503, 'answered HTTP 503'],
      ['llm-provider', false, 'unhealthy', 401, 'credentials were rejected'],
    ]);
    expect((await repos.getConnection(h.db, id, llm))?.health).toEqual({
      ok: true,
      checkedAt: TEST_NOW,
      status: 404,
      message: 'reachable; answered HTTP 404',
    });
  });

  it('refuses private addresses unless the deployment allows them', async () => {
    const { id, ws } = await workspace({ outbound: { allowPrivateNetwork: false, timeoutMs: 2_000 } });
    const local = await seedConnection(deps, id, 1, { baseUrl: `${upstream}/v1` });
    requests.length = 0;
    const { items } = await ws.connections.check({ connectionIds: [local], limit: 10, after: null });
    expect(items).toEqual([expect.objectContaining({ connectionId: local, ok: false, status: 'unhealthy' })]);
    expect(items[0]?.message).toBe(
      '127.0.0.1 is a private or loopback address, which this deployment does not allow',
    );
    expect(requests).toEqual([]);
  });
});
