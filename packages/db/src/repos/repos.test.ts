import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../client.js';
import { createTestDb } from '../testing.js';
import * as repos from './index.js';

// Runs on PGlite by default and on real Postgres when DATABASE_URL is set (.ci/run does both).
let h: DbHandle;
beforeAll(async () => {
  h = await createTestDb();
  await repos.createWorkspace(h.db, { id: 'ws-one', name: 'One' });
  await repos.createWorkspace(h.db, { id: 'ws-two', name: 'Two' });
});
afterAll(async () => h?.close());

describe('repositories are scoped by workspace', () => {
  it('reports readiness once migrations are applied', async () => {
    expect(await h.ready()).toBe(true);
  });

  it('refuses a duplicate workspace without throwing', async () => {
    expect(await repos.createWorkspace(h.db, { id: 'ws-one', name: 'again' })).toBeNull();
    expect((await repos.getWorkspace(h.db, 'ws-one'))?.name).toBe('One');
  });

  it("never reads or changes another workspace's service accounts and keys", async () => {
    const sa = await repos.createServiceAccount(h.db, 'ws-one', {
      id: 'sa_one',
      name: 'one',
      capabilities: ['flows.read'],
    });
    await repos.createApiKey(h.db, 'ws-one', {
      id: 'key_one',
      serviceAccountId: sa.id,
      name: null,
      secretHash: 'h',
      expiresAt: null,
    });
    expect(await repos.getServiceAccount(h.db, 'ws-two', 'sa_one')).toBeNull();
    expect(await repos.updateServiceAccount(h.db, 'ws-two', 'sa_one', { status: 'disabled' })).toBeNull();
    expect(await repos.listServiceAccounts(h.db, 'ws-two', { limit: 10 })).toEqual([]);
    expect(await repos.listApiKeys(h.db, 'ws-two', 'sa_one')).toEqual([]);
    expect(await repos.revokeApiKey(h.db, 'ws-two', 'sa_one', 'key_one')).toBe(false);
    const lookup = await repos.lookupApiKey(h.db, 'key_one');
    expect(lookup).toMatchObject({
      workspaceId: 'ws-one',
      serviceAccountStatus: 'active',
      revokedAt: null,
      capabilities: ['flows.read'],
    });
    expect(await repos.revokeApiKey(h.db, 'ws-one', 'sa_one', 'key_one')).toBe(true);
    expect((await repos.lookupApiKey(h.db, 'key_one'))?.revokedAt).toBeInstanceOf(Date);
  });

  it('keeps connections, policy and audit apart', async () => {
    await repos.createConnection(h.db, 'ws-one', {
      id: 'conn_one',
      name: 'crm',
      type: 'http-api',
      baseUrl: 'https://x.test',
      authType: 'none',
      secretCiphertext: null,
      config: {},
    });
    expect(await repos.getConnection(h.db, 'ws-two', 'conn_one')).toBeNull();
    expect(await repos.listConnections(h.db, 'ws-two', { limit: 10 })).toEqual([]);
    expect(await repos.listConnections(h.db, 'ws-two', { limit: 10, ids: ['conn_one'] })).toEqual([]);
    // The same name is free in another workspace.
    expect(
      await repos.createConnection(h.db, 'ws-two', {
        id: 'conn_two',
        name: 'crm',
        type: 'http-api',
        baseUrl: 'https://y.test',
        authType: 'none',
        secretCiphertext: null,
        config: {},
      }),
    ).not.toBeNull();

    await repos.putPolicy(h.db, 'ws-one', { readOnly: true, disabledTools: ['send_feedback'] });
    expect((await repos.getPolicy(h.db, 'ws-two')).readOnly).toBe(false);
    expect(await repos.getPolicy(h.db, 'ws-one')).toMatchObject({
      readOnly: true,
      disabledTools: ['send_feedback'],
      allowedIps: [],
    });

    await repos.insertAuditEntries(h.db, [
      {
        workspaceId: 'ws-one',
        principalType: 'operator',
        principalId: 'operator',
        kind: 'admin',
        action: 'a',
        outcome: 'ok',
      },
      {
        workspaceId: 'ws-two',
        principalType: 'operator',
        principalId: 'operator',
        kind: 'admin',
        action: 'b',
        outcome: 'ok',
      },
    ]);
    const one = await repos.listAuditEntries(h.db, 'ws-one', { limit: 10 });
    expect(one.map((e) => e.action)).toEqual(['a']);
  });
});

describe('concurrent and repeated writes', () => {
  it('two partial policy updates at once both stick', async () => {
    await repos.createWorkspace(h.db, { id: 'ws-race', name: 'race' });
    await Promise.all([
      repos.putPolicy(h.db, 'ws-race', { readOnly: true }),
      repos.putPolicy(h.db, 'ws-race', { allowedIps: ['10.0.0.0/8'] }),
      repos.putPolicy(h.db, 'ws-race', { disabledTools: ['send_feedback'] }),
    ]);
    expect(await repos.getPolicy(h.db, 'ws-race')).toMatchObject({
      readOnly: true,
      allowedIps: ['10.0.0.0/8'],
      disabledTools: ['send_feedback'],
      allowedOrigins: [],
    });
  });

  it('revoking a key twice keeps the first revocation time', async () => {
    const sa = await repos.createServiceAccount(h.db, 'ws-race', {
      id: 'sa_race',
      name: 'r',
      capabilities: [],
    });
    await repos.createApiKey(h.db, 'ws-race', {
      id: 'key_race',
      serviceAccountId: sa.id,
      name: null,
      secretHash: 'h',
      expiresAt: null,
    });
    expect(await repos.revokeApiKey(h.db, 'ws-race', 'sa_race', 'key_race')).toBe(true);
    const first = (await repos.lookupApiKey(h.db, 'key_race'))?.revokedAt;
    await new Promise((r) => setTimeout(r, 5));
    expect(await repos.revokeApiKey(h.db, 'ws-race', 'sa_race', 'key_race')).toBe(true);
    expect((await repos.lookupApiKey(h.db, 'key_race'))?.revokedAt).toEqual(first);
    expect(await repos.revokeApiKey(h.db, 'ws-race', 'sa_race', 'nope')).toBe(false);
  });
});

describe('runs', () => {
  it('pages through runs created in the same instant without skipping any', async () => {
    const { runs } = await import('../schema.js');
    await repos.createWorkspace(h.db, { id: 'ws-runs', name: 'runs' });
    const at = new Date();
    await h.db.insert(runs).values(
      Array.from({ length: 5 }, (_, i) => ({
        id: `run_same${i}xxxxxxxx`,
        workspaceId: 'ws-runs',
        flowId: 'f',
        flowSlug: 'f',
        definitionWorkspaceId: 'ws-runs',
        invocation: 'default',
        target: 'live' as const,
        status: 'queued' as const,
        input: {},
        createdAt: at,
      })),
    );
    const seen: string[] = [];
    let before: { createdAt: string; id: string } | undefined;
    for (let i = 0; i < 5; i++) {
      const page = await repos.listRuns(h.db, 'ws-runs', { limit: 2, before });
      seen.push(...page.map((r) => r.id));
      const last = page.at(-1);
      if (!last || page.length < 2) break;
      before = { createdAt: last.position, id: last.id };
    }
    expect(seen.sort()).toEqual(Array.from({ length: 5 }, (_, i) => `run_same${i}xxxxxxxx`));
    expect(await repos.listRuns(h.db, 'ws-one', { limit: 10 })).toEqual([]);
  });
});
