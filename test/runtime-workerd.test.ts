import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createDb, type DbHandle, schema } from '@flowgate/db';
import { createEmptyTestDatabase } from '@flowgate/db/testing';
import { generateEncryptionKey } from '@flowgate/secrets';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient } from './support/clients.js';
import { ADMIN_TOKEN, answer } from './support/gateway.js';
import { asRpc, mcpPost, rpc } from './support/mcp.js';
import { type CapturedProcess, spawnCaptured } from './support/process.js';
import { installFlow, SLEEP_NAP_FLOW } from './support/runs.js';

/**
 * The gateway on workerd (`pnpm serve:workerd`, the Worker bundle under Miniflare) over Postgres, migrated from Node.
 * workerd has no embedded database, so the scenario needs the Postgres run (DATABASE_URL, as in CI's Postgres job);
 * every run checks that the runner refuses to start without it. Starting runs is not covered yet: run input
 * validation compiles JSON Schemas with Ajv, which generates code, and Workers forbid code generation.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What `pnpm serve:workerd` runs (tsx's own CLI would turn the runner's clean exit on SIGTERM into 143). */
const RUNNER = ['--import', 'tsx', 'apps/gateway/scripts/serve-workerd.ts'];

/** Starts the runner; resolves with its URL once it printed the "listening" line. */
async function startWorkerd(env: Record<string, string>): Promise<{ url: string; proc: CapturedProcess }> {
  const proc = spawnCaptured(process.execPath, RUNNER, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const line = proc
      .out()
      .stdout.split('\n')
      .find((l) => l.includes('"flowgate gateway listening"'));
    if (line) return { url: (JSON.parse(line) as { url: string }).url, proc };
    const code = await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 100, 'running'))]);
    if (code !== 'running' || Date.now() > deadline) {
      proc.child.kill('SIGTERM');
      throw new Error(`serve:workerd did not start (${String(code)}): ${proc.out().stderr.slice(-2_000)}`);
    }
  }
}

it('refuses to start without DATABASE_URL (no embedded database on workerd)', {
  timeout: 60_000,
}, async () => {
  const proc = spawnCaptured(process.execPath, RUNNER, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, FLOWGATE_PORT: '0' },
  });
  expect(await proc.exited).toBe(1);
  expect(proc.out().stderr).toBe(
    'flowgate: DATABASE_URL: required on workerd (the embedded database runs on Node only)\n',
  );
});

