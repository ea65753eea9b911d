import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serveConfig } from './serve.js';
import { runWith } from './testing.js';

// One CLI vocabulary: the same workspace flag, port flag, token default and error shape on every command.

const KEY = `fgk_AbCdEfGh12345678_${'q'.repeat(43)}`;
const noNetwork = async (): Promise<Response> => {
  throw new Error('no network in this test');
};

describe('--workspace everywhere, --workspace-id kept as an alias', () => {
  const config = (...flags: string[]) =>
    runWith(['--api-url', 'https://flows.example.com', 'mcp', 'config', ...flags, '--provider', 'claude'], {
      fetch: noNetwork,
    });

  it('mcp config takes --workspace, and --workspace-id gives the same entry', async () => {
    const primary = await config('--workspace', 'ws-acme');
    const alias = await config('--workspace-id', 'ws-acme');
    expect(primary.code).toBe(0);
    expect(JSON.parse(primary.stdout).mcpServers['flowgate-ws-acme'].url).toBe(
      'https://flows.example.com/api/workspaces/ws-acme/mcp',
    );
    expect(alias).toEqual(primary);
  });

  it('the alias goes through the same parser, and two different workspaces are refused', async () => {
    expect(await config('--workspace-id', 'WS_ACME')).toEqual({
      code: 1,
      stdout: '',
      stderr:
        "error: invalid_request: option '--workspace-id <id>' argument 'WS_ACME' is invalid. workspace id must match ^[a-z0-9][a-z0-9-]{1,62}$\n",
    });
    expect(await config('--workspace', 'ws-a', '--workspace-id', 'ws-b')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: invalid_request: --workspace and --workspace-id name different workspaces\n',
    });
  });

  it('without either it says which flag is missing, in the one error format', async () => {
    expect(await config()).toEqual({
      code: 1,
      stdout: '',
      stderr: "error: invalid_request: required option '--workspace <id>' not specified\n",
    });
  });

  it('admin commands take the alias too, and mcp stdio and doctor take --workspace', async () => {
    const sent: string[] = [];
    const fetch = async (input: RequestInfo | URL) => {
      sent.push(String(input));
      return Response.json({ items: [] });
    };
    const r = await runWith(['service-accounts', 'list', '--workspace-id', 'ws-acme'], {
      env: {
        FLOWGATE_ADMIN_TOKEN: 'op_token_that_is_long_enough_000',
        FLOWGATE_API_URL: 'http://127.0.0.1:9',
      },
      fetch,
    });
    expect(r).toEqual({ code: 0, stdout: '(none)\n', stderr: '' });
    expect(sent).toEqual(['http://127.0.0.1:9/api/workspaces/ws-acme/service-accounts']);
    for (const command of ['stdio', 'doctor']) {
      const help = await runWith(['mcp', command, '--help']);
      expect(help.stdout).toContain('--workspace <id>');
      expect(help.stdout).not.toContain('--workspace-id');
    }
  });
});

describe('mcp doctor and mcp stdio read the key from FLOWGATE_TOKEN by default, like mcp config', () => {
  it('doctor without --token-env-var uses $FLOWGATE_TOKEN', async () => {
    const r = await runWith(
      ['--json', 'mcp', 'doctor', '--workspace', 'ws-acme', '--api-url', 'http://127.0.0.1:9'],
      {
        env: { FLOWGATE_TOKEN: KEY },
        fetch: noNetwork,
      },
    );
    const report = JSON.parse(r.stdout) as {
      token: { envVar: string; kind: string };
      failure: { stage: string };
    };
    expect(report.token).toMatchObject({ envVar: 'FLOWGATE_TOKEN', kind: 'api-key' });
    // It got past reading the key: the failure is the (absent) network, not the configuration.
    expect(report.failure.stage).toBe('connect');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^error: doctor_failed: connect stage: cannot reach the Flowgate API at http:\/\/127\.0\.0\.1:9 /,
    );
    expect(r.stdout + r.stderr).not.toContain(KEY);
  });

  it('stdio without --token-env-var names $FLOWGATE_TOKEN when it is unset', async () => {
    const r = await runWith(['mcp', 'stdio', '--workspace', 'ws-acme'], { fetch: noNetwork });
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'error: invalid_request: $FLOWGATE_TOKEN is not set or empty: export the workspace API key (fgk_…) or a JWT in it\n',
    });
  });
});

describe('one error format for usage errors', () => {
  it('an unknown option or command is `error: invalid_request: …`, printed once', async () => {
    expect(await runWith(['audit', '--workspace', 'ws-acme', '--bogus'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "error: invalid_request: unknown option '--bogus'\n",
    });
    const unknown = await runWith(['servce']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("error: invalid_request: unknown command 'servce'\n(Did you mean serve?)\n");
  });
});

describe('serve --port, like dev', () => {
  it('wins over FLOWGATE_PORT; without it the variable (or 8787) applies', () => {
    const io = { env: { FLOWGATE_PORT: '8000' }, cwd: '/srv' };
    expect(serveConfig({ worker: true, port: 9123 }, io).port).toBe(9123);
    expect(serveConfig({ worker: true }, io).port).toBe(8000);
    expect(serveConfig({ worker: true }, { env: {}, cwd: '/srv' }).port).toBe(8787);
  });

  it('is parsed like dev --port', async () => {
    expect(await runWith(['serve', '--port', '70000'])).toEqual({
      code: 1,
      stdout: '',
      stderr:
        "error: invalid_request: option '--port <port>' argument '70000' is invalid. expected a port number 0-65535\n",
    });
  });
});

describe('mcp init --write under pnpm', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fg-init-cwd-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes into the directory the user ran it from (INIT_CWD), not the checkout pnpm switched to', async () => {
    const user = join(dir, 'my-project');
    const checkout = join(dir, 'flowgate');
    mkdirSync(user);
    mkdirSync(checkout);
    const r = await runWith(
      [
        '--api-url',
        'https://flows.example.com',
        'mcp',
        'init',
        '--workspace',
        'ws-acme',
        '--provider',
        'claude',
        '--write',
      ],
      { env: { HOME: dir, INIT_CWD: user }, cwd: checkout, fetch: noNetwork },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Wrote server flowgate-ws-acme to ${join(user, '.mcp.json')}\n`);
    expect(existsSync(join(checkout, '.mcp.json'))).toBe(false);
    expect(JSON.parse(readFileSync(join(user, '.mcp.json'), 'utf8')).mcpServers['flowgate-ws-acme'].url).toBe(
      'https://flows.example.com/api/workspaces/ws-acme/mcp',
    );
  });
});
