import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repos } from '@flowgate/db';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensurePrivateDir, loadOrCreateDevSecrets } from './data-dir.js';
import {
  type Loopback,
  recordingFetch,
  runWith,
  startLoopback,
  startTestGateway,
  type TestGateway,
} from './testing.js';

// The real gateway on loopback (PGlite, or Postgres when DATABASE_URL is set); the CLI runs in-process against it.
// Its operator token is the one `flowgate dev` generated into `devDir`, so the dev-token fallback can be shown too.
let gw: TestGateway;
let devDir: string;
let TOKEN: string;
let env: Record<string, string | undefined>;
let wsCount = 0;

beforeAll(async () => {
  devDir = mkdtempSync(join(tmpdir(), 'fg-cli-'));
  ensurePrivateDir(join(devDir, '.flowgate'));
  TOKEN = loadOrCreateDevSecrets(join(devDir, '.flowgate')).secrets.adminToken;
  gw = await startTestGateway({ adminToken: TOKEN });
});
afterAll(async () => {
  await gw?.close();
  rmSync(devDir, { recursive: true, force: true });
});
beforeEach(() => {
  env = { FLOWGATE_API_URL: gw.url, FLOWGATE_ADMIN_TOKEN: TOKEN };
});

/** A fresh workspace, so tests never see each other's rows. */
async function workspace(): Promise<string> {
  wsCount += 1;
  const id = `ws-cli-${wsCount}`;
  await gw.client.createWorkspace({ id, name: id });
  return id;
}

