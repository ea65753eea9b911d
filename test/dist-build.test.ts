import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDist } from '../scripts/build-dist.js';
import { spawnCaptured } from './support/process.js';

/**
 * The production bundle (`pnpm build:dist`) built outside the checkout, so nothing resolves from the repository's
 * node_modules, then `node flowgate.mjs serve` on a new embedded database: the child that creates the cluster, the
 * migrations and PGlite's wasm files must all be found from the bundle; the discovery card is inside it.
 */

const root = mkdtempSync(join(tmpdir(), 'fg-dist-'));
const TOKEN = 'dist-test-operator-token-0123456789';

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

async function admin(url: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Record<string, unknown>;
}

describe('pnpm build:dist', () => {
  it('bundles a CLI that serves tools/list on a new embedded database under plain node', {
    timeout: 90_000,
  }, async () => {
    const built = await buildDist({ outDir: join(root, 'dist') });
    expect(built.cli).toBe(join(root, 'dist', 'bin', 'flowgate.mjs'));
    for (const file of ['bin/embedded-init.mjs', 'bin/pglite-worker.mjs', 'migrations/meta/_journal.json'])
      expect(existsSync(join(root, 'dist', file))).toBe(true);
    // The discovery card is imported as a module: the bundle carries it, no file next to it.
    expect(existsSync(join(root, 'dist', 'bin', 'server-card.json'))).toBe(false);
    // V8 keeps each module's source for the life of the process, as a two-byte string once it holds one character
    // beyond Latin-1: the bundled modules hold none (no comments; esbuild escapes strings to ASCII).
    const bundled = readdirSync(join(root, 'dist', 'bin')).filter((f) =>
      /^(chunk-.+|flowgate)\.mjs$/.test(f),
    );
    expect(bundled.length).toBeGreaterThan(1);
    for (const file of bundled) {
      const wide = /[\u0100-\uffff]/.exec(readFileSync(join(root, 'dist', 'bin', file), 'utf8'));
      expect(wide?.[0], file).toBeUndefined();
    }

    const env: Record<string, string | undefined> = {
      ...process.env,
      FLOWGATE_PORT: '0',
      FLOWGATE_HOST: '127.0.0.1',
      FLOWGATE_DATA_DIR: join(root, 'data'),
      FLOWGATE_ADMIN_TOKEN: TOKEN,
    };
    // The embedded database is what needs files next to the bundle; CI's DATABASE_URL must not redirect it.
    delete env.DATABASE_URL;
    delete env.FLOWGATE_ENCRYPTION_KEY;
    delete env.NODE_OPTIONS;
    const { child, exited, out } = spawnCaptured(process.execPath, [built.cli, 'serve', '--no-worker'], {
      cwd: root,
      env,
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`not listening:\n${out().stdout}\n${out().stderr}`)),
          60_000,
        );
        child.stdout.on('data', () => {
          const line = out()
            .stdout.split('\n')
            .find((l) => l.includes('"flowgate gateway listening"'));
          if (!line) return;
          clearTimeout(timer);
          resolve(String((JSON.parse(line) as { url: string }).url));
        });
        void exited.then((code) =>
          reject(new Error(`serve exited with ${code}:\n${out().stdout}\n${out().stderr}`)),
        );
      });
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      const card = (await (await fetch(`${url}/.well-known/mcp/server-card.json`)).json()) as {
        name: string;
      };
      expect(card.name).toBe('io.flowgate/workspace-mcp');

      await admin(url, '/api/admin/workspaces', { id: 'ws-dist', name: 'Dist' });
      const sa = await admin(url, '/api/workspaces/ws-dist/service-accounts', {
        name: 'agent',
        capabilities: ['flows.read'],
      });
      const created = await admin(
        url,
        `/api/workspaces/ws-dist/service-accounts/${String(sa.serviceAccountId)}/keys`,
        {},
      );
      const apiKey = (created.key as { apiKey: string }).apiKey;
      const res = await fetch(`${url}/api/workspaces/ws-dist/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { id: number; result: { tools: { name: string }[] } };
      expect(body.id).toBe(1);
      expect(body.result.tools.map((t) => t.name)).toContain('search_flow_tools');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out().stderr).toBe('');
  });
});
