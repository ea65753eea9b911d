import { LATEST_PROTOCOL_VERSION } from '@flowgate/workspace-mcp';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuditItem, startTestGateway, type TestGateway } from './support/gateway.js';
import { asRpc, mcpPost, rpc } from './support/mcp.js';
import { installFlow, type Loopback, startLoopback, startRun, waitForRun } from './support/runs.js';

/**
 * Connection lifecycle over the admin API against the real gateway and worker: update, rotate, disable/enable,
 * delete (refused while bound, forced), check now. A rotated secret reaches the next run and the old one is gone
 * from every table; each change is audited without the secret; another workspace's connection is a 404.
 * PGlite by default, Postgres with DATABASE_URL.
 */

const WS = 'ws-life';
const OTHER = 'ws-life-other';
const PUB = 'ws-life-pub';
const OLD_SECRET = 'lifecycle-old-secret-5b7d9f1a3c';
const NEW_SECRET = 'lifecycle-new-secret-8e0a2c4e6f';
const SWITCHED_SECRET = 'lifecycle-key-secret-1d3f5a7c9e';

const ECHO = `{:slug :echo
 :requires [{:slot :api :type :http-api}]
 :invocations {:default {:inputs []}}
 :flow (flow/step :http :call {:connection :api :path "/echo"})}`;

const PUBLIC = `{:slug :pub-call
 :discover {:public true}
 :requires [{:slot :api :type :http-api} {:slot :aux :type :http-api}]
 :invocations {:default {:inputs []}}
 :flow (flow/step :http :call {:connection :api :path "/echo"})}`;

let gw: TestGateway;
let api: Loopback;
let connId: string;

const base = (ws: string) => `/api/workspaces/${ws}/connections`;

async function rawRows(): Promise<string[]> {
  const tables = await gw.db.db.statements.rows<{ name: string }>(
    sql`select table_name as name from information_schema.tables
        where table_schema = current_schema() and table_type = 'BASE TABLE'`,
  );
  const out: string[] = [];
  for (const { name } of tables) {
    const rows = await gw.db.db.statements.rows<{ row: string }>(
      sql`select t::text as row from ${sql.identifier(name)} t`,
    );
    out.push(...rows.map((r) => `${name}: ${r.row}`));
  }
  return out;
}

async function ciphertextOf(id: string): Promise<string> {
  const [row] = await gw.db.db.statements.rows<{ c: string }>(
    sql`select secret_ciphertext as c from connections where id = ${id}`,
  );
  return row?.c as string;
}

async function mcpTool(token: string, name: string, args: Record<string, unknown>) {
  const answer = await mcpPost(gw.mcpUrl(WS), {
    token,
    protocolVersion: LATEST_PROTOCOL_VERSION,
    body: rpc('tools/call', { name, arguments: args }),
  });
  const body = asRpc(answer);
  expect(body.result?.isError).toBeUndefined();
  return body.result?.structuredContent as Record<string, unknown>;
}

async function auditOf(action: string): Promise<AuditItem[]> {
  const items = await gw.waitForAudit(WS, (all) => all.some((i) => i.action === action));
  return items.filter((i) => i.action === action);
}