/** Whether a process of this id is still there (`kill` with signal 0 only checks). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it('stops, workerd with it, when what started it is killed outright (no signal reaches the runner)', {
  timeout: 90_000,
}, async () => {
  // A parent that starts the runner on pipes, as the test harness does, and says the runner's pid once it listens.
  const parent = spawnCaptured(
    process.execPath,
    [
      '-e',
      `const c = require('node:child_process').spawn(process.execPath, ${JSON.stringify(RUNNER)}, { stdio: 'pipe' });
       c.stdout.on('data', (d) => { if (String(d).includes('gateway listening')) console.log('runner ' + c.pid); });
       c.stderr.pipe(process.stderr);`,
    ],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        FLOWGATE_PORT: '0',
        FLOWGATE_ADMIN_TOKEN: ADMIN_TOKEN,
        FLOWGATE_ENCRYPTION_KEY: generateEncryptionKey(),
        // Never connected: /healthz, all the runner asks before it listens, reads no database.
        DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none',
      },
    },
  );
  const deadline = Date.now() + 60_000;
  let runner = 0;
  while (!runner) {
    runner = Number(/runner (\d+)/.exec(parent.out().stdout)?.[1] ?? 0);
    if (Date.now() > deadline)
      throw new Error(`the runner did not start: ${parent.out().stderr.slice(-2_000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // workerd and anything else the runner started (Linux names a process's children in /proc).
  const children = readFileSync(`/proc/${runner}/task/${runner}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .map(Number);
  expect(children.length).toBeGreaterThan(0);
  parent.child.kill('SIGKILL');
  await parent.exited;
  const gone = Date.now() + 10_000;
  while ([runner, ...children].some(alive) && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
  expect([runner, ...children].filter(alive)).toEqual([]);
});

const baseUrl = process.env.DATABASE_URL;
if (baseUrl) {
  describe('serve:workerd on Postgres with a Node worker', () => {
    const WS = 'ws-workerd';
    const encryptionKey = generateEncryptionKey();
    let database: { url: string; drop(): Promise<void> };
    let db: DbHandle;
    let gateway: { url: string; proc: CapturedProcess };
    let apiKey: string;

    const admin = async (method: string, path: string, body?: unknown) =>
      answer(
        await fetch(`${gateway.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${ADMIN_TOKEN}`,
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        }),
      );

    beforeAll(async () => {
      database = await createEmptyTestDatabase(baseUrl);
      // `flowgate db migrate`: migrations run from Node.
      db = await createDb({ url: database.url, maxConnections: 4 });
      await db.migrate();
      gateway = await startWorkerd({
        DATABASE_URL: database.url,
        FLOWGATE_ENCRYPTION_KEY: encryptionKey,
        FLOWGATE_ADMIN_TOKEN: ADMIN_TOKEN,
        FLOWGATE_HOST: '127.0.0.1',
        FLOWGATE_PORT: '0',
        FLOWGATE_LOG_LEVEL: 'warn',
      });
    }, 120_000);

    afterAll(async () => {
      if (gateway) {
        gateway.proc.child.kill('SIGTERM');
        await gateway.proc.exited;
      }
      await db?.close();
      await database?.drop();
    });

    it('answers /healthz and /readyz (the migrations the Node side applied)', async () => {
      expect((await answer(await fetch(`${gateway.url}/healthz`))).json).toMatchObject({ status: 'ok' });
      const ready = await answer(await fetch(`${gateway.url}/readyz`));
      expect([ready.status, ready.json]).toEqual([200, { status: 'ready', rateLimitStore: 'memory' }]);
    });

    it('creates a workspace and a service account key through the admin API', async () => {
      expect((await admin('POST', '/api/admin/workspaces', { id: WS, name: WS })).status).toBe(201);
      const sa = await admin('POST', `/api/workspaces/${WS}/service-accounts`, {
        name: 'agent',
        capabilities: ['workspace.full'],
      });
      expect(sa.status).toBe(201);
      const id = (sa.json as { serviceAccountId: string }).serviceAccountId;
      const key = await admin('POST', `/api/workspaces/${WS}/service-accounts/${id}/keys`, {});
      expect(key.status).toBe(201);
      apiKey = (key.json as { key: { apiKey: string } }).key.apiKey;
      await installFlow({ url: gateway.url, admin }, WS, 'nap', SLEEP_NAP_FLOW);
    });

    it('initializes and lists tools over Streamable HTTP with the key', async () => {
      const session = await connectClient('sdk-v2', `${gateway.url}/api/workspaces/${WS}/mcp`, {
        token: apiKey,
      });
      try {
        const names = (await session.listTools()).map((t) => t.name);
        expect(names).toContain('call_flow_tool');
        expect(names).toContain('search_flow_tools');
      } finally {
        await session.close();
      }
    });

    it('audits a refused call_flow_tool after the response (waitUntil; no timer in the Worker)', async () => {
      const res = asRpc(
        await mcpPost(`${gateway.url}/api/workspaces/${WS}/mcp`, {
          token: apiKey,
          protocolVersion: '2025-11-25',
          body: rpc('tools/call', {
            name: 'call_flow_tool',
            arguments: { flow_slug: 'missing', tool_name: 'take_nap', input: {} },
          }),
        }),
      );
      expect(res.result?.isError).toBe(true);
      const deadline = Date.now() + 5_000;
      let actions: string[] = [];
      while (Date.now() < deadline) {
        const res = await admin('GET', `/api/workspaces/${WS}/audit?limit=50`);
        actions = (res.json as { items: Array<{ action: string }> }).items.map((i) => i.action);
        if (actions.includes('call_flow_tool')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(actions).toContain('call_flow_tool');
    });

    it('has no drain path for anyone but its runner (a deployed Worker has no token: the app answers 404)', async () => {
      for (const authorization of [undefined, 'Bearer x', `Bearer ${'a'.repeat(43)}`]) {
        const res = await answer(
          await fetch(`${gateway.url}/__flowgate/drain`, authorization ? { headers: { authorization } } : {}),
        );
        expect(res.status).toBe(404);
        expect(res.json).toMatchObject({ code: 'not_found' });
      }
    });

    it('stops on SIGTERM once the audit entries of answered calls are written (workerd is killed on dispose)', async () => {
      const reasons = ['drained 1', 'drained 2', 'drained 3'];
      let exit: Promise<number | null> | undefined;
      // The table locked against writes while the calls are answered and SIGTERM arrives: their entries, written
      // after each response (waitUntil), are still waiting when the runner is told to stop.
      await db.db.transaction(async (tx) => {
        await tx.execute(sql`lock table audit_entries in exclusive mode`);
        for (const reason of reasons) {
          const res = asRpc(
            await mcpPost(`${gateway.url}/api/workspaces/${WS}/mcp`, {
              token: apiKey,
              protocolVersion: '2025-11-25',
              body: rpc('tools/call', { name: 'get_workspace_context', arguments: {}, _meta: { reason } }),
            }),
          );
          expect(res.result?.content).toBeDefined();
          expect(res.result?.isError).toBeUndefined();
        }
        gateway.proc.child.kill('SIGTERM');
        exit = gateway.proc.exited;
        await new Promise((r) => setTimeout(r, 500));
      });
      expect(await exit).toBe(0);
      const rows = await db.db.select().from(schema.auditEntries);
      expect(
        rows
          .filter((r) => r.reason?.startsWith('drained'))
          .map((r) => r.reason)
          .sort(),
      ).toEqual(reasons);
    });
  });
}
