import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * End to end: `flowgate dev` as a user runs it — a real process, the embedded database in a fresh data
 * directory, the demo workspace seeded through the admin API — then a restart on the same directory.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const dataRoot = mkdtempSync(join(tmpdir(), 'fg-cli-dev-'));
const dataDir = join(dataRoot, 'data');
const children = new Set<ChildProcess>();

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dataRoot, { recursive: true, force: true });
});

interface DevProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  stop(): Promise<{ code: number | null; output: string }>;
}

/** The banner's console link: a one-time code that a browser trades for a session (and only once). */
async function expectConsoleLinkSignsIn(out: string, url: string): Promise<void> {
  expect(out).toContain(`console:       ${url}/console`);
  const link = /sign in once: {2}(\S+)/.exec(out)?.[1] ?? '';
  expect(link.startsWith(`${url}/console/sign-in?code=`)).toBe(true);
  const trade = async () => {
    const page = await fetch(link);
    expect(page.status).toBe(200);
    const formCookie = (page.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
    const form = /name="_form" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const code = new URL(link).searchParams.get('code') ?? '';
    return fetch(`${url}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: formCookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _form: form, code }).toString(),
    });
  };
  const first = await trade();
  expect(first.status).toBe(303);
  expect(first.headers.getSetCookie().some((c) => c.startsWith('fg_console=') && /HttpOnly/.test(c))).toBe(
    true,
  );
  expect((await trade()).status).toBe(401);
}

async function startDev(): Promise<DevProcess> {
  const env: Record<string, string | undefined> = { ...process.env, FLOWGATE_DATA_DIR: dataDir };
  // The dev command must generate its own operator token; none may leak in from the test environment.
  delete env.FLOWGATE_ADMIN_TOKEN;
  delete env.FLOWGATE_TOKEN;
  delete env.FLOWGATE_LOG_LEVEL;
  const child = spawn(TSX, ['apps/cli/src/main.ts', 'dev', '--port', '0'], { cwd: ROOT, env, stdio: 'pipe' });
  children.add(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev did not start in time:\n${out}`)), 90_000);
    const check = () => {
      if (out.includes('Press Ctrl+C to stop.')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`dev exited early with ${code}:\n${out}`));
    });
  });
  const url = /Flowgate dev server: (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
  if (!url) throw new Error(`no URL in output:\n${out}`);
  return {
    child,
    url,
    output: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      const code = await exited;
      children.delete(child);
      return { code, output: out };
    },
  };
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
const mode = (path: string) => statSync(path).mode & 0o777;

interface Credentials {
  workspaceId: string;
  mcpUrl: string;
  accounts: Array<{
    name: string;
    serviceAccountId: string;
    keyId: string;
    apiKey: string;
    capabilities: string[];
  }>;
}