/** A GET on the admin API with the operator token, for state the CLI has no read command for. */
async function adminGet(path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

const ISO = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z';

describe('admin commands → HTTP requests', () => {
  it('workspaces create posts {id, name} with the operator token and prints a summary', async () => {
    const r = await runWith(['workspaces', 'create', '--id', 'ws-acme', '--name', 'Acme'], { env });
    expect(r).toEqual({
      code: 0,
      stdout: expect.stringMatching(new RegExp(`^Created workspace ws-acme \\(Acme\\) at ${ISO}\\n$`)),
      stderr: '',
    });
    // it exists now: the operator can read inside it, and a second create is a conflict
    expect((await gw.client.listServiceAccounts('ws-acme')).items).toEqual([]);
    const again = await runWith(['workspaces', 'create', '--id', 'ws-acme', '--name', 'Acme'], { env });
    expect(again).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: conflict: workspace ws-acme already exists\n',
    });
  });

  it('--json prints the answer as JSON, including fields the CLI does not know', async () => {
    const r = await runWith(['workspaces', 'create', '--id', 'ws-json', '--name', 'Acme', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ id: 'ws-json', name: 'Acme', createdAt: expect.any(String) });
    // the global flag also works before the subcommand
    const r2 = await runWith(['--json', 'workspaces', 'create', '--id', 'ws-json-2', '--name', 'Acme'], {
      env,
    });
    expect(JSON.parse(r2.stdout)).toEqual({ id: 'ws-json-2', name: 'Acme', createdAt: expect.any(String) });
  });

  it('service-accounts create sends every repeated --capability', async () => {
    const ws = await workspace();
    const r = await runWith(
      [
        'service-accounts',
        'create',
        '--workspace',
        ws,
        '--name',
        'bot',
        '--capability',
        'flows.read',
        '--capability',
        'runs.read',
      ],
      { env },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Created service account sa_[A-Za-z0-9]{16}\n/);
    expect(r.stdout).toContain('capabilities:     flows.read,runs.read');
    const { items } = await gw.client.listServiceAccounts(ws);
    expect(items).toEqual([
      expect.objectContaining({ name: 'bot', capabilities: ['flows.read', 'runs.read'], status: 'active' }),
    ]);
  });

  it('an unknown capability or a bad workspace id fails before any request', async () => {
    const sent = recordingFetch();
    const bad = await runWith(
      [
        'service-accounts',
        'create',
        '--workspace',
        'ws-acme',
        '--name',
        'bot',
        '--capability',
        'keys.manage',
      ],
      { env, fetch: sent.fetch },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("option '--capability <capability>' argument 'keys.manage' is invalid");
    expect(bad.stderr).toContain('workspace.full');
    const badWs = await runWith(['service-accounts', 'list', '--workspace', 'WS/../x'], {
      env,
      fetch: sent.fetch,
    });
    expect(badWs.code).toBe(1);
    expect(badWs.stderr).toContain('workspace id must match');
    const missing = await runWith(['service-accounts', 'create', '--workspace', 'ws-acme', '--name', 'bot'], {
      env,
      fetch: sent.fetch,
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("required option '--capability <capability>' not specified");
    expect(sent.requests).toHaveLength(0);
  });

  it('service-accounts list prints a table', async () => {
    const ws = await workspace();
    const bot = await gw.client.createServiceAccount(ws, {
      name: 'bot',
      capabilities: ['flows.read', 'runs.read'],
    });
    const ops = await gw.client.createServiceAccount(ws, { name: 'ops', capabilities: [] });
    await gw.client.updateServiceAccount(ws, ops.serviceAccountId, { status: 'disabled' });
    const r = await runWith(['service-accounts', 'list', '--workspace', ws], { env });
    expect(r.code).toBe(0);
    const [header, ...rows] = r.stdout.split('\n');
    const width = bot.serviceAccountId.length;
    expect(header).toBe(`${'ID'.padEnd(width)}  NAME  STATUS    CAPABILITIES`);
    // rows come in id order, and ids are random
    expect(rows.sort()).toEqual(
      [
        '',
        `${bot.serviceAccountId}  bot   active    flows.read,runs.read`,
        `${ops.serviceAccountId}  ops   disabled  -`,
      ].sort(),
    );
  });

  it('service-accounts update sends only the given fields and refuses an empty patch', async () => {
    const ws = await workspace();
    const sa = await gw.client.createServiceAccount(ws, { name: 'bot', capabilities: ['runs.read'] });
    const id = sa.serviceAccountId;
    const r = await runWith(['service-accounts', 'update', id, '--workspace', ws, '--status', 'disabled'], {
      env,
    });
    expect(r.code).toBe(0);
    expect((await gw.client.listServiceAccounts(ws)).items).toEqual([
      expect.objectContaining({ name: 'bot', status: 'disabled', capabilities: ['runs.read'] }),
    ]);

    const caps = await runWith(
      ['service-accounts', 'update', id, '--workspace', ws, '--capability', 'workspace.full', '--name', 'n2'],
      { env },
    );
    expect(caps.code).toBe(0);
    expect((await gw.client.listServiceAccounts(ws)).items).toEqual([
      expect.objectContaining({ name: 'n2', status: 'disabled', capabilities: ['workspace.full'] }),
    ]);

    const sent = recordingFetch();
    const empty = await runWith(['service-accounts', 'update', id, '--workspace', ws], {
      env,
      fetch: sent.fetch,
    });
    expect(empty).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: invalid_request: nothing to update: give --status, --capability or --name\n',
    });
    const badStatus = await runWith(
      ['service-accounts', 'update', id, '--workspace', ws, '--status', 'paused'],
      { env, fetch: sent.fetch },
    );
    expect(badStatus.code).toBe(1);
    expect(sent.requests).toHaveLength(0);
  });

  it('keys create sends name and a normalised expiry and shows the key once', async () => {
    const ws = await workspace();
    const sa = await gw.client.createServiceAccount(ws, { name: 'bot', capabilities: [] });
    const r = await runWith(
      [
        'service-accounts',
        'keys',
        'create',
        sa.serviceAccountId,
        '--workspace',
        ws,
        '--name',
        'ci',
        '--expires-at',
        '2099-01-01T00:00:00Z',
      ],
      { env },
    );
    expect(r.code).toBe(0);
    const [, keyId] = /^Created key (\S+) /.exec(r.stdout) ?? [];
    expect(r.stdout).toMatch(
      new RegExp(
        `^Created key ${keyId} for ${sa.serviceAccountId} \\(expires: 2099-01-01T00:00:00\\.000Z\\)\\n` +
          `API key \\(shown once, store it now\\): fgk_${keyId}_[A-Za-z0-9]{43}\\n$`,
      ),
    );
    expect((await gw.client.listKeys(ws, sa.serviceAccountId)).items).toEqual([
      expect.objectContaining({ keyId, name: 'ci', expiresAt: '2099-01-01T00:00:00.000Z' }),
    ]);

    const sent = recordingFetch();
    const badTime = await runWith(
      [
        'service-accounts',
        'keys',
        'create',
        sa.serviceAccountId,
        '--workspace',
        ws,
        '--expires-at',
        'tomorrow',
      ],
      { env, fetch: sent.fetch },
    );
    expect(badTime.code).toBe(1);
    expect(badTime.stderr).toContain('expected an ISO 8601 time');
    expect(sent.requests).toHaveLength(0);
  });

  it('keys list and revoke address the key by path, encoded', async () => {
    const ws = await workspace();
    const sa = await gw.client.createServiceAccount(ws, { name: 'bot', capabilities: [] });
    const { key } = await gw.client.createKey(ws, sa.serviceAccountId, { name: 'ci' });
    const [info] = (await gw.client.listKeys(ws, sa.serviceAccountId)).items;
    const list = await runWith(['service-accounts', 'keys', 'list', sa.serviceAccountId, '--workspace', ws], {
      env,
    });
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(
      `${'KEY ID'.padEnd(key.keyId.length)}  NAME  CREATED                   EXPIRES  LAST USED  REVOKED\n` +
        `${key.keyId}  ci    ${info?.createdAt}  -        -          -\n`,
    );
    // encoded ids reach the key routes (an unencoded "/" would miss them: "no such route")
    const spaced = await runWith(['service-accounts', 'keys', 'list', 'sa 1', '--workspace', ws], { env });
    expect(spaced).toEqual({ code: 1, stdout: '', stderr: 'error: not_found: service account not found\n' });
    const slashed = await runWith(
      ['service-accounts', 'keys', 'revoke', sa.serviceAccountId, 'k/1', '--workspace', ws],
      { env },
    );
    expect(slashed).toEqual({ code: 1, stdout: '', stderr: 'error: not_found: key not found\n' });

    const revoke = await runWith(
      ['service-accounts', 'keys', 'revoke', sa.serviceAccountId, key.keyId, '--workspace', ws],
      { env },
    );
    expect(revoke).toEqual({ code: 0, stdout: `Revoked key ${key.keyId}\n`, stderr: '' });
    expect((await gw.client.listKeys(ws, sa.serviceAccountId)).items[0]?.revokedAt).toMatch(new RegExp(ISO));

    const second = await gw.client.createKey(ws, sa.serviceAccountId, {});
    const revokeJson = await runWith(
      [
        'service-accounts',
        'keys',
        'revoke',
        sa.serviceAccountId,
        second.key.keyId,
        '--workspace',
        ws,
        '--json',
      ],
      { env },
    );
    expect(JSON.parse(revokeJson.stdout)).toEqual({
      serviceAccountId: sa.serviceAccountId,
      keyId: second.key.keyId,
      revoked: true,
    });
  });

  it('mcp-policy set sends only the given fields; lists are split and trimmed, "" clears', async () => {
    const ws = await workspace();
    await gw.client.setMcpPolicy(ws, {
      allowedOrigins: ['https://app.example.test'],
      // loopback only, so the CLI's own calls from this machine stay allowed
      allowedIps: ['127.0.0.1', '::1'],
    });
    const r = await runWith(
      [
        'mcp-policy',
        'set',
        '--workspace',
        ws,
        '--read-only',
        '--disabled-tools',
        'release_flow, create_flow_draft',
        '--allowed-ips',
        '',
      ],
      { env },
    );
    expect(r.code).toBe(0);
    expect(await adminGet(`/api/workspaces/${ws}/mcp-policy`)).toMatchObject({
      readOnly: true,
      disabledTools: ['release_flow', 'create_flow_draft'],
      allowedOrigins: ['https://app.example.test'],
      allowedIps: [],
    });
    expect(r.stdout).toMatch(/readOnly: +true/);

    await runWith(['mcp-policy', 'set', '--workspace', ws, '--no-read-only'], { env });
    expect(await adminGet(`/api/workspaces/${ws}/mcp-policy`)).toMatchObject({
      readOnly: false,
      disabledTools: ['release_flow', 'create_flow_draft'],
    });

    const sent = recordingFetch();
    const nothing = await runWith(['mcp-policy', 'set', '--workspace', ws], { env, fetch: sent.fetch });
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/^error: invalid_request: nothing to set/);
    expect(sent.requests).toHaveLength(0);
  });

  it('mcp-policy set sets and removes quotas one by one; a bad quota is a usage error and sends nothing', async () => {
    const ws = await workspace();
    const set = await runWith(
      [
        'mcp-policy',
        'set',
        '--workspace',
        ws,
        '--runs-per-month',
        '500',
        '--tool-calls-per-day',
        '2000',
        '--json',
      ],
      { env },
    );
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout).quotas).toEqual({
      runsPerMonth: 500,
      llmTokensPerMonth: null,
      toolCallsPerDay: 2000,
    });
    const cleared = await runWith(
      [
        'mcp-policy',
        'set',
        '--workspace',
        ws,
        '--runs-per-month',
        'none',
        '--llm-tokens-per-month',
        '1000000',
      ],
      { env },
    );
    expect(cleared, cleared.stderr).toMatchObject({ code: 0 });
    expect(await adminGet(`/api/workspaces/${ws}/mcp-policy`)).toMatchObject({
      quotas: { runsPerMonth: null, llmTokensPerMonth: 1_000_000, toolCallsPerDay: 2000 },
    });
    for (const bad of ['0', '-1', '1.5', 'lots']) {
      const sent = recordingFetch();
      const r = await runWith(['mcp-policy', 'set', '--workspace', ws, '--tool-calls-per-day', bad], {
        env,
        fetch: sent.fetch,
      });
      expect(r.code, bad).not.toBe(0);
      expect(r.stderr).toContain('expected a positive integer, or none to remove the quota');
      expect(sent.requests).toHaveLength(0);
    }
    expect(await adminGet(`/api/workspaces/${ws}/mcp-policy`)).toMatchObject({
      quotas: { runsPerMonth: null, llmTokensPerMonth: 1_000_000, toolCallsPerDay: 2000 },
    });
  });

  it('audit passes limit and cursor as query and shows the next page hint', async () => {
    const ws = await workspace();
    for (const name of ['first', 'second', 'third'])
      await gw.client.createServiceAccount(ws, { name, capabilities: [] });
    await gw.running.deps.audit.flush();
    const r = await runWith(['audit', '--workspace', ws, '--limit', '1'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(
      /^AT +KIND +PRINCIPAL TYPE +PRINCIPAL ID +KEY ID +ACTION +OUTCOME +ERROR CODE +PROTOCOL VERSION +RUN ID +DURATION MS$/,
    );
    expect(r.stdout.split('\n')[1]).toMatch(
      new RegExp(`^${ISO} +admin +operator +operator +- +service_accounts\\.create +ok +- +- +- +\\d+$`),
    );
    const [, cursor] = /next page: --cursor (\S+)\n$/.exec(r.stdout) ?? [];
    expect(cursor).toBeTruthy();
    // the cursor and limit reach the server: the next page holds the one entry before the first
    const next = await runWith(
      ['--json', 'audit', '--workspace', ws, '--limit', '1', '--cursor', `${cursor}`],
      {
        env,
      },
    );
    const firstPage = JSON.parse(
      (await runWith(['--json', 'audit', '--workspace', ws, '--limit', '1'], { env })).stdout,
    );
    const page = JSON.parse(next.stdout);
    expect(page.items).toHaveLength(1);
    expect(page.items[0].id).toBeLessThan(firstPage.items[0].id);

    const sent = recordingFetch();
    const badLimit = await runWith(['audit', '--workspace', ws, '--limit', '0'], { env, fetch: sent.fetch });
    expect(badLimit.code).toBe(1);
    expect(sent.requests).toHaveLength(0);
  });
});

