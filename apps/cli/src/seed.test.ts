import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DbHandle } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { loadConfig, type RunningGateway, startGateway } from '@flowgate/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from './admin-client.js';
import { DEMO_ACCOUNTS, seedDemo } from './seed.js';

// The real gateway on loopback (PGlite, or Postgres when DATABASE_URL is set), driven through the admin API.
const TOKEN = `op_${randomBytes(24).toString('hex')}`;
let db: DbHandle;
let gateway: RunningGateway;
let client: AdminClient;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'fg-seed-'));
  db = await createTestDb();
  const config = loadConfig({
    FLOWGATE_PORT: '0',
    FLOWGATE_ADMIN_TOKEN: TOKEN,
    FLOWGATE_DATA_DIR: dataDir,
    FLOWGATE_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    FLOWGATE_LOG_LEVEL: 'silent',
  });
  gateway = await startGateway({ config, db });
  client = new AdminClient({ apiUrl: gateway.url, token: TOKEN });
});

afterAll(async () => {
  await gateway?.close();
  await db?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('seedDemo', () => {
  const mcpUrl = 'http://127.0.0.1:1/api/workspaces/ws-demo/mcp';

  it('creates the workspace, both accounts with their capabilities, and one key each', async () => {
    const first = await seedDemo(client, { mcpUrl, demoApiUrl: 'http://127.0.0.1:1' });
    expect(first.workspaceCreated).toBe(true);
    expect(first.credentials.workspaceId).toBe('ws-demo');
    expect(first.credentials.mcpUrl).toBe(mcpUrl);
    expect(first.credentials.accounts.map((a) => [a.name, a.capabilities])).toEqual(
      DEMO_ACCOUNTS.map((a) => [a.name, [...a.capabilities]]),
    );
    expect(first.newKeys).toEqual(first.credentials.accounts);
    for (const a of first.credentials.accounts) {
      expect(a.apiKey.startsWith(`fgk_${a.keyId}_`)).toBe(true);
      const keys = await client.listKeys('ws-demo', a.serviceAccountId);
      expect(keys.items.map((k) => k.keyId)).toEqual([a.keyId]);
    }

    // with the saved credentials nothing new is made
    const second = await seedDemo(client, {
      mcpUrl,
      demoApiUrl: 'http://127.0.0.1:1',
      existing: first.credentials,
    });
    expect(second.workspaceCreated).toBe(false);
    expect(second.newKeys).toEqual([]);
    expect(second.credentials).toEqual(first.credentials);
    expect((await client.listServiceAccounts('ws-demo')).items).toHaveLength(2);
  });

  it('replaces only a key that no longer works, and never duplicates accounts', async () => {
    const base = await seedDemo(client, { mcpUrl, demoApiUrl: 'http://127.0.0.1:1' });
    // without saved credentials, accounts are found again but keys cannot be recovered: fresh ones are made
    expect(base.workspaceCreated).toBe(false);
    expect(base.newKeys).toHaveLength(2);
    expect((await client.listServiceAccounts('ws-demo')).items).toHaveLength(2);

    const [readonly, full] = base.credentials.accounts;
    if (!readonly || !full) throw new Error('expected two accounts');
    await client.revokeKey('ws-demo', readonly.serviceAccountId, readonly.keyId);
    const again = await seedDemo(client, {
      mcpUrl,
      demoApiUrl: 'http://127.0.0.1:1',
      existing: base.credentials,
    });
    expect(again.newKeys.map((a) => a.name)).toEqual(['demo-readonly']);
    expect(again.newKeys[0]?.keyId).not.toBe(readonly.keyId);
    expect(again.credentials.accounts[1]).toEqual(full);
  });
});
