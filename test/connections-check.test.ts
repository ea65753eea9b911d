import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { schema } from '@flowgate/db';
import { LATEST_PROTOCOL_VERSION } from '@flowgate/workspace-mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { asRpc, mcpPost, type RpcAnswer, rpc } from './support/mcp.js';

/**
 * list_connections and check_connections against a real HTTP server on loopback: health results per answer,
 * credentials sent to the connected system but never shown to the agent, and the private-network guard.
 */

const WS = 'ws-conn';
const PAGED_WS = 'ws-conn-paged';
const GUARDED_WS = 'ws-conn-guarded';
const URLS_WS = 'ws-conn-urls';

const SECRETS = {
  ok: 'ok-bearer-secret-6c1f0e9a8b7d',
  unauthorized: 'rejected-bearer-secret-2d4f6a8c0e',
  broken: 'api-key-secret-9e8d7c6b5a4f',
  llm: 'llm-provider-secret-1a2b3c4d5e6f',
  stored: 'stored-only-secret-0f1e2d3c4b5a',
  basic: 'svc-user:basic-password-3c5e7a9b',
};

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** The connected system: answers by path and echoes the credential it got, so a leak would be visible. */
function startUpstream(): Promise<{ server: Server; base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://upstream').pathname;
    seen.push({ method: req.method ?? '', path, headers: req.headers });
    const echo = JSON.stringify({ youSent: req.headers.authorization ?? req.headers['x-api-token'] ?? null });
    const reply = (status: number) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-echo': echo });
      res.end(echo);
    };
    if (path === '/hang') return; // never answers; closed at teardown
    if (path === '/unauthorized') return reply(401);
    if (path === '/broken') return reply(500);
    if (path === '/ok' || path === '/llm/models' || path === '/basic' || path.startsWith('/paged/'))
      return reply(200);
    reply(404);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, base: `http://127.0.0.1:${port}`, seen });
    });
  });
}

let upstream: Awaited<ReturnType<typeof startUpstream>>;
let gw: TestGateway;
let guarded: TestGateway;
let key: ServiceAccountKey;
const ids: Record<string, string> = {};