describe('connection secrets never come from argv', () => {
  let ws: string;
  beforeEach(async () => {
    ws = await workspace();
  });
  const base = () => [
    'connections',
    'create',
    '--workspace',
    ws,
    '--name',
    'crm',
    '--type',
    'http-api',
    '--base-url',
    'https://crm.example.com',
    '--auth-type',
    'bearer',
  ];
  /** The stored connection and its secret, decrypted. */
  const stored = async () => {
    const [row, ...more] = await repos.listConnections(gw.db.db, ws, { limit: 10 });
    expect(more).toEqual([]);
    if (!row?.secretCiphertext) throw new Error('expected one connection with a secret');
    return { row, secret: gw.running.deps.secretBox.decrypt(row.secretCiphertext, ws) };
  };

  it('reads the secret from the named environment variable and never prints it', async () => {
    const r = await runWith([...base(), '--secret-env', 'CRM_TOKEN'], {
      env: { ...env, CRM_TOKEN: 's3cr3t-value' },
    });
    expect(r.code).toBe(0);
    const { row, secret } = await stored();
    expect(row).toMatchObject({
      name: 'crm',
      type: 'http-api',
      baseUrl: 'https://crm.example.com',
      authType: 'bearer',
    });
    expect(secret).toBe('s3cr3t-value');
    expect(r.stdout).toContain(`Created connection ${row.id}`);
    expect(r.stdout + r.stderr).not.toContain('s3cr3t-value');
  });

  it('reads the secret from stdin without the trailing newline', async () => {
    const r = await runWith([...base(), '--secret-stdin'], { env, stdin: 'from stdin\n' });
    expect(r.code).toBe(0);
    expect((await stored()).secret).toBe('from stdin');
  });

  it('passes the api-key header name', async () => {
    const args = base().map((a) => (a === 'bearer' ? 'api-key' : a));
    const r = await runWith([...args, '--header-name', 'X-Key', '--secret-env', 'K'], {
      env: { ...env, K: 'v' },
    });
    expect(r.code).toBe(0);
    expect((await stored()).secret).toBe('v');
    expect((await gw.client.listConnections(ws)).items[0]?.auth).toEqual({
      type: 'api-key',
      hasSecret: true,
      headerName: 'X-Key',
    });
  });

  it('has no flag that takes the secret value', async () => {
    const sent = recordingFetch();
    for (const flag of ['--secret', '--auth-secret', '--token']) {
      const r = await runWith([...base(), flag, 'literal-secret'], { env, fetch: sent.fetch });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`unknown option '${flag}'`);
    }
    // `--secret-env` takes a variable NAME: a literal value that is not a set variable is refused, not sent
    const r = await runWith([...base(), '--secret-env', 'literal-secret'], { env, fetch: sent.fetch });
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: invalid_request: environment variable literal-secret is not set or empty\n',
    });
    expect(sent.requests).toHaveLength(0);
  });

  it('refuses an empty stdin and both sources at once', async () => {
    const sent = recordingFetch();
    const empty = await runWith([...base(), '--secret-stdin'], { env, stdin: '\n', fetch: sent.fetch });
    expect(empty.stderr).toBe('error: invalid_request: standard input was empty; expected the secret\n');
    const both = await runWith([...base(), '--secret-stdin', '--secret-env', 'X'], {
      env: { ...env, X: 'v' },
      stdin: 'v',
      fetch: sent.fetch,
    });
    expect(both.stderr).toBe(
      'error: invalid_request: give either --secret-env or --secret-stdin, not both\n',
    );
    expect(sent.requests).toHaveLength(0);
  });
});