function initialize(url: string, token: string) {
  return fetch(`${url}/api/workspaces/ws-demo/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'cli-dev-test', version: '1' },
      },
    }),
  });
}

/**
 * Pastes the printed "run an example flow" command into a shell, as a newcomer would, and returns what the
 * enrich-company run answered (it calls the stand-in API `dev` serves on loopback).
 */
async function runPrintedExample(out: string) {
  const block = out.split('Run an example flow over MCP')[1]?.split('\n\n')[0] ?? '';
  const command = block.split('\n').slice(1).join('\n');
  expect(command).toMatch(/^ {2}curl -sS http:\/\/127\.0\.0\.1:\d+\/api\/workspaces\/ws-demo\/mcp/);
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile('bash', ['-c', command], { cwd: ROOT, timeout: 30_000 }, (error, so) =>
      error ? reject(error) : resolve(so),
    ),
  );
  const rpc = JSON.parse(stdout) as {
    result: { isError?: boolean; structuredContent: { run: { status: string }; result: { value: unknown } } };
  };
  return rpc.result;
}

const ACME_PROFILE = {
  found: true,
  name: 'Acme',
  domain: 'acme.com',
  industry: 'Software',
  employees: 160,
  country: 'US',
};

async function listAccounts(url: string, token: string) {
  return fetch(`${url}/api/workspaces/ws-demo/service-accounts`, {
    headers: { authorization: `Bearer ${token}` },
  });
}

describe('flowgate dev', () => {
  let firstKeys: Credentials['accounts'] = [];

  it('first run: private data dir, seeded demo workspace, keys printed once and saved 0600', {
    timeout: 180_000,
  }, async () => {
    const dev = await startDev();
    try {
      expect(mode(dataDir)).toBe(0o700);
      const credsPath = join(dataDir, 'demo-credentials.json');
      const secretsPath = join(dataDir, 'dev-secrets.json');
      expect(mode(credsPath)).toBe(0o600);
      expect(mode(secretsPath)).toBe(0o600);
      const creds = readJson(credsPath) as unknown as Credentials;
      const adminToken = readJson(secretsPath).adminToken as string;

      expect(creds.workspaceId).toBe('ws-demo');
      expect(creds.mcpUrl).toBe(`${dev.url}/api/workspaces/ws-demo/mcp`);
      expect(creds.accounts.map((a) => a.name)).toEqual(['demo-readonly', 'demo-full']);
      expect(creds.accounts[0]?.capabilities).toEqual([
        'flows.read',
        'runs.read',
        'resources.read',
        'installations.read',
        'connections.read',
        'steps.read',
        'feedback.send',
      ]);
      expect(creds.accounts[1]?.capabilities).toEqual(['workspace.full']);
      firstKeys = creds.accounts;

      const out = dev.output();
      expect(out).toContain(`MCP endpoint:  ${dev.url}/api/workspaces/ws-demo/mcp`);
      for (const a of creds.accounts) {
        expect(a.apiKey).toMatch(/^fgk_[A-Za-z0-9]+_[A-Za-z0-9_-]{32,}$/);
        // printed exactly once
        expect(out.split(a.apiKey).length - 1).toBe(1);
      }
      // client snippets reference the variable, never the operator token
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's variable syntax, printed literally
      expect(out).toContain('"Authorization": "Bearer ${FLOWGATE_TOKEN}"');
      expect(out).toContain('-H "Authorization: Bearer $FLOWGATE_TOKEN"');
      expect(out).not.toContain(adminToken);

      await expectConsoleLinkSignsIn(out, dev.url);

      const example = await runPrintedExample(out);
      expect(example.isError).toBeFalsy();
      expect(example.structuredContent.run.status).toBe('completed');
      expect(example.structuredContent.result.value).toEqual(ACME_PROFILE);

      const list = await listAccounts(dev.url, adminToken);
      expect(list.status).toBe(200);
      const body = (await list.json()) as { items: Array<{ name: string; status: string }> };
      expect(body.items.map((i) => i.name).sort()).toEqual(['demo-full', 'demo-readonly']);
      expect(body.items.every((i) => i.status === 'active')).toBe(true);

      for (const a of creds.accounts) {
        const res = await initialize(dev.url, a.apiKey);
        expect(res.status).toBe(200);
        const rpc = (await res.json()) as { result?: { protocolVersion?: string } };
        expect(rpc.result?.protocolVersion).toBe('2025-11-25');
      }
      // a demo key is a real, authenticated principal without admin rights; a made-up key is not a principal
      expect((await listAccounts(dev.url, creds.accounts[1]?.apiKey ?? '')).status).toBe(403);
      expect((await listAccounts(dev.url, 'fgk_nope_0000000000000000000000000000000000000000')).status).toBe(
        401,
      );
    } finally {
      const stopped = await dev.stop();
      expect(stopped.code).toBe(0);
      expect(stopped.output).toContain('Stopped.');
    }
  });

  it('second run: reuses data, prints no keys, and the first run keys still work', {
    timeout: 180_000,
  }, async () => {
    expect(firstKeys).toHaveLength(2);
    const dev = await startDev();
    try {
      const out = dev.output();
      for (const a of firstKeys) expect(out).not.toContain(a.apiKey);
      expect(out).toContain(`they are in ${join(dataDir, 'demo-credentials.json')} (not shown again)`);
      const creds = readJson(join(dataDir, 'demo-credentials.json')) as unknown as Credentials;
      expect(creds.accounts.map((a) => [a.keyId, a.apiKey])).toEqual(
        firstKeys.map((a) => [a.keyId, a.apiKey]),
      );
      expect(creds.mcpUrl).toBe(`${dev.url}/api/workspaces/ws-demo/mcp`);

      for (const a of firstKeys) expect((await initialize(dev.url, a.apiKey)).status).toBe(200);
      // the demo connections followed this run's stand-in API
      expect((await runPrintedExample(out)).structuredContent.result.value).toEqual(ACME_PROFILE);

      const adminToken = readJson(join(dataDir, 'dev-secrets.json')).adminToken as string;
      const body = (await (await listAccounts(dev.url, adminToken)).json()) as {
        items: Array<{ name: string }>;
      };
      expect(body.items).toHaveLength(2);
      // and no extra keys were made for either account
      for (const a of firstKeys) {
        const keys = await fetch(
          `${dev.url}/api/workspaces/ws-demo/service-accounts/${a.serviceAccountId}/keys`,
          {
            headers: { authorization: `Bearer ${adminToken}` },
          },
        );
        const list = (await keys.json()) as { items: Array<{ keyId: string }> };
        expect(list.items.map((k) => k.keyId)).toEqual([a.keyId]);
      }
    } finally {
      expect((await dev.stop()).code).toBe(0);
    }
  });
});