beforeAll(async () => {
  // The guarded gateway (private networks refused, the default) boots alongside the main one.
  [upstream, gw, guarded] = await Promise.all([
    startUpstream(),
    startTestGateway({ FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true', FLOWGATE_CONNECTION_CHECK_TIMEOUT_MS: '400' }),
    startTestGateway(),
  ]);
  await gw.createWorkspace(WS);
  await gw.createWorkspace(PAGED_WS);
  await gw.createWorkspace(URLS_WS);
  key = await gw.mintKey(WS, ['connections.read']);
  const base = upstream.base;
  const create = async (label: string, body: Record<string, unknown>) => {
    ids[label] = (await gw.createConnection(WS, { name: label, ...body })).connectionId;
  };
  await create('ok', {
    type: 'http-api',
    baseUrl: `${base}/ok`,
    auth: { type: 'bearer', secret: SECRETS.ok },
  });
  await create('unauthorized', {
    type: 'http-api',
    baseUrl: `${base}/unauthorized`,
    auth: { type: 'bearer', secret: SECRETS.unauthorized },
  });
  await create('broken', {
    type: 'http-api',
    baseUrl: `${base}/broken`,
    auth: { type: 'api-key', secret: SECRETS.broken, headerName: 'X-Api-Token' },
  });
  await create('llm', {
    type: 'llm-provider',
    baseUrl: `${base}/llm`,
    auth: { type: 'bearer', secret: SECRETS.llm },
  });
  await create('stored', { type: 'secret', auth: { type: 'bearer', secret: SECRETS.stored } });
  await create('basic', {
    type: 'http-api',
    baseUrl: `${base}/basic`,
    auth: { type: 'basic', secret: SECRETS.basic },
  });
  await create('hang', { type: 'http-api', baseUrl: `${base}/hang`, auth: { type: 'none' } });
});

afterAll(async () => {
  await Promise.all([gw?.close(), guarded?.close()]);
  if (upstream) {
    upstream.server.closeAllConnections();
    await new Promise((r) => upstream.server.close(r));
  }
});

async function tool(
  target: TestGateway,
  ws: string,
  token: string,
  name: string,
  args: Record<string, unknown>,
) {
  const answer = await mcpPost(target.mcpUrl(ws), {
    token,
    protocolVersion: LATEST_PROTOCOL_VERSION,
    body: rpc('tools/call', { name, arguments: args }),
  });
  expect(answer.status).toBe(200);
  const body = asRpc(answer);
  return { text: answer.text, body, structured: body.result?.structuredContent as Record<string, unknown> };
}

interface Check {
  connectionId: string;
  name: string;
  type: string;
  ok: boolean;
  status: string;
  httpStatus: number | null;
  latencyMs: number | null;
  message: string | null;
}

function expectNoSecrets(text: string): void {
  for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
  // The basic credential is also never shown in its encoded form.
  expect(text).not.toContain(Buffer.from(SECRETS.basic).toString('base64'));
}

function checksOf(body: RpcAnswer): Check[] {
  expect(body.result?.isError).toBeUndefined();
  const structured = body.result?.structuredContent as { checks?: Check[] } | undefined;
  if (!structured?.checks) throw new Error(`not a check_connections result: ${JSON.stringify(body)}`);
  return structured.checks;
}

describe('check_connections against a real HTTP server', () => {
  let checkText = '';
  let checks: Check[] = [];

  beforeAll(async () => {
    // One call for everything, the hanging server included: its check timeout (400 ms here) is paid once.
    const before = upstream.seen.length;
    const started = Date.now();
    const r = await tool(gw, WS, key.apiKey, 'check_connections', {
      connection_ids: [...Object.values(ids), 'conn_does_not_exist'],
    });
    checkText = r.text;
    checks = checksOf(r.body);
    expect(Date.now() - started).toBeLessThan(9_000);
    expect(r.structured.unknownConnectionIds).toEqual(['conn_does_not_exist']);
    // ok, unauthorized, broken, llm/models, basic and hang; the stored secret needs no request.
    expect(upstream.seen.length - before).toBe(6);
  }, 20_000);

  const byName = (name: string) => {
    const c = checks.find((x) => x.name === name);
    if (!c) throw new Error(`no check for ${name}`);
    return c;
  };

  it('200 is healthy with its HTTP status and latency', () => {
    expect(byName('ok')).toMatchObject({
      connectionId: ids.ok,
      type: 'http-api',
      ok: true,
      status: 'healthy',
      httpStatus: 200,
      message: null,
    });
    expect(byName('ok').latencyMs).toEqual(expect.any(Number));
  });

  it('401 is unhealthy: credentials rejected', () => {
    expect(byName('unauthorized')).toMatchObject({
      ok: false,
      status: 'unhealthy',
      httpStatus: 401,
      message: 'credentials were rejected',
    });
  });

  it('500 is unhealthy with the status', () => {
    expect(byName('broken')).toMatchObject({ ok: false, status: 'unhealthy', httpStatus: 500 });
    expect(byName('broken').message).toContain('500');
  });

  it('a server that never answers is unhealthy after the check timeout, without an HTTP status', () => {
    expect(byName('hang')).toMatchObject({
      ok: false,
      status: 'unhealthy',
      httpStatus: null,
      latencyMs: null,
    });
    expect(byName('hang').message).toBe('no answer within 400 ms');
  });

  it('an LLM provider is checked on its model list; a stored secret needs no request', () => {
    expect(byName('llm')).toMatchObject({
      type: 'llm-provider',
      ok: true,
      status: 'healthy',
      httpStatus: 200,
    });
    expect(byName('stored')).toMatchObject({ type: 'secret', ok: true, status: 'healthy', httpStatus: null });
  });

  it('the summary counts the results', () => {
    const summary = JSON.parse(checkText).result.structuredContent.summary;
    expect(summary).toEqual({ checked: 7, healthy: 4, unhealthy: 3, disabled: 0 });
  });

  it('the credentials reached the connected system, each in its own form', () => {
    const at = (path: string) => upstream.seen.filter((s) => s.path === path);
    expect(at('/ok').map((s) => [s.method, s.headers.authorization])).toEqual([
      ['GET', `Bearer ${SECRETS.ok}`],
    ]);
    expect(at('/unauthorized')[0]?.headers.authorization).toBe(`Bearer ${SECRETS.unauthorized}`);
    expect(at('/broken')[0]?.headers['x-api-token']).toBe(SECRETS.broken);
    expect(at('/llm/models')[0]?.headers.authorization).toBe(`Bearer ${SECRETS.llm}`);
    expect(at('/basic')[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from(SECRETS.basic).toString('base64')}`,
    );
    expect(at('/hang')[0]?.headers.authorization).toBeUndefined();
  });

  it('no secret appears in the MCP response, though the server echoed them back', () => {
    expect(checkText).toContain('"httpStatus":401');
    expectNoSecrets(checkText);
  });

  it('list_connections shows the recorded health and never a secret', async () => {
    const r = await tool(gw, WS, key.apiKey, 'list_connections', { limit: 50 });
    expectNoSecrets(r.text);
    const list = r.structured.connections as Array<Record<string, unknown>>;
    expect(list.map((c) => c.name).sort()).toEqual(Object.keys(ids).sort());
    const ok = list.find((c) => c.name === 'ok');
    expect(ok).toMatchObject({
      id: ids.ok,
      type: 'http-api',
      baseUrl: `${upstream.base}/ok`,
      authType: 'bearer',
      status: 'active',
      health: { ok: true, httpStatus: 200, message: null },
    });
    expect(list.find((c) => c.name === 'unauthorized')?.health).toMatchObject({
      ok: false,
      httpStatus: 401,
      message: 'credentials were rejected',
    });
    expect(list.find((c) => c.name === 'broken')?.configKeys).toEqual(['headerName']);
  });

  it('the audit log never holds a secret either', async () => {
    const items = await gw.waitForAudit(WS, (all) =>
      ['check_connections', 'list_connections'].every((a) => all.some((e) => e.action === a)),
    );
    expect(items.filter((e) => e.kind === 'admin' && e.action === 'connections.create')).toHaveLength(7);
    expectNoSecrets(JSON.stringify(items));
  });
});

describe('check_connections paging', () => {
  it('without connection_ids it checks one bounded page at a time', async () => {
    const pagedKey = await gw.mintKey(PAGED_WS, ['connections.read']);
    for (const n of [1, 2, 3]) {
      await gw.createConnection(PAGED_WS, {
        name: `paged-${n}`,
        type: 'http-api',
        baseUrl: `${upstream.base}/paged/${n}`,
        auth: { type: 'bearer', secret: SECRETS.ok },
      });
    }
    const first = await tool(gw, PAGED_WS, pagedKey.apiKey, 'check_connections', { limit: 2 });
    const firstChecks = checksOf(first.body);
    expect(firstChecks).toHaveLength(2);
    expect(typeof first.structured.nextCursor).toBe('string');
    const second = await tool(gw, PAGED_WS, pagedKey.apiKey, 'check_connections', {
      limit: 2,
      cursor: first.structured.nextCursor,
    });
    const secondChecks = checksOf(second.body);
    expect(secondChecks).toHaveLength(1);
    expect(second.structured.nextCursor).toBeNull();
    const names = [...firstChecks, ...secondChecks].map((c) => c.name).sort();
    expect(names).toEqual(['paged-1', 'paged-2', 'paged-3']);
    expect(
      [...firstChecks, ...secondChecks].every((c) => c.status === 'healthy' && c.httpStatus === 200),
    ).toBe(true);
    expectNoSecrets(first.text + second.text);
  });

  it('connections of another workspace are unknown ids, never checked', async () => {
    const before = upstream.seen.length;
    const pagedKey = await gw.mintKey(PAGED_WS, ['connections.read']);
    const r = await tool(gw, PAGED_WS, pagedKey.apiKey, 'check_connections', { connection_ids: [ids.ok] });
    expect(r.structured.checks).toEqual([]);
    expect(r.structured.unknownConnectionIds).toEqual([ids.ok]);
    expect(upstream.seen.length).toBe(before);
  });
});

describe('credentials inside base URLs', () => {
  it('list_connections shows stored base URLs without user-info, query or token segments', async () => {
    const urlsKey = await gw.mintKey(URLS_WS, ['connections.read']);
    const querySecret = 'query-secret-5b7d9f1a3c';
    const userSecret = 'userinfo-secret-8e6c4a2b0d';
    // Stored before base URLs were checked at create (the admin API refuses these now).
    const legacy = {
      query: `https://api.example.test/v1?api_key=${querySecret}&region=eu`,
      userinfo: `https://svc:${userSecret}@api.example.test/v2`,
    };
    for (const [name, baseUrl] of Object.entries(legacy)) {
      await gw.db.db.insert(schema.connections).values({
        id: `conn_${name.padEnd(20, '0')}`,
        workspaceId: URLS_WS,
        name,
        type: 'http-api',
        baseUrl,
        authType: 'none',
        secretCiphertext: null,
        config: {},
      });
    }
    const r = await tool(gw, URLS_WS, urlsKey.apiKey, 'list_connections', {});
    expect(r.text).not.toContain(querySecret);
    expect(r.text).not.toContain(userSecret);
    const byName = Object.fromEntries(
      (r.structured.connections as Array<{ name: string; baseUrl: string }>).map((c) => [c.name, c.baseUrl]),
    );
    expect(byName).toEqual({ query: 'https://api.example.test/v1', userinfo: 'https://api.example.test/v2' });
  });
});

describe('private network guard', () => {
  it('without FLOWGATE_ALLOW_PRIVATE_NETWORK a loopback connection is refused before any request', async () => {
    await guarded.createWorkspace(GUARDED_WS);
    const guardedKey = await guarded.mintKey(GUARDED_WS, ['connections.read']);
    const port = new URL(upstream.base).port;
    const targets = [`${upstream.base}/ok`, `http://localhost:${port}/ok`, `http://[::1]:${port}/ok`];
    const created: string[] = [];
    for (const [i, baseUrl] of targets.entries()) {
      created.push(
        (
          await guarded.createConnection(GUARDED_WS, {
            name: `loopback-${i}`,
            type: 'http-api',
            baseUrl,
            auth: { type: 'bearer', secret: SECRETS.ok },
          })
        ).connectionId,
      );
    }
    const before = upstream.seen.length;
    const r = await tool(guarded, GUARDED_WS, guardedKey.apiKey, 'check_connections', {
      connection_ids: created,
    });
    const checks = checksOf(r.body);
    expect(checks).toHaveLength(3);
    for (const c of checks) {
      expect(c, c.name).toMatchObject({ ok: false, status: 'unhealthy', httpStatus: null });
      expect(c.message, c.name).toMatch(/private or loopback/);
    }
    expect(upstream.seen.length).toBe(before);
    expectNoSecrets(r.text);
  });
});
