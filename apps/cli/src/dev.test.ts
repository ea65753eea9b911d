import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from './admin-client.js';
import type { CliIo } from './cli-io.js';
import { readDevSecrets } from './data-dir.js';
import { type DevSession, renderDevBanner, startDev } from './dev.js';
import { DEMO_WORKSPACE_ID } from './seed.js';

// `flowgate dev` in-process on a fresh data directory: the demo must work as the banner says it does.
let dir: string;
let session: DevSession;
let banner: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fg-dev-'));
  const io: CliIo = {
    stdout: () => {},
    stderr: () => {},
    env: { FLOWGATE_DATA_DIR: join(dir, 'data'), FLOWGATE_LOG_LEVEL: 'silent' },
    cwd: dir,
    readStdin: async () => '',
  };
  session = await startDev({ port: 0 }, io);
  banner = renderDevBanner(session, dir);
}, 120_000);

afterAll(async () => {
  await session?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const bash = (script: string) =>
  new Promise<string>((resolve, reject) =>
    execFile('bash', ['-c', script], { timeout: 30_000 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    ),
  );

describe('flowgate dev', () => {
  it('every demo connection, the stand-in LLM included, passes its own health check', async () => {
    const token = readDevSecrets(session.dataDir)?.adminToken;
    const client = new AdminClient({ apiUrl: session.gateway.url, token });
    const { items } = await client.listConnections(DEMO_WORKSPACE_ID, { limit: 50 });
    expect(items.some((c) => c.type === 'llm-provider')).toBe(true);
    for (const conn of items) {
      const check = await client.checkConnection(DEMO_WORKSPACE_ID, conn.connectionId);
      // 200 and no message: the LLM answers its model list, not merely "reachable"; the MCP server its tool list.
      expect([conn.name, check.status, check.httpStatus, check.message]).toEqual([
        conn.name,
        'healthy',
        conn.type === 'secret' || conn.type === 'mcp-server' ? null : 200,
        conn.type === 'secret' ? 'secret is stored' : null,
      ]);
      if (conn.type === 'mcp-server') {
        expect(check.mcp).toEqual({
          protocolVersion: '2026-07-28',
          serverName: 'flowgate-demo-docs',
          toolCount: 2,
        });
      }
    }
    expect(items.map((c) => c.type)).toContain('mcp-server');
  });

  it('says which key can run flows, and FLOWGATE_TOKEN as printed runs one', async () => {
    expect(banner).toMatch(/^ {2}demo-readonly +fgk_\S+ +\(flows\.read.*\) — read-only, cannot run flows$/m);
    expect(banner).toMatch(/^ {2}demo-full +fgk_\S+ +\(workspace\.full\) — can run flows$/m);
    expect(banner).toContain('Put the demo-full key in FLOWGATE_TOKEN: it can run flows');
    expect(banner).toContain('For an agent that should only look, use the demo-readonly key instead');
    // The first export line is the one a newcomer pastes; the printed configs all use ${FLOWGATE_TOKEN}.
    const exportLine = banner.split('\n').find((l) => l.startsWith('  export FLOWGATE_TOKEN=')) ?? '';
    const exampleCall = (banner.split('\n').findLast((l) => l.startsWith("    -d '")) ?? '').slice(
      "    -d '".length,
      -1,
    );
    expect(JSON.parse(exampleCall)).toMatchObject({
      method: 'tools/call',
      params: { name: 'call_flow_tool' },
    });
    const token = await bash(`${exportLine}\nprintf %s "$FLOWGATE_TOKEN"`);
    expect(token).toBe(session.credentials.accounts.find((a) => a.name === 'demo-full')?.apiKey);
    const res = await fetch(session.credentials.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      // The banner's own example call, as printed: what a newcomer pastes is what runs.
      body: exampleCall,
    });
    const rpc = (await res.json()) as {
      result: { isError?: boolean; structuredContent: { run: { status: string } } };
    };
    expect(rpc.result.isError).toBeFalsy();
    expect(rpc.result.structuredContent.run.status).toBe('completed');
  });
});
