import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../cli-io.js';
import { runCli } from '../program.js';
import { type FakeUpstream, jsonRpcEcho, startUpstream } from './test-upstream.js';

const KEY_SECRET = 'q'.repeat(43);
const KEY = `fgk_AbCdEfGh12345678_${KEY_SECRET}`;
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl';

let up: FakeUpstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
});
beforeEach(() => {
  up.requests.length = 0;
  up.handle(jsonRpcEcho);
});

/** `flowgate mcp stdio …` in-process, with stdin fed from `input` and ended. */
async function stdio(args: string[], env: Record<string, string>, input = '') {
  let stdout = '';
  let stderr = '';
  const stdin = new PassThrough();
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env,
    cwd: '/nonexistent-flowgate-test-cwd',
    readStdin: async () => '',
    stdin,
  };
  stdin.end(input);
  const code = await runCli(['--api-url', up.url, 'mcp', 'stdio', '--workspace', 'ws-acme', ...args], io);
  for (const text of [stdout, stderr]) {
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(KEY_SECRET);
  }
  return { code, stdout, stderr };
}

describe('mcp stdio: refusals before any network call (exit 2, never the value)', () => {
  it.each([
    ['unset', {}, '$FG_KEY is not set or empty: export the workspace API key (fgk_…) or a JWT in it'],
    ['empty', { FG_KEY: '' }, '$FG_KEY is not set or empty'],
    ['malformed', { FG_KEY: 'fgk_short_secret' }, '$FG_KEY does not hold a Flowgate API key'],
    ['truncated', { FG_KEY: KEY.slice(0, -1) }, '$FG_KEY does not hold a Flowgate API key'],
    ['with whitespace', { FG_KEY: `${KEY}\n` }, '$FG_KEY has leading or trailing whitespace'],
    ['with the scheme', { FG_KEY: `Bearer ${KEY}` }, '$FG_KEY starts with "Bearer "'],
    ['a JWT without signature', { FG_KEY: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1In0.' }, '$FG_KEY does not hold'],
  ])('%s key', async (_label, env, message) => {
    const r = await stdio(['--token-env-var', 'FG_KEY'], env, '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`error: invalid_request: ${message}`);
    expect(up.requests).toHaveLength(0);
  });

  it('an unknown toolset or tool, with the valid names', async () => {
    const r = await stdio(
      ['--token-env-var', 'FG_KEY', '--toolsets', 'read,bogus', '--exclude-tools', 'nuke'],
      {
        FG_KEY: KEY,
      },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--toolsets: unknown "bogus"; valid: all, context, read');
    expect(r.stderr).toContain('--exclude-tools: unknown "nuke"; valid: get_workspace_context');
    expect(up.requests).toHaveLength(0);
  });

  it('a variable name that is not one', async () => {
    const r = await stdio(['--token-env-var', 'A-B'], { 'A-B': KEY });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--token-env-var must be an environment variable name');
  });
});

describe('mcp stdio: running', () => {
  it('bridges until stdin ends, sends the flags as X-MCP-* headers, and exits 0', async () => {
    const r = await stdio(
      [
        '--token-env-var',
        'FG_KEY',
        '--read-only',
        '--toolsets',
        'read',
        '--toolsets',
        'feedback',
        '--tools',
        'send_feedback',
        '--exclude-tools',
        'check_connections',
      ],
      { FG_KEY: KEY },
      '{"jsonrpc":"2.0","id":1,"method":"ping"}\nnot json\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
    );
    expect(r.code).toBe(0);
    // answers arrive as they complete: the local parse error needs no round trip
    expect(r.stdout.endsWith('\n')).toBe(true);
    expect(r.stdout.trimEnd().split('\n').sort()).toEqual([
      '{"jsonrpc":"2.0","id":1,"result":{"echo":"ping"}}',
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the input line is not valid JSON"}}',
    ]);
    expect(r.stderr).toBe(
      `flowgate mcp stdio: bridging to ${up.url}/api/workspaces/ws-acme/mcp (narrowing: read-only; toolsets read,feedback; tools send_feedback; excluding check_connections)\n`,
    );
    expect(up.requests).toHaveLength(2);
    expect(up.requests[0]?.headers).toMatchObject({
      authorization: `Bearer ${KEY}`,
      'x-mcp-readonly': 'true',
      'x-mcp-toolsets': 'read,feedback',
      'x-mcp-tools': 'send_feedback',
      'x-mcp-exclude-tools': 'check_connections',
    });
  });

  it('accepts a JWT', async () => {
    const r = await stdio(['--token-env-var', 'JWT'], { JWT }, '{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    expect(r.code).toBe(0);
    expect(up.requests[0]?.headers.authorization).toBe(`Bearer ${JWT}`);
  });

  it('--timeout is bounded', async () => {
    const r = await stdio(['--token-env-var', 'FG_KEY', '--timeout', '5'], { FG_KEY: KEY });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('expected milliseconds between 100 and 3600000');
  });
});

describe('mcp stdio: plain http:// only to this machine', () => {
  /** Runs the bridge against `apiUrl` with a fetch that records where it would have sent the key. */
  async function against(apiUrl: string, extra: string[] = []) {
    const sentTo: string[] = [];
    let stderr = '';
    const stdin = new PassThrough();
    const io: CliIo = {
      stdout: () => undefined,
      stderr: (t) => {
        stderr += t;
      },
      env: { FG_KEY: KEY },
      cwd: '/nonexistent-flowgate-test-cwd',
      readStdin: async () => '',
      stdin,
      fetch: async (url) => {
        sentTo.push(String(url));
        return new Response('{"jsonrpc":"2.0","id":1,"result":{}}', {
          status: 200,
          headers: { 'content-type': 'application/json' },
        });
      },
    };
    stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    const code = await runCli(
      ['--api-url', apiUrl, 'mcp', 'stdio', '--workspace', 'ws-acme', '--token-env-var', 'FG_KEY', ...extra],
      io,
    );
    expect(stderr).not.toContain(KEY_SECRET);
    return { code, stderr, sentTo };
  }

  it.each([
    'http://gateway.example.com',
    'http://10.0.0.5:8787',
    'http://[2001:db8::1]:8787',
    'http://localhost.evil.test',
  ])('refuses %s with exit 2 before sending anything', async (apiUrl) => {
    const r = await against(apiUrl);
    expect(r.code).toBe(2);
    expect(r.sentTo).toEqual([]);
    expect(r.stderr).toBe(
      `error: invalid_request: refusing to send the bearer token over plain http:// to ${new URL(apiUrl).host}, which is not this machine: use an https:// --api-url, or pass --allow-insecure-http if the network to it is trusted\n`,
    );
  });

  it.each([
    'https://gateway.example.com',
    'http://127.0.0.1:8787',
    'http://127.8.9.10',
    'http://localhost:8787',
    'http://[::1]:8787',
    'http://[::ffff:127.0.0.1]:8787',
  ])('sends to %s', async (apiUrl) => {
    const r = await against(apiUrl);
    expect(r.code).toBe(0);
    expect(r.sentTo).toEqual([
      `${apiUrl.replace(/\/$/, '')}/api/workspaces/ws-acme/mcp`.replace(
        '[::ffff:127.0.0.1]',
        '[::ffff:7f00:1]',
      ),
    ]);
  });

  it('sends over plain http:// to another host with --allow-insecure-http', async () => {
    const r = await against('http://gateway.example.com', ['--allow-insecure-http']);
    expect(r.code).toBe(0);
    expect(r.sentTo).toEqual(['http://gateway.example.com/api/workspaces/ws-acme/mcp']);
  });
});
