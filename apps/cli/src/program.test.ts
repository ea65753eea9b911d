import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensurePrivateDir, loadOrCreateDevSecrets } from './data-dir.js';
import { type FakeApi, runWith, startFakeApi } from './test-helpers.js';

const TOKEN = 'op-token-0123456789abcdefghijklmnop';
let api: FakeApi;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(async () => {
  await api.close();
});
beforeEach(() => {
  api.requests.length = 0;
  env = { FLOWGATE_API_URL: api.url, FLOWGATE_ADMIN_TOKEN: TOKEN };
});

const SA = {
  serviceAccountId: 'sa_1',
  name: 'bot',
  capabilities: ['flows.read', 'runs.read'],
  status: 'active',
  createdAt: '2030-01-01T00:00:00.000Z',
};

describe('admin commands → HTTP requests', () => {
  it('workspaces create posts {id, name} with the operator token and prints a summary', async () => {
    const answer = { id: 'ws-acme', name: 'Acme', createdAt: '2030-01-01T00:00:00.000Z' };
    api.reply(() => ({ status: 201, json: answer }));
    const r = await runWith(['workspaces', 'create', '--id', 'ws-acme', '--name', 'Acme'], { env });
    expect(r).toEqual({
      code: 0,
      stdout: 'Created workspace ws-acme (Acme) at 2030-01-01T00:00:00.000Z\n',
      stderr: '',
    });
    expect(api.requests).toHaveLength(1);
    const req = api.requests[0];
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe('/api/admin/workspaces');
    expect(req?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(req?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req?.body ?? '')).toEqual({ id: 'ws-acme', name: 'Acme' });
  });

  it('--json prints the answer as JSON, including fields the CLI does not know', async () => {
    const answer = { id: 'ws-acme', name: 'Acme', createdAt: '2030-01-01T00:00:00.000Z', extra: { a: 1 } };
    api.reply(() => ({ status: 201, json: answer }));
    const r = await runWith(['workspaces', 'create', '--id', 'ws-acme', '--name', 'Acme', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(answer);
    // the global flag also works before the subcommand
    const r2 = await runWith(['--json', 'workspaces', 'create', '--id', 'ws-acme', '--name', 'Acme'], {
      env,
    });
    expect(JSON.parse(r2.stdout)).toEqual(answer);
  });

  it('service-accounts create sends every repeated --capability', async () => {
    api.reply(() => ({ status: 201, json: SA }));
    const r = await runWith(
      [
        'service-accounts',
        'create',
        '--workspace',
        'ws-acme',
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
    expect(r.stdout).toContain('Created service account sa_1');
    expect(r.stdout).toContain('capabilities:     flows.read,runs.read');
    expect(api.requests[0]?.method).toBe('POST');
    expect(api.requests[0]?.path).toBe('/api/workspaces/ws-acme/service-accounts');
    expect(JSON.parse(api.requests[0]?.body ?? '')).toEqual({
      name: 'bot',
      capabilities: ['flows.read', 'runs.read'],
    });
  });

  it('an unknown capability or a bad workspace id fails before any request', async () => {
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
      { env },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("option '--capability <capability>' argument 'keys.manage' is invalid");
    expect(bad.stderr).toContain('workspace.full');
    const badWs = await runWith(['service-accounts', 'list', '--workspace', 'WS/../x'], { env });
    expect(badWs.code).toBe(1);
    expect(badWs.stderr).toContain('workspace id must match');
    const missing = await runWith(['service-accounts', 'create', '--workspace', 'ws-acme', '--name', 'bot'], {
      env,
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("required option '--capability <capability>' not specified");
    expect(api.requests).toHaveLength(0);
  });

  it('service-accounts list prints a table', async () => {
    api.reply(() => ({
      status: 200,
      json: {
        items: [SA, { ...SA, serviceAccountId: 'sa_2', name: 'ops', capabilities: [], status: 'disabled' }],
      },
    }));
    const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      'ID    NAME  STATUS    CAPABILITIES\n' +
        'sa_1  bot   active    flows.read,runs.read\n' +
        'sa_2  ops   disabled  -\n',
    );
    expect(api.requests[0]?.method).toBe('GET');
    expect(api.requests[0]?.path).toBe('/api/workspaces/ws-acme/service-accounts');
    expect(api.requests[0]?.body).toBe('');
  });

  it('service-accounts update sends only the given fields and refuses an empty patch', async () => {
    api.reply(() => ({ status: 200, json: { ...SA, status: 'disabled' } }));
    const r = await runWith(
      ['service-accounts', 'update', 'sa_1', '--workspace', 'ws-acme', '--status', 'disabled'],
      { env },
    );
    expect(r.code).toBe(0);
    expect(api.requests[0]?.method).toBe('PATCH');
    expect(api.requests[0]?.path).toBe('/api/workspaces/ws-acme/service-accounts/sa_1');
    expect(JSON.parse(api.requests[0]?.body ?? '')).toEqual({ status: 'disabled' });

    const caps = await runWith(
      [
        'service-accounts',
        'update',
        'sa_1',
        '--workspace',
        'ws-acme',
        '--capability',
        'workspace.full',
        '--name',
        'n2',
      ],
      { env },
    );
    expect(caps.code).toBe(0);
    expect(JSON.parse(api.requests[1]?.body ?? '')).toEqual({ capabilities: ['workspace.full'], name: 'n2' });

    const empty = await runWith(['service-accounts', 'update', 'sa_1', '--workspace', 'ws-acme'], { env });
    expect(empty).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: invalid_request: nothing to update: give --status, --capability or --name\n',
    });
    const badStatus = await runWith(
      ['service-accounts', 'update', 'sa_1', '--workspace', 'ws-acme', '--status', 'paused'],
      { env },
    );
    expect(badStatus.code).toBe(1);
    expect(api.requests).toHaveLength(2);
  });

  it('keys create sends name and a normalised expiry and shows the key once', async () => {
    api.reply(() => ({
      status: 201,
      json: {
        serviceAccountId: 'sa_1',
        key: { keyId: 'k1', apiKey: 'fgk_k1_secretsecret', expiresAt: '2031-01-01T00:00:00.000Z' },
      },
    }));
    const r = await runWith(
      [
        'service-accounts',
        'keys',
        'create',
        'sa_1',
        '--workspace',
        'ws-acme',
        '--name',
        'ci',
        '--expires-at',
        '2031-01-01T00:00:00Z',
      ],
      { env },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      'Created key k1 for sa_1 (expires: 2031-01-01T00:00:00.000Z)\nAPI key (shown once, store it now): fgk_k1_secretsecret\n',
    );
    expect(api.requests[0]?.path).toBe('/api/workspaces/ws-acme/service-accounts/sa_1/keys');
    expect(JSON.parse(api.requests[0]?.body ?? '')).toEqual({
      name: 'ci',
      expiresAt: '2031-01-01T00:00:00.000Z',
    });

    const badTime = await runWith(
      ['service-accounts', 'keys', 'create', 'sa_1', '--workspace', 'ws-acme', '--expires-at', 'tomorrow'],
      {
        env,
      },
    );
    expect(badTime.code).toBe(1);
    expect(badTime.stderr).toContain('expected an ISO 8601 time');
    expect(api.requests).toHaveLength(1);
  });

  it('keys list and revoke address the key by path, encoded', async () => {
    api.reply((req) =>
      req.method === 'DELETE'
        ? { status: 204 }
        : {
            status: 200,
            json: {
              items: [
                {
                  keyId: 'k1',
                  name: 'ci',
                  createdAt: '2030-01-01T00:00:00.000Z',
                  expiresAt: null,
                  lastUsedAt: null,
                  revokedAt: null,
                },
              ],
            },
          },
    );
    const list = await runWith(['service-accounts', 'keys', 'list', 'sa 1', '--workspace', 'ws-acme'], {
      env,
    });
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(
      'KEY ID  NAME  CREATED                   EXPIRES  LAST USED  REVOKED\n' +
        'k1      ci    2030-01-01T00:00:00.000Z  -        -          -\n',
    );
    expect(api.requests[0]?.path).toBe('/api/workspaces/ws-acme/service-accounts/sa%201/keys');

    const revoke = await runWith(
      ['service-accounts', 'keys', 'revoke', 'sa_1', 'k/1', '--workspace', 'ws-acme'],
      { env },
    );
    expect(revoke).toEqual({ code: 0, stdout: 'Revoked key k/1\n', stderr: '' });
    expect(api.requests[1]?.method).toBe('DELETE');
    expect(api.requests[1]?.path).toBe('/api/workspaces/ws-acme/service-accounts/sa_1/keys/k%2F1');

    const revokeJson = await runWith(
      ['service-accounts', 'keys', 'revoke', 'sa_1', 'k1', '--workspace', 'ws-acme', '--json'],
      { env },
    );
    expect(JSON.parse(revokeJson.stdout)).toEqual({ serviceAccountId: 'sa_1', keyId: 'k1', revoked: true });
  });

  it('mcp-policy set sends only the given fields; lists are split and trimmed, "" clears', async () => {
    api.reply((req) => ({
      status: 200,
      json: {
        readOnly: false,
        disabledTools: [],
        allowedOrigins: [],
        allowedIps: [],
        ...JSON.parse(req.body),
      },
    }));
    const r = await runWith(
      [
        'mcp-policy',
        'set',
        '--workspace',
        'ws-acme',
        '--read-only',
        '--disabled-tools',
        'release_flow, create_flow_draft',
        '--allowed-ips',
        '',
      ],
      { env },
    );
    expect(r.code).toBe(0);
    expect(api.requests[0]?.method).toBe('PUT');
    expect(api.requests[0]?.path).toBe('/api/workspaces/ws-acme/mcp-policy');
    expect(JSON.parse(api.requests[0]?.body ?? '')).toEqual({
      readOnly: true,
      disabledTools: ['release_flow', 'create_flow_draft'],
      allowedIps: [],
    });
    expect(r.stdout).toContain('readOnly:       true');

    await runWith(['mcp-policy', 'set', '--workspace', 'ws-acme', '--no-read-only'], { env });
    expect(JSON.parse(api.requests[1]?.body ?? '')).toEqual({ readOnly: false });

    const nothing = await runWith(['mcp-policy', 'set', '--workspace', 'ws-acme'], { env });
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/^error: invalid_request: nothing to set/);
    expect(api.requests).toHaveLength(2);
  });

  it('audit passes limit and cursor as query and shows the next page hint', async () => {
    api.reply(() => ({
      status: 200,
      json: {
        items: [
          {
            id: 7,
            at: '2030-01-01T00:00:00.000Z',
            kind: 'tool',
            principalType: 'service_account',
            principalId: 'sa_1',
            keyId: 'k1',
            action: 'tools/call',
            tool: 'search_flows',
            outcome: 'ok',
          },
        ],
        nextCursor: 'abc',
      },
    }));
    const r = await runWith(['audit', '--workspace', 'ws-acme', '--limit', '5', '--cursor', 'xyz'], { env });
    expect(r.code).toBe(0);
    expect(api.requests[0]?.path).toBe('/api/workspaces/ws-acme/audit?limit=5&cursor=xyz');
    expect(r.stdout).toContain('search_flows');
    expect(r.stdout.split('\n')[0]).toBe(
      'AT                        KIND  PRINCIPAL TYPE   PRINCIPAL ID  KEY ID  ACTION      TOOL          OUTCOME',
    );
    expect(r.stdout).toContain('next page: --cursor abc\n');
    const badLimit = await runWith(['audit', '--workspace', 'ws-acme', '--limit', '0'], { env });
    expect(badLimit.code).toBe(1);
    expect(api.requests).toHaveLength(1);
  });
});

describe('connection secrets never come from argv', () => {
  const base = [
    'connections',
    'create',
    '--workspace',
    'ws-acme',
    '--name',
    'crm',
    '--type',
    'http-api',
    '--base-url',
    'https://crm.example.com',
    '--auth-type',
    'bearer',
  ];
  const answer = {
    connectionId: 'conn_1',
    name: 'crm',
    type: 'http-api',
    baseUrl: 'https://crm.example.com',
    auth: { type: 'bearer', hasSecret: true },
    status: 'active',
  };

  it('reads the secret from the named environment variable and never prints it', async () => {
    api.reply(() => ({ status: 201, json: answer }));
    const r = await runWith([...base, '--secret-env', 'CRM_TOKEN'], {
      env: { ...env, CRM_TOKEN: 's3cr3t-value' },
    });
    expect(r.code).toBe(0);
    expect(api.requests[0]?.path).toBe('/api/workspaces/ws-acme/connections');
    expect(JSON.parse(api.requests[0]?.body ?? '')).toEqual({
      name: 'crm',
      type: 'http-api',
      baseUrl: 'https://crm.example.com',
      auth: { type: 'bearer', secret: 's3cr3t-value' },
    });
    expect(r.stdout).toContain('Created connection conn_1');
    expect(r.stdout + r.stderr).not.toContain('s3cr3t-value');
  });

  it('reads the secret from stdin without the trailing newline', async () => {
    api.reply(() => ({ status: 201, json: answer }));
    const r = await runWith([...base, '--secret-stdin'], { env, stdin: 'from stdin\n' });
    expect(r.code).toBe(0);
    expect(JSON.parse(api.requests[0]?.body ?? '').auth).toEqual({ type: 'bearer', secret: 'from stdin' });
  });

  it('passes the api-key header name', async () => {
    api.reply(() => ({ status: 201, json: answer }));
    const args = base.map((a) => (a === 'bearer' ? 'api-key' : a));
    const r = await runWith([...args, '--header-name', 'X-Key', '--secret-env', 'K'], {
      env: { ...env, K: 'v' },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(api.requests[0]?.body ?? '').auth).toEqual({
      type: 'api-key',
      secret: 'v',
      headerName: 'X-Key',
    });
  });

  it('has no flag that takes the secret value', async () => {
    for (const flag of ['--secret', '--auth-secret', '--token']) {
      const r = await runWith([...base, flag, 'literal-secret'], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`unknown option '${flag}'`);
    }
    // `--secret-env` takes a variable NAME: a literal value that is not a set variable is refused, not sent
    const r = await runWith([...base, '--secret-env', 'literal-secret'], { env });
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: invalid_request: environment variable literal-secret is not set or empty\n',
    });
    expect(api.requests).toHaveLength(0);
  });

  it('refuses an empty stdin and both sources at once', async () => {
    const empty = await runWith([...base, '--secret-stdin'], { env, stdin: '\n' });
    expect(empty.stderr).toBe('error: invalid_request: standard input was empty; expected the secret\n');
    const both = await runWith([...base, '--secret-stdin', '--secret-env', 'X'], {
      env: { ...env, X: 'v' },
      stdin: 'v',
    });
    expect(both.stderr).toBe(
      'error: invalid_request: give either --secret-env or --secret-stdin, not both\n',
    );
    expect(api.requests).toHaveLength(0);
  });
});

describe('errors', () => {
  it('renders {code, message} from the server on stderr with exit 1, scrubbing the token', async () => {
    api.reply(() => ({
      status: 403,
      json: { code: 'forbidden', message: `token ${TOKEN} may not do this` },
    }));
    const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-other'], { env });
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: forbidden: token [redacted] may not do this\n',
    });
  });

  it('lists field issues of a rejected body', async () => {
    api.reply(() => ({
      status: 400,
      json: {
        code: 'invalid_request',
        message: 'invalid body',
        issues: [{ path: 'name', message: 'too long' }],
      },
    }));
    const r = await runWith(['workspaces', 'create', '--id', 'ws-acme', '--name', 'x'], { env });
    expect(r.stderr).toBe('error: invalid_request: invalid body\n  - name: too long\n');
  });

  it('a non-JSON error body becomes http_<status> without echoing the body', async () => {
    api.reply(() => ({ status: 502, text: `bad gateway ${TOKEN}` }));
    const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], { env });
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'error: http_502: the server answered HTTP 502\n' });
  });

  it('an unexpected answer shape is reported, not printed as success', async () => {
    api.reply(() => ({ status: 200, json: { nope: true } }));
    const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'error: invalid_response: GET /api/workspaces/ws-acme/service-accounts answered an unexpected shape (items)\n',
    );
  });

  it('an unreachable server is "unavailable" and names the URL', async () => {
    const closed = await startFakeApi();
    await closed.close();
    const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
      env: { ...env, FLOWGATE_API_URL: closed.url },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: unavailable: cannot reach ${closed.url} (ECONNREFUSED)\n`);
  });

  it('without any token it says which variables to set and sends nothing', async () => {
    const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
      env: { FLOWGATE_API_URL: api.url },
    });
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: unauthorized: no token: set FLOWGATE_ADMIN_TOKEN (operator) or FLOWGATE_TOKEN (workspace admin bearer)\n',
    });
    expect(api.requests).toHaveLength(0);
  });

  it('refuses a malformed API URL from the flag or the environment', async () => {
    const flag = await runWith(
      ['--api-url', 'ftp://x', 'service-accounts', 'list', '--workspace', 'ws-acme'],
      { env },
    );
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain('expected an http(s) URL');
    const fromEnv = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
      env: { ...env, FLOWGATE_API_URL: 'nope' },
    });
    expect(fromEnv.stderr).toBe('error: invalid_request: FLOWGATE_API_URL: expected an http(s) URL\n');
    expect(api.requests).toHaveLength(0);
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
    const other = await startFakeApi();
    try {
      other.reply(() => ({ status: 200, json: { items: [] } }));
      const r = await runWith(
        ['--api-url', `${other.url}/`, 'service-accounts', 'list', '--workspace', 'ws-acme'],
        { env },
      );
      expect(r).toEqual({ code: 0, stdout: '(none)\n', stderr: '' });
      expect(other.requests[0]?.path).toBe('/api/workspaces/ws-acme/service-accounts');
      expect(api.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('uses FLOWGATE_TOKEN when no operator token is set, and the operator token when both are', async () => {
    api.reply(() => ({ status: 200, json: { items: [] } }));
    await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
      env: { FLOWGATE_API_URL: api.url, FLOWGATE_TOKEN: 'ws-admin-jwt' },
    });
    expect(api.requests[0]?.headers.authorization).toBe('Bearer ws-admin-jwt');
    await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
      env: { ...env, FLOWGATE_TOKEN: 'ws-admin-jwt' },
    });
    expect(api.requests[1]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('falls back to the dev operator token for a loopback API only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fg-cli-'));
    try {
      ensurePrivateDir(join(dir, '.flowgate'));
      const { secrets } = loadOrCreateDevSecrets(join(dir, '.flowgate'));
      api.reply(() => ({ status: 200, json: { items: [] } }));
      const r = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
        env: { FLOWGATE_API_URL: api.url },
        cwd: dir,
      });
      expect(r.code).toBe(0);
      expect(api.requests[0]?.headers.authorization).toBe(`Bearer ${secrets.adminToken}`);

      const remote = await runWith(['service-accounts', 'list', '--workspace', 'ws-acme'], {
        env: { FLOWGATE_API_URL: 'https://flowgate.example.com' },
        cwd: dir,
      });
      expect(remote.stderr).toMatch(/^error: unauthorized: no token/);
      expect(api.requests).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
