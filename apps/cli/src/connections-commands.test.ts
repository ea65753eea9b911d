import { repos } from '@flowgate/db';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { recordingFetch, runWith, startTestGateway, type TestGateway } from './testing.js';

// `flowgate connections update|rotate|disable|enable|delete|check` against the real gateway on loopback.
let gw: TestGateway;
let env: Record<string, string | undefined>;
let ws: string;
let wsCount = 0;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});
beforeEach(async () => {
  wsCount += 1;
  ws = `ws-conn-cli-${wsCount}`;
  await gw.client.createWorkspace({ id: ws, name: ws });
  env = { FLOWGATE_API_URL: gw.url, FLOWGATE_ADMIN_TOKEN: gw.token };
});

async function create(name: string, type: string, auth: Record<string, string>, baseUrl?: string) {
  const c = await gw.client.createConnection(ws, {
    name,
    type,
    ...(baseUrl ? { baseUrl } : {}),
    auth: auth as { type: string },
  });
  return c.connectionId;
}

async function secretOf(id: string): Promise<string | null> {
  const row = await repos.getConnection(gw.db.db, ws, id);
  return row?.secretCiphertext ? gw.running.deps.secretBox.decrypt(row.secretCiphertext, ws) : null;
}

describe('connections rotate', () => {
  it('reads the new secret from an environment variable or stdin, never prints it', async () => {
    const id = await create(
      'crm',
      'http-api',
      { type: 'bearer', secret: 'first' },
      'https://crm.example.com',
    );
    const fromEnv = await runWith(['connections', 'rotate', id, '--workspace', ws, '--secret-env', 'NEW'], {
      env: { ...env, NEW: 'second-secret-value' },
    });
    expect(fromEnv).toEqual({ code: 0, stdout: `Rotated the secret of connection ${id}\n`, stderr: '' });
    expect(await secretOf(id)).toBe('second-secret-value');

    const fromStdin = await runWith(['connections', 'rotate', id, '--workspace', ws, '--secret-stdin'], {
      env,
      stdin: 'third-secret-value\n',
    });
    expect(fromStdin.code).toBe(0);
    expect(await secretOf(id)).toBe('third-secret-value');
  });

  it('takes no secret value as a flag and refuses to run without a secret', async () => {
    const id = await create(
      'crm',
      'http-api',
      { type: 'bearer', secret: 'first' },
      'https://crm.example.com',
    );
    const sent = recordingFetch();
    const flag = await runWith(['connections', 'rotate', id, '--workspace', ws, '--secret', 'x'], {
      env,
      fetch: sent.fetch,
    });
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain("unknown option '--secret'");
    const none = await runWith(['connections', 'rotate', id, '--workspace', ws], { env, fetch: sent.fetch });
    expect(none).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: invalid_request: give the new secret with --secret-env VAR or --secret-stdin\n',
    });
    expect(sent.requests).toEqual([]);
    expect(await secretOf(id)).toBe('first');
  });

  it('a connection of another workspace is not_found', async () => {
    const id = await create(
      'crm',
      'http-api',
      { type: 'bearer', secret: 'first' },
      'https://crm.example.com',
    );
    await gw.client.createWorkspace({ id: `${ws}-x`, name: 'x' });
    const r = await runWith(['connections', 'rotate', id, '--workspace', `${ws}-x`, '--secret-env', 'N'], {
      env: { ...env, N: 'stolen' },
    });
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'error: not_found: connection not found\n' });
    expect(await secretOf(id)).toBe('first');
  });
});

describe('connections update', () => {
  it('renames, moves and switches the auth type with a secret from the environment', async () => {
    const id = await create(
      'crm',
      'http-api',
      { type: 'bearer', secret: 'first' },
      'https://crm.example.com',
    );
    const r = await runWith(
      [
        'connections',
        'update',
        id,
        '--workspace',
        ws,
        '--name',
        'crm2',
        '--base-url',
        'https://crm2.example.com/',
        '--auth-type',
        'api-key',
        '--header-name',
        'X-Key',
        '--secret-env',
        'K',
        '--json',
      ],
      { env: { ...env, K: 'api-key-value' } },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      connectionId: id,
      name: 'crm2',
      baseUrl: 'https://crm2.example.com',
      auth: { type: 'api-key', hasSecret: true, headerName: 'X-Key' },
    });
    expect(r.stdout).not.toContain('api-key-value');
    expect(await secretOf(id)).toBe('api-key-value');
  });

  it('refuses an empty change and a header name without an auth type before sending anything', async () => {
    const sent = recordingFetch();
    const empty = await runWith(['connections', 'update', 'conn_x', '--workspace', ws], {
      env,
      fetch: sent.fetch,
    });
    expect(empty.stderr).toBe(
      'error: invalid_request: nothing to change: give --name, --base-url, --model, --auth-type, --header or a new secret\n',
    );
    const header = await runWith(
      ['connections', 'update', 'conn_x', '--workspace', ws, '--header-name', 'X'],
      {
        env,
        fetch: sent.fetch,
      },
    );
    expect(header.stderr).toBe('error: invalid_request: --header-name goes with --auth-type api-key\n');
    expect(sent.requests).toEqual([]);
  });
});