beforeAll(async () => {
  api = await startLoopback(() => ({ status: 200, json: { ok: true } }));
  gw = await startTestGateway({ FLOWGATE_WORKER: 'true', FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true' });
  await Promise.all([gw.createWorkspace(WS), gw.createWorkspace(OTHER), gw.createWorkspace(PUB)]);
  connId = (
    await gw.createConnection(WS, {
      name: 'api',
      type: 'http-api',
      baseUrl: api.url,
      auth: { type: 'bearer', secret: OLD_SECRET },
    })
  ).connectionId;
  await installFlow(gw, WS, 'echo', ECHO, { api: connId });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await api?.close();
});

describe('rotation', () => {
  it('the run before rotation sends the old secret, the run after the new one; the old one is gone', async () => {
    const oldCiphertext = await ciphertextOf(connId);
    const before = await waitForRun(gw, WS, await startRun(gw, WS, 'echo', {}));
    expect(before.status).toBe('completed');

    const rotated = await gw.admin('POST', `${base(WS)}/${connId}/rotate`, { secret: NEW_SECRET });
    expect(rotated.status).toBe(200);
    expect(rotated.json).toMatchObject({ connectionId: connId, auth: { type: 'bearer', hasSecret: true } });
    expect(rotated.text).not.toContain(NEW_SECRET);

    const after = await waitForRun(gw, WS, await startRun(gw, WS, 'echo', {}));
    expect(after.status).toBe('completed');
    expect(api.received.map((r) => r.authorization)).toEqual([
      `Bearer ${OLD_SECRET}`,
      `Bearer ${NEW_SECRET}`,
    ]);

    await auditOf('connections.rotate');
    const rows = await rawRows();
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.filter((r) => r.includes(OLD_SECRET) || r.includes(oldCiphertext))).toEqual([]);
    expect(await ciphertextOf(connId)).not.toBe(oldCiphertext);
  });

  it('is audited with the connection named and no secret', async () => {
    const [entry] = await auditOf('connections.rotate');
    expect(entry?.arguments).toEqual({ connectionId: connId, name: 'api' });
    expect(entry?.outcome).toBe('ok');
  });

  it('refuses a body without a secret and a connection without auth', async () => {
    const empty = await gw.admin('POST', `${base(WS)}/${connId}/rotate`, {});
    expect(empty.status).toBe(400);
    const none = await gw.createConnection(WS, {
      name: 'open',
      type: 'http-api',
      baseUrl: api.url,
      auth: { type: 'none' },
    });
    const refused = await gw.admin('POST', `${base(WS)}/${none.connectionId}/rotate`, { secret: 'x' });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'invalid_request' });
  });
});

describe('update', () => {
  it('renames and switches the auth type; the next run sends the new header, the audit has no secret', async () => {
    const res = await gw.admin('PATCH', `${base(WS)}/${connId}`, {
      name: 'api-renamed',
      auth: { type: 'api-key', secret: SWITCHED_SECRET, headerName: 'X-Token' },
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      connectionId: connId,
      name: 'api-renamed',
      auth: { type: 'api-key', hasSecret: true, headerName: 'X-Token' },
      health: null,
    });
    const run = await waitForRun(gw, WS, await startRun(gw, WS, 'echo', {}));
    expect(run.status).toBe('completed');
    // The loopback records only Authorization: an api-key run sends none.
    expect(api.received.at(-1)?.authorization).toBeNull();

    const [entry] = await auditOf('connections.update');
    expect(entry?.arguments).toEqual({
      connectionId: connId,
      name: 'api-renamed',
      authType: 'api-key',
      headerName: 'X-Token',
      rotated: true,
    });
    expect(JSON.stringify(await gw.audit(WS))).not.toContain(SWITCHED_SECRET);

    const back = await gw.admin('PATCH', `${base(WS)}/${connId}`, {
      name: 'api',
      auth: { type: 'bearer', secret: NEW_SECRET },
    });
    expect(back.status).toBe(200);
    expect(back.json).toMatchObject({ name: 'api', auth: { type: 'bearer', hasSecret: true } });
    expect((back.json as { auth: Record<string, unknown> }).auth.headerName).toBeUndefined();
  });

  it('refuses a taken name, a model on an http-api and secret with auth', async () => {
    await gw.createConnection(WS, {
      name: 'taken',
      type: 'http-api',
      baseUrl: api.url,
      auth: { type: 'none' },
    });
    const taken = await gw.admin('PATCH', `${base(WS)}/${connId}`, { name: 'taken' });
    expect([taken.status, (taken.json as { code: string }).code]).toEqual([409, 'conflict']);
    const model = await gw.admin('PATCH', `${base(WS)}/${connId}`, { model: 'm' });
    expect(model.status).toBe(400);
    const both = await gw.admin('PATCH', `${base(WS)}/${connId}`, {
      secret: 'a',
      auth: { type: 'bearer', secret: 'b' },
    });
    expect(both.status).toBe(400);
  });
});