describe('errors', () => {
  /** Answers every request with one fixed reply; for failures the real gateway never produces. */
  const answering = (status: number, body: string, type = 'application/json'): Promise<Loopback> =>
    startLoopback((_req, res) => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    });

  it('renders {code, message} from the server on stderr with exit 1, scrubbing the token', async () => {
    const ws = await workspace();
    const other = await workspace();
    const sa = await gw.client.createServiceAccount(ws, { name: 'bot', capabilities: ['workspace.full'] });
    const { key } = await gw.client.createKey(ws, sa.serviceAccountId, {});
    const denied = await runWith(['service-accounts', 'list', '--workspace', other], {
      env: { FLOWGATE_API_URL: gw.url, FLOWGATE_TOKEN: key.apiKey },
    });
    expect(denied).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: forbidden: this token does not grant access to the requested workspace\n',
    });

    // The gateway never echoes a token, but something in front of it might.
    const proxy = await answering(
      403,
      JSON.stringify({ code: 'forbidden', message: `token ${TOKEN} may not do this` }),
    );
    try {
      const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-other'], {
        env: { ...env, FLOWGATE_API_URL: proxy.url },
      });
      expect(r).toEqual({
        code: 1,
        stdout: '',
        stderr: 'error: forbidden: token [redacted] may not do this\n',
      });
    } finally {
      await proxy.close();
    }
  });

  it('lists field issues of a rejected body', async () => {
    const r = await runWith(['workspaces', 'create', '--id', 'ws-long-name', '--name', 'x'.repeat(101)], {
      env,
    });
    expect(r.stderr).toBe(
      'error: validation_failed: request body is invalid\n  - name: Too big: expected string to have <=100 characters\n',
    );
  });

  it('a non-JSON error body becomes http_<status> without echoing the body', async () => {
    const proxy = await answering(502, `<html>bad gateway ${TOKEN}</html>`, 'text/html');
    try {
      const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
        env: { ...env, FLOWGATE_API_URL: proxy.url },
      });
      expect(r).toEqual({ code: 1, stdout: '', stderr: 'error: http_502: the server answered HTTP 502\n' });
    } finally {
      await proxy.close();
    }
  });

  it('an unexpected answer shape is reported, not printed as success', async () => {
    const proxy = await answering(200, JSON.stringify({ nope: true }));
    try {
      const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
        env: { ...env, FLOWGATE_API_URL: proxy.url },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        'error: invalid_response: GET /api/workspaces/ws-acme/service-accounts answered an unexpected shape (items)\n',
      );
    } finally {
      await proxy.close();
    }
  });

  it('an unreachable server is "unavailable" and names the URL', async () => {
    const closed = await startLoopback((_req, res) => res.end());
    await closed.close();
    const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
      env: { ...env, FLOWGATE_API_URL: closed.url },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `error: unavailable: cannot reach the Flowgate API at ${closed.url} (ECONNREFUSED)\n`,
    );
  });

  it('without any token it says which variables to set and sends nothing', async () => {
    const sent = recordingFetch();
    const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
      env: { FLOWGATE_API_URL: gw.url },
      fetch: sent.fetch,
    });
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: unauthorized: no token: set FLOWGATE_ADMIN_TOKEN (operator) or FLOWGATE_TOKEN (workspace admin bearer)\n',
    });
    expect(sent.requests).toHaveLength(0);
  });

  it('refuses a malformed API URL from the flag or the environment', async () => {
    const sent = recordingFetch();
    const flag = await runWith(
      ['--api-url', 'ftp://x', 'service-accounts', 'list', '--workspace', 'ws-acme'],
      { env, fetch: sent.fetch },
    );
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain('expected an http(s) URL');
    const fromEnv = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
      env: { ...env, FLOWGATE_API_URL: 'nope' },
      fetch: sent.fetch,
    });
    expect(fromEnv.stderr).toBe('error: invalid_request: FLOWGATE_API_URL: expected an http(s) URL\n');
    expect(sent.requests).toHaveLength(0);
  });

  it('help exits 0 and lists the admin commands', async () => {
    const r = await runWith(['--help']);
    expect(r.code).toBe(0);
    for (const c of [
      'dev',
      'serve',
      'db',
      'workspaces',
      'service-accounts',
      'connections',
      'mcp-policy',
      'audit',
    ]) {
      expect(r.stdout).toContain(c);
    }
  });
});

