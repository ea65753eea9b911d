import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCaptured } from './support/process.js';

/** `flowgate serve` and `flowgate db migrate` as processes, on the embedded database in a temp directory. */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const dataRoot = mkdtempSync(join(tmpdir(), 'fg-cli-serve-'));
const TOKEN = 'serve-test-operator-token-0123456789';

afterAll(() => {
  rmSync(dataRoot, { recursive: true, force: true });
});

function baseEnv(extra: Record<string, string>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, ...extra };
  // These tests are about the embedded database; CI's DATABASE_URL must not redirect them.
  delete env.DATABASE_URL;
  delete env.FLOWGATE_ENCRYPTION_KEY;
  return env;
}

function run(args: string[], env: Record<string, string | undefined>) {
  return spawnCaptured(TSX, ['apps/cli/src/main.ts', ...args], { cwd: ROOT, env });
}

describe('flowgate serve', () => {
  it('logs one JSON line with its URL, serves, and shuts down gracefully on SIGTERM', {
    timeout: 120_000,
  }, async () => {
    const dataDir = join(dataRoot, 'serve');
    const p = run(
      ['serve', '--no-worker'],
      baseEnv({ FLOWGATE_PORT: '0', FLOWGATE_DATA_DIR: dataDir, FLOWGATE_ADMIN_TOKEN: TOKEN }),
    );
    try {
      const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no listening line:\n${JSON.stringify(p.out())}`)),
          90_000,
        );
        p.child.stdout.on('data', () => {
          for (const l of p.out().stdout.split('\n')) {
            if (!l.includes('listening')) continue;
            clearTimeout(timer);
            resolve(JSON.parse(l) as Record<string, unknown>);
          }
        });
        void p.exited.then((code) =>
          reject(new Error(`serve exited with ${code}: ${JSON.stringify(p.out())}`)),
        );
      });
      expect(line.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(typeof line.level).toBe('number');
      const url = String(line.url);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      expect(existsSync(join(dataDir, 'flowgate.lock'))).toBe(true);
      const ws = await fetch(`${url}/api/admin/workspaces`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'ws-serve', name: 'Serve' }),
      });
      expect(ws.status).toBe(201);
      expect(p.out().stdout).not.toContain(TOKEN);
    } finally {
      p.child.kill('SIGTERM');
    }
    expect(await p.exited).toBe(0);
    expect(p.out().stdout).toContain('flowgate shutting down');
    expect(existsSync(join(dataDir, 'flowgate.lock'))).toBe(false);
  });

  it('a bad configuration stops the start with a message naming the variable', {
    timeout: 60_000,
  }, async () => {
    const p = run(['serve'], baseEnv({ FLOWGATE_PORT: 'eighty', FLOWGATE_DATA_DIR: join(dataRoot, 'bad') }));
    expect(await p.exited).toBe(1);
    expect(p.out().stderr).toMatch(/^error: invalid_request: invalid configuration:\n {2}FLOWGATE_PORT: /);
  });
});

describe('flowgate db migrate', () => {
  it('migrates the embedded database in the data directory and is idempotent', {
    timeout: 120_000,
  }, async () => {
    const dataDir = join(dataRoot, 'migrate');
    const env = baseEnv({ FLOWGATE_DATA_DIR: dataDir });
    for (let i = 0; i < 2; i++) {
      const p = run(['db', 'migrate'], env);
      expect(await p.exited).toBe(0);
      expect(p.out().stdout).toBe(`migrations applied (embedded database in ${join(dataDir, 'pgdata')})\n`);
    }
    expect(existsSync(join(dataDir, 'flowgate.lock'))).toBe(false);
  });

  it('db backfill migrates, then runs every backfill again and says what each filled', {
    timeout: 120_000,
  }, async () => {
    const dataDir = join(dataRoot, 'migrate');
    const p = run(['db', 'backfill'], baseEnv({ FLOWGATE_DATA_DIR: dataDir }));
    expect(await p.exited).toBe(0);
    expect(p.out().stdout).toBe(
      'flow_versions.summary: 0 rows filled\n' +
        'flow_versions.metadata_sha256: 0 rows filled\n' +
        `backfills complete (embedded database in ${join(dataDir, 'pgdata')})\n`,
    );
    expect(existsSync(join(dataDir, 'flowgate.lock'))).toBe(false);
  });

  it('refuses a DATABASE_URL that is not postgres', { timeout: 60_000 }, async () => {
    const p = run(['db', 'migrate'], { ...baseEnv({}), DATABASE_URL: 'mysql://u:pw@host/db' });
    expect(await p.exited).toBe(1);
    expect(p.out().stderr).toContain('DATABASE_URL: must be a postgres:// or postgresql:// URL');
    expect(p.out().stderr).not.toContain('pw');
  });
});