describe('disable and enable', () => {
  it('a disabled connection fails the step with connection_disabled and shows as disabled', async () => {
    const off = await gw.admin('POST', `${base(WS)}/${connId}/disable`);
    expect(off.status).toBe(200);
    expect(off.json).toMatchObject({ connectionId: connId, status: 'disabled' });
    const sent = api.received.length;
    const run = await waitForRun(gw, WS, await startRun(gw, WS, 'echo', {}));
    expect(run.status).toBe('failed');
    expect(run.error).toEqual({
      code: 'connection_disabled',
      message: 'step `call` failed: the connection bound to :api is disabled',
      stepId: 'call',
    });
    expect(api.received.length).toBe(sent);

    const check = await gw.admin('POST', `${base(WS)}/${connId}/check`);
    expect(check.json).toMatchObject({ connectionId: connId, ok: false, status: 'disabled' });
    expect(api.received.length).toBe(sent);
    // Agents see it as disabled too.
    const key = await gw.mintKey(WS, ['connections.read']);
    const listed = await mcpTool(key.apiKey, 'list_connections', { limit: 50 });
    expect(
      (listed.connections as Array<{ id: string; status: string }>).find((c) => c.id === connId)?.status,
    ).toBe('disabled');
    const checked = await mcpTool(key.apiKey, 'check_connections', { connection_ids: [connId] });
    expect(checked.checks).toEqual([
      expect.objectContaining({ connectionId: connId, ok: false, status: 'disabled' }),
    ]);

    const on = await gw.admin('POST', `${base(WS)}/${connId}/enable`);
    expect(on.json).toMatchObject({ status: 'active' });
    const again = await waitForRun(gw, WS, await startRun(gw, WS, 'echo', {}));
    expect(again.status).toBe('completed');
    expect(api.received.at(-1)?.authorization).toBe(`Bearer ${NEW_SECRET}`);

    expect((await auditOf('connections.disable'))[0]?.arguments).toEqual({
      connectionId: connId,
      name: 'api',
    });
    expect((await auditOf('connections.enable'))[0]?.arguments).toEqual({
      connectionId: connId,
      name: 'api',
    });
  });
});

describe('check now', () => {
  it('health-checks one connection with its secret and stores the result', async () => {
    const check = await gw.admin('POST', `${base(WS)}/${connId}/check`);
    expect(check.status).toBe(200);
    expect(check.json).toMatchObject({
      connectionId: connId,
      name: 'api',
      ok: true,
      status: 'healthy',
      httpStatus: 200,
    });
    expect(api.received.at(-1)).toMatchObject({ method: 'GET', authorization: `Bearer ${NEW_SECRET}` });
    const list = await gw.admin('GET', base(WS));
    const listed = (list.json as { items: Array<{ connectionId: string; health: unknown }> }).items.find(
      (i) => i.connectionId === connId,
    );
    expect(listed?.health).toMatchObject({ ok: true });
  });
});