describe('token and URL resolution', () => {
  it('--api-url wins over FLOWGATE_API_URL; a trailing slash is dropped', async () => {
    const ws = await workspace();
    // FLOWGATE_API_URL names a server that is gone: only the flag's URL can answer
    const gone = await startLoopback((_req, res) => res.end());
    await gone.close();
    const r = await runWith(['--api-url', `${gw.url}/`, 'service-accounts', 'list', '--workspace', ws], {
      env: { ...env, FLOWGATE_API_URL: gone.url },
    });
    expect(r).toEqual({ code: 0, stdout: '(none)\n', stderr: '' });
  });

  it('uses FLOWGATE_TOKEN when no operator token is set, and the operator token when both are', async () => {
    const ws = await workspace();
    const sa = await gw.client.createServiceAccount(ws, { name: 'bot', capabilities: ['workspace.full'] });
    const { key } = await gw.client.createKey(ws, sa.serviceAccountId, {});
    // a service-account key cannot manage: the answer shows which token was sent
    const asKey = await runWith(['service-accounts', 'list', '--workspace', ws], {
      env: { FLOWGATE_API_URL: gw.url, FLOWGATE_TOKEN: key.apiKey },
    });
    expect(asKey.code).toBe(1);
    expect(asKey.stderr).toMatch(/^error: insufficient_role: /);
    // the shell `pnpm dev` set up holds an agent key: the answer says what to do about it
    expect(asKey.stderr.split('\n')[1]).toBe(
      "hint: FLOWGATE_TOKEN holds a key for agents; admin commands need the operator token or a workspace admin: set FLOWGATE_ADMIN_TOKEN, or unset FLOWGATE_TOKEN to use the local dev server's own",
    );
    const both = await runWith(['service-accounts', 'list', '--workspace', ws], {
      env: { ...env, FLOWGATE_TOKEN: key.apiKey },
    });
    expect(both.code).toBe(0);
    expect(both.stdout).toContain(sa.serviceAccountId);
  });

  it('falls back to the dev operator token for a loopback API only', async () => {
    const ws = await workspace();
    const r = await runWith(['service-accounts', 'list', '--workspace', ws], {
      env: { FLOWGATE_API_URL: gw.url },
      cwd: devDir,
    });
    expect(r).toEqual({ code: 0, stdout: '(none)\n', stderr: '' });

    const sent = recordingFetch();
    const remote = await runWith(['service-accounts', 'list', '--workspace', ws], {
      env: { FLOWGATE_API_URL: 'https://flowgate.example.com' },
      cwd: devDir,
      fetch: sent.fetch,
    });
    expect(remote.stderr).toMatch(/^error: unauthorized: no token/);
    expect(sent.requests).toHaveLength(0);
  });
});
