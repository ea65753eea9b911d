import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bridgeCommand,
  leakedSecrets,
  ROOT,
  type ScriptedUpstream,
  startScriptedUpstream,
  unusedKey,
} from './support/stdio-bridge.js';

/**
 * `flowgate mcp stdio` as a real process under hostile input and a hostile upstream: garbage lines, a 5 MB
 * line, an HTML 502, an upstream that hangs past --timeout — stdout stays JSON-RPC only, every request gets
 * an answer with its id, stdin EOF ends the process cleanly, and no key is ever printed.
 */

const KEY = unusedKey();
let upstream: ScriptedUpstream;

beforeAll(async () => {
  upstream = await startScriptedUpstream((body, res) => {
    const msg = JSON.parse(body) as { id?: number | string; method?: string };
    if (msg.method === 'hang') return; // never answers
    if (msg.method === 'html') {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(`<html><head><title>502 Bad Gateway</title></head><body>nginx, token ${KEY}</body></html>`);
      return;
    }
    if (msg.id === undefined) {
      res.writeHead(202);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { method: msg.method } }));
  });
});

afterAll(async () => {
  await upstream?.close();
});

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runBridge(
  args: string[],
  env: Record<string, string>,
  feed: (stdin: NodeJS.WritableStream) => void,
) {
  const { command, args: argv } = bridgeCommand(upstream.url, args);
  const child = spawn(command, argv, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString('utf8');
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString('utf8');
  });
  feed(child.stdin);
  return new Promise<Exit>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('flowgate mcp stdio as a process', () => {
  it('hostile input and upstream: JSON-RPC lines only, an answer per request id, clean exit at EOF', async () => {
    const started = Date.now();
    const r = await runBridge(
      ['--workspace-id', 'ws-hostile', '--token-env-var', 'FG_KEY', '--timeout', '800'],
      { FG_KEY: KEY },
      (stdin) => {
        stdin.write('garbage that is not json\n');
        stdin.write('{"jsonrpc":"2.0","id":1,\n');
        // 5 MB request: dropped as it streams, answered with its id
        stdin.write(
          `${JSON.stringify({ jsonrpc: '2.0', id: 'huge', method: 'tools/call', params: { name: 'x', arguments: { blob: 'x'.repeat(5 * 1024 * 1024) } } })}\n`,
        );
        stdin.write('{"jsonrpc":"2.0","id":"h","method":"html"}\n');
        stdin.write('{"jsonrpc":"2.0","id":"slow","method":"hang"}\n');
        stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
        stdin.write('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
        stdin.end();
      },
    );
    expect(r.code).toBe(0);
    // the hanging request was given up after --timeout, not after the default minute
    expect(Date.now() - started).toBeLessThan(20_000);
    const lines = r.stdout.split('\n');
    expect(lines.pop()).toBe('');
    const messages = lines.map(
      (l) => JSON.parse(l) as { id: unknown; result?: unknown; error?: { code: number; message: string } },
    );
    const byId = new Map(messages.map((m) => [JSON.stringify(m.id), m]));
    expect(messages).toHaveLength(6);
    expect(messages.filter((m) => m.id === null).map((m) => m.error?.code)).toEqual([-32700, -32700]);
    expect(byId.get('"huge"')?.error).toEqual({
      code: -32600,
      message: 'Invalid Request: the line exceeds 1 MiB and was dropped',
    });
    expect(byId.get('"h"')?.error?.code).toBe(-32000);
    expect(byId.get('"h"')?.error?.message).toBe(
      'upstream answered 502: 502 Bad Gateway — the gateway or a proxy in front of it failed (HTTP 502); retry, and check the server logs',
    );
    expect(byId.get('"slow"')?.error).toMatchObject({
      code: -32001,
      message: `no answer from ${upstream.url} within 800 ms (--timeout)`,
    });
    expect(byId.get('2')).toEqual({ jsonrpc: '2.0', id: 2, result: { method: 'ping' } });
    // the oversized line never reached the upstream
    expect(upstream.bodies.some((b) => b.length > 1_000_000)).toBe(false);
    expect(r.stderr).toBe(
      `flowgate mcp stdio: bridging to ${upstream.url}/api/workspaces/ws-hostile/mcp (narrowing: none (every tool the key allows))\n`,
    );
    expect(leakedSecrets([KEY], r.stdout, r.stderr)).toEqual([]);
  });

  it('a missing key: exit 2, one line on stderr, nothing on stdout, no request', async () => {
    const before = upstream.bodies.length;
    const r = await runBridge(['--workspace-id', 'ws-hostile', '--token-env-var', 'FG_KEY'], {}, (stdin) => {
      stdin.end('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    });
    expect(r).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'error: invalid_request: $FG_KEY is not set or empty: export the workspace API key (fgk_…) or a JWT in it\n',
    });
    expect(upstream.bodies.length).toBe(before);
  });

  it('a malformed key is refused the same way, without echoing it', async () => {
    const bad = `${KEY}-with-a-tail`;
    const r = await runBridge(
      ['--workspace-id', 'ws-hostile', '--token-env-var', 'FG_KEY'],
      { FG_KEY: bad },
      (stdin) => stdin.end(),
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('$FG_KEY does not hold a Flowgate API key');
    expect(leakedSecrets([bad, KEY], r.stdout, r.stderr)).toEqual([]);
  });
});