describe('workspace scope', () => {
  it("another workspace's connection id is a 404 for every change, and nothing changes", async () => {
    const before = await ciphertextOf(connId);
    const calls: Array<[string, string, unknown]> = [
      ['PATCH', `${base(OTHER)}/${connId}`, { name: 'stolen' }],
      ['POST', `${base(OTHER)}/${connId}/rotate`, { secret: 'stolen-secret' }],
      ['POST', `${base(OTHER)}/${connId}/disable`, undefined],
      ['POST', `${base(OTHER)}/${connId}/enable`, undefined],
      ['POST', `${base(OTHER)}/${connId}/check`, undefined],
      ['DELETE', `${base(OTHER)}/${connId}?force=true`, undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await gw.admin(method, path, body);
      expect([method, path, res.status, (res.json as { code?: string }).code]).toEqual([
        method,
        path,
        404,
        'not_found',
      ]);
    }
    expect(await ciphertextOf(connId)).toBe(before);
    const list = await gw.admin('GET', base(WS));
    expect(
      (list.json as { items: Array<{ connectionId: string; name: string; status: string }> }).items,
    ).toContainEqual(expect.objectContaining({ connectionId: connId, name: 'api', status: 'active' }));
  });
});

describe('delete', () => {
  it('is refused while bound, naming the bindings; force unbinds, disables installations and deletes', async () => {
    // A public flow of another workspace installed here with its slot bound to the connection.
    await installFlow(gw, PUB, 'pub-call', PUBLIC);
    const inst = await gw.admin('POST', `/api/workspaces/${WS}/installations`, {
      sourceWorkspaceId: PUB,
      flowSlug: 'pub-call',
      versionPolicy: 'track-latest',
    });
    const installationId = (inst.json as { installationId: string }).installationId;
    // Its other slot is bound to another connection, which stays bound.
    const aux = (
      await gw.createConnection(WS, {
        name: 'aux',
        type: 'http-api',
        baseUrl: api.url,
        auth: { type: 'none' },
      })
    ).connectionId;
    const bound = await gw.admin('PATCH', `/api/workspaces/${WS}/installations/${installationId}`, {
      slotBindings: { api: connId, aux },
      enabled: true,
    });
    expect(bound.json).toMatchObject({ enabled: true, slotBindings: { api: connId, aux } });

    const refused = await gw.admin('DELETE', `${base(WS)}/${connId}`);
    expect(refused.status).toBe(409);
    expect(refused.json).toEqual({
      code: 'conflict',
      message: `connection api is bound to flow echo (live) slot :api, installation ${installationId} (pub-call) slot :api; unbind it first or delete with force`,
      issues: [
        { path: 'bindings', message: 'flow echo (live) slot :api' },
        { path: 'bindings', message: `installation ${installationId} (pub-call) slot :api` },
      ],
    });
    expect((await gw.admin('GET', base(WS))).text).toContain(connId);

    const forced = await gw.admin('DELETE', `${base(WS)}/${connId}?force=true`);
    expect(forced.status).toBe(200);
    expect(forced.json).toEqual({
      connectionId: connId,
      name: 'api',
      deleted: true,
      unbound: {
        flowBindings: [{ flowSlug: 'echo', target: 'live', slot: 'api' }],
        installationBindings: [{ installationId, flowSlug: 'pub-call', slot: 'api' }],
      },
    });
    expect((await gw.admin('GET', base(WS))).text).not.toContain(connId);
    const after = await gw.admin('GET', `/api/workspaces/${WS}/installations`);
    expect((after.json as { items: unknown[] }).items).toContainEqual(
      expect.objectContaining({ installationId, enabled: false, slotBindings: { aux } }),
    );
    const bindings = await gw.db.db.statements.rows<{ n: number }>(
      sql`select count(*)::int as n from bindings where connection_id = ${connId}`,
    );
    expect(bindings[0]?.n).toBe(0);
    expect((await rawRows()).filter((r) => r.includes(NEW_SECRET))).toEqual([]);

    const [entry] = await auditOf('connections.delete');
    expect(entry?.arguments).toEqual({
      connectionId: connId,
      name: 'api',
      force: true,
      unbound: {
        flowBindings: [{ flowSlug: 'echo', target: 'live', slot: 'api' }],
        installationBindings: [{ installationId, flowSlug: 'pub-call', slot: 'api' }],
      },
    });
    expect((await gw.admin('DELETE', `${base(WS)}/${connId}`)).status).toBe(404);
  });

  it('deletes an unbound connection without force', async () => {
    const c = await gw.createConnection(WS, {
      name: 'spare',
      type: 'secret',
      auth: { type: 'bearer', secret: 's-1' },
    });
    const res = await gw.admin('DELETE', `${base(WS)}/${c.connectionId}`);
    expect(res.json).toMatchObject({ connectionId: c.connectionId, deleted: true });
    expect((await gw.admin('DELETE', `${base(WS)}/${c.connectionId}?force=maybe`)).status).toBe(400);
  });
});