describe('connections disable, enable, check, delete', () => {
  it('disable and enable flip the status; check reports it', async () => {
    const id = await create('vault', 'secret', { type: 'bearer', secret: 'stored' });
    const off = await runWith(['connections', 'disable', id, '--workspace', ws], { env });
    expect(off).toEqual({ code: 0, stdout: `Connection ${id} is disabled\n`, stderr: '' });
    const disabled = await runWith(['connections', 'check', id, '--workspace', ws, '--json'], { env });
    expect(disabled.code).toBe(1);
    expect(JSON.parse(disabled.stdout)).toMatchObject({ connectionId: id, ok: false, status: 'disabled' });
    const on = await runWith(['connections', 'enable', id, '--workspace', ws], { env });
    expect(on.stdout).toBe(`Connection ${id} is active\n`);
    const healthy = await runWith(['connections', 'check', id, '--workspace', ws, '--json'], { env });
    expect(healthy.code).toBe(0);
    expect(JSON.parse(healthy.stdout)).toMatchObject({
      connectionId: id,
      ok: true,
      status: 'healthy',
      message: 'secret is stored',
    });
  });

  it('delete is refused while a flow is bound, naming it; --force unbinds and deletes', async () => {
    const id = await create('crm', 'http-api', { type: 'none' }, 'https://crm.example.com');
    const edn = `{:slug :uses-crm
 :requires [{:slot :crm :type :http-api}]
 :invocations {:default {:inputs []}}
 :flow (flow/step :http :call {:connection :crm :path "/"})}`;
    await gw.client.pushDraft(ws, 'uses-crm', edn);
    await gw.client.releaseFlow(ws, 'uses-crm', {});
    await gw.client.setFlowBindings(ws, 'uses-crm', { slots: { crm: id } });

    const refused = await runWith(['connections', 'delete', id, '--workspace', ws], { env });
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: conflict: connection crm is bound to flow uses-crm (live) slot :crm; unbind it first or delete with force\n' +
        '  - bindings: flow uses-crm (live) slot :crm\n',
    });
    expect(await repos.getConnection(gw.db.db, ws, id)).not.toBeNull();

    const forced = await runWith(['connections', 'delete', id, '--workspace', ws, '--force'], { env });
    expect(forced).toEqual({
      code: 0,
      stdout: `Deleted connection ${id} (crm)\nUnbound:\n  flow uses-crm (live) slot :crm\n`,
      stderr: '',
    });
    expect(await repos.getConnection(gw.db.db, ws, id)).toBeNull();
  });
});

describe('connections of type mcp-server', () => {
  it('creates one with repeatable --header, replaces and clears them, never printing their values', async () => {
    const created = await runWith(
      [
        'connections',
        'create',
        '--workspace',
        ws,
        '--name',
        'tools',
        '--type',
        'mcp-server',
        '--base-url',
        'https://mcp.example.com/mcp',
        '--auth-type',
        'bearer',
        '--secret-env',
        'T',
        '--header',
        'X-Tenant: acme-tenant',
        '--header',
        'X-Region:eu',
        '--json',
      ],
      { env: { ...env, T: 'mcp-token-value-0123' } },
    );
    expect(created.code).toBe(0);
    const body = JSON.parse(created.stdout);
    expect(body).toMatchObject({ type: 'mcp-server', fixedHeaderNames: ['X-Region', 'X-Tenant'] });
    expect(created.stdout).not.toMatch(/mcp-token-value-0123|acme-tenant/);
    const id = body.connectionId as string;
    expect((await repos.getConnection(gw.db.db, ws, id))?.config).toEqual({
      'header:X-Tenant': 'acme-tenant',
      'header:X-Region': 'eu',
    });

    const replaced = await runWith(
      ['connections', 'update', id, '--workspace', ws, '--header', 'X-Team: ops', '--json'],
      { env },
    );
    expect(JSON.parse(replaced.stdout).fixedHeaderNames).toEqual(['X-Team']);
    const cleared = await runWith(
      ['connections', 'update', id, '--workspace', ws, '--clear-headers', '--json'],
      {
        env,
      },
    );
    expect(JSON.parse(cleared.stdout).fixedHeaderNames).toEqual([]);
    expect((await repos.getConnection(gw.db.db, ws, id))?.config).toEqual({});
  });

  it('refuses a malformed --header before sending, and names a refused one from the server', async () => {
    const sent = recordingFetch();
    const args = ['connections', 'create', '--workspace', ws, '--name', 't', '--type', 'mcp-server'];
    const malformed = await runWith([...args, '--auth-type', 'none', '--header', 'no-colon'], {
      env,
      fetch: sent.fetch,
    });
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('expected "Name: value"');
    expect(sent.requests).toEqual([]);
    const secretish = await runWith(
      [
        ...args,
        '--base-url',
        'https://mcp.example.com/mcp',
        '--auth-type',
        'none',
        '--header',
        'X-Api-Token: abc',
      ],
      { env },
    );
    expect(secretish.code).toBe(1);
    expect(secretish.stderr).toContain('X-Api-Token looks like a credential');
  });

  it('check and list show the protocol, server and tool count', async () => {
    const id = await create('tools', 'mcp-server', { type: 'none' }, 'https://mcp.example.com/mcp');
    gw.running.deps.workspaceDeps.mcpCheck = async () => ({
      protocolVersion: '2025-06-18',
      serverName: 'remote',
      serverVersion: '1.2',
      tools: ['a', 'b', 'c'],
    });
    try {
      const check = await runWith(['connections', 'check', id, '--workspace', ws], { env });
      expect(check.code).toBe(0);
      expect(check.stdout).toMatch(/^protocol: +2025-06-18$/m);
      expect(check.stdout).toMatch(/^server: +remote$/m);
      expect(check.stdout).toMatch(/^tools: +3$/m);
    } finally {
      delete gw.running.deps.workspaceDeps.mcpCheck;
    }
    const list = await runWith(['connections', 'list', '--workspace', ws], { env });
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID +NAME +TYPE +STATUS +HEALTH +MCP$/);
    expect(list.stdout).toContain(
      `${id}  tools  mcp-server  active  healthy  2025-06-18 remote 1.2 (3 tools)`,
    );
  });
});
