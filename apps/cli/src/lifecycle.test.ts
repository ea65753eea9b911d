import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ensurePrivateDir,
  loadOrCreateDevSecrets,
  readDemoCredentials,
  writeDemoCredentials,
  writePrivateFile,
} from './data-dir.js';
import { lockDataDir } from './lifecycle.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fg-lc-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const mode = (p: string) => statSync(p).mode & 0o777;

describe('data directory files', () => {
  it('makes the directory owner-only, even when it already existed wider', () => {
    const d = join(dir, 'a', 'b');
    ensurePrivateDir(d);
    expect(mode(d)).toBe(0o700);
    const wide = join(dir, 'wide');
    ensurePrivateDir(wide);
    chmodSync(wide, 0o755);
    ensurePrivateDir(wide);
    expect(mode(wide)).toBe(0o700);
  });

  it('writes private files 0600, replacing content atomically', () => {
    const p = join(dir, 'f.json');
    writeFileSync(p, 'old', { mode: 0o644 });
    writePrivateFile(p, 'new');
    expect(readFileSync(p, 'utf8')).toBe('new');
    expect(mode(p)).toBe(0o600);
  });

  it('generates the dev operator token once and reuses it', () => {
    const first = loadOrCreateDevSecrets(dir);
    expect(first.created).toBe(true);
    expect(first.secrets.adminToken).toMatch(/^fga_[0-9A-Za-z]{43}$/);
    expect(mode(join(dir, 'dev-secrets.json'))).toBe(0o600);
    const second = loadOrCreateDevSecrets(dir);
    expect(second).toEqual({ secrets: first.secrets, created: false });
  });

  it('refuses a damaged dev-secrets file instead of silently replacing the token', () => {
    writeFileSync(join(dir, 'dev-secrets.json'), '{"adminToken": 1}');
    expect(() => loadOrCreateDevSecrets(dir)).toThrow(/dev-secrets\.json is not valid/);
  });

  it('reads back demo credentials and treats a damaged file as absent', () => {
    const creds = {
      workspaceId: 'ws-demo',
      mcpUrl: 'http://127.0.0.1:8787/api/workspaces/ws-demo/mcp',
      accounts: [
        { name: 'a', serviceAccountId: 'sa_1', capabilities: ['flows.read'], keyId: 'k', apiKey: 'fgk_k_x' },
      ],
    };
    writeDemoCredentials(dir, creds);
    expect(mode(join(dir, 'demo-credentials.json'))).toBe(0o600);
    expect(readDemoCredentials(dir)).toEqual(creds);
    writeFileSync(join(dir, 'demo-credentials.json'), 'not json');
    expect(readDemoCredentials(dir)).toBeUndefined();
  });
});

describe('lockDataDir', () => {
  it('holds the directory until released', () => {
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, 'flowgate.lock'), 'utf8')).toBe(String(process.pid));
    release();
    expect(existsSync(join(dir, 'flowgate.lock'))).toBe(false);
  });

  it('refuses a directory held by another live process and takes over a dead one', async () => {
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      await new Promise((r) => other.once('spawn', r));
      writeFileSync(join(dir, 'flowgate.lock'), String(other.pid));
      expect(() => lockDataDir(dir)).toThrow(`another flowgate process (pid ${other.pid}) is using ${dir}`);
    } finally {
      other.kill('SIGKILL');
      await new Promise((r) => other.once('exit', r));
    }
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, 'flowgate.lock'), 'utf8')).toBe(String(process.pid));
    release();
  });
});
