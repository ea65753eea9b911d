import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../client.js';
import { allToolPages, createTestConnection, createTestDb, testFlowDraft } from '../testing.js';
import * as repos from './index.js';

// Runs on PGlite by default and on real Postgres when DATABASE_URL is set (.ci/run does both).
let h: DbHandle;

beforeAll(async () => {
  h = await createTestDb();
  for (const id of ['ws-a', 'ws-b', 'ws-c']) await repos.createWorkspace(h.db, { id, name: id });
});
afterAll(async () => h?.close());

describe('installations', () => {
  beforeAll(async () => {
    await repos.saveDraft(
      h.db,
      'ws-a',
      testFlowDraft({
        slug: 'public-enrich',
        name: 'Public enrich',
        description: 'Shared company lookup',
        tools: [{ name: 'shared_lookup', description: 'Look a company up' }],
        requires: [{ slot: 'crm', type: 'http-api' }],
        public: true,
      }),
    );
    await repos.releaseFlow(h.db, 'ws-a', 'public-enrich');
    await repos.saveDraft(
      h.db,
      'ws-a',
      testFlowDraft({ slug: 'public-unreleased', tools: [{ name: 'unreleased_tool' }], public: true }),
    );
    await repos.saveDraft(
      h.db,
      'ws-a',
      testFlowDraft({ slug: 'private-one', tools: [{ name: 'private_tool' }] }),
    );
    await repos.releaseFlow(h.db, 'ws-a', 'private-one');
    await repos.saveDraft(
      h.db,
      'ws-a',
      testFlowDraft({ slug: 'no-setup', tools: [{ name: 'no_setup_tool' }], public: true }),
    );
    await repos.releaseFlow(h.db, 'ws-a', 'no-setup');
    await createTestConnection(h.db, 'ws-b', 'conn_b_api');
    await createTestConnection(h.db, 'ws-b', 'conn_b_secret', 'secret');
  });

  it("installs a public released flow; B's searches find it; A's private and unreleased flows never appear", async () => {
    const inst = await repos.installFlow(h.db, 'ws-b', {
      sourceWorkspaceId: 'ws-a',
      flowSlug: 'public-enrich',
      versionPolicy: 'track-latest',
    });
    expect(inst).toMatchObject({
      workspaceId: 'ws-b',
      sourceWorkspaceId: 'ws-a',
      sourceFlowSlug: 'public-enrich',
      enabled: false,
      pinnedVersion: null,
    });
    expect(inst.id).toMatch(/^inst_[A-Za-z0-9]{16}$/);

    const found = await repos.searchFlowTools(h.db, 'ws-b', { query: 'lookup', limit: 10 });
    expect(found.items).toEqual([
      expect.objectContaining({
        origin: 'installation',
        toolName: 'shared_lookup',
        flowSlug: 'public-enrich',
        installationId: inst.id,
        enabled: false,
        sourceWorkspaceId: 'ws-a',
        version: 1,
        description: 'Look a company up',
        trust: { optedIn: false, reviewedSha256: null, pinMatches: false },
        rank: 2,
      }),
    ]);
    expect(
      (await repos.searchFlowTools(h.db, 'ws-b', { toolName: 'shared_lookup', limit: 10 })).items,
    ).toHaveLength(1);
    expect(
      (await repos.searchFlowTools(h.db, 'ws-b', { query: 'lookup', limit: 10, includeInstallations: false }))
        .items,
    ).toEqual([]);
    const flowsFound = await repos.searchFlows(h.db, 'ws-b', { query: 'company lookup', limit: 10 });
    expect(flowsFound.items.map((f) => [f.origin, f.flowSlug, f.installationId, f.name])).toEqual([
      ['installation', 'public-enrich', inst.id, 'Public enrich'],
    ]);

    const everything = await allToolPages(h.db, 'ws-b', { limit: 50, includeDraft: true });
    expect(everything.join(' ')).not.toMatch(/private_tool|unreleased_tool|no_setup_tool/);
    const flowsOfB = await repos.searchFlows(h.db, 'ws-b', { limit: 50 });
    expect(flowsOfB.items.map((f) => f.flowSlug)).not.toContain('private-one');
  });

  it('refuses private, unreleased, unknown and own-workspace flows with the same answer', async () => {
    for (const flowSlug of ['private-one', 'public-unreleased', 'no-such-flow']) {
      await expect(
        repos.installFlow(h.db, 'ws-b', {
          sourceWorkspaceId: 'ws-a',
          flowSlug,
          versionPolicy: 'track-latest',
        }),
      ).rejects.toMatchObject({
        code: 'not_found',
        message: `no public released flow ${flowSlug} in workspace ws-a`,
      });
    }
    await expect(
      repos.installFlow(h.db, 'ws-a', {
        sourceWorkspaceId: 'ws-a',
        flowSlug: 'public-enrich',
        versionPolicy: 'track-latest',
      }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(
      repos.installFlow(h.db, 'ws-b', {
        sourceWorkspaceId: 'ws-a',
        flowSlug: 'public-enrich',
        versionPolicy: 'pinned',
      }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(
      repos.installFlow(h.db, 'ws-b', {
        sourceWorkspaceId: 'ws-a',
        flowSlug: 'public-enrich',
        versionPolicy: 'pinned',
        pinnedVersion: 9,
      }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('starts enabled without slots; needs bindings to its own connections before enabling', async () => {
    const ready = await repos.installFlow(h.db, 'ws-c', {
      sourceWorkspaceId: 'ws-a',
      flowSlug: 'no-setup',
      versionPolicy: 'track-latest',
    });
    expect(ready.enabled).toBe(true);

    const inst = await repos.installFlow(h.db, 'ws-c', {
      sourceWorkspaceId: 'ws-a',
      flowSlug: 'public-enrich',
      versionPolicy: 'pinned',
      pinnedVersion: 1,
    });
    expect(inst).toMatchObject({ enabled: false, pinnedVersion: 1, versionPolicy: 'pinned' });
    await expect(repos.updateInstallation(h.db, 'ws-c', inst.id, { enabled: true })).rejects.toMatchObject({
      code: 'validation_failed',
      message: 'bind every required slot before enabling: crm',
    });
    // a connection of another workspace (B's, A's) is refused
    for (const connectionId of ['conn_b_api', 'conn_a_crm']) {
      await expect(
        repos.updateInstallation(h.db, 'ws-c', inst.id, {
          slotBindings: { crm: connectionId },
          enabled: true,
        }),
      ).rejects.toMatchObject({
        code: 'validation_failed',
        issues: [
          { path: 'slotBindings.crm', message: `connection ${connectionId} not found in this workspace` },
        ],
      });
    }
    expect(await repos.getInstallation(h.db, 'ws-c', inst.id)).toMatchObject({
      enabled: false,
      slotBindings: {},
    });

    await createTestConnection(h.db, 'ws-c', 'conn_c_api');
    const enabled = await repos.updateInstallation(h.db, 'ws-c', inst.id, {
      slotBindings: { crm: 'conn_c_api' },
      enabled: true,
      trustMetadata: true,
    });
    expect(enabled).toMatchObject({
      enabled: true,
      trustMetadata: true,
      slotBindings: { crm: 'conn_c_api' },
    });
    const resolved = await repos.resolveInstalledDefinition(h.db, enabled);
    expect(resolved).toMatchObject({
      flowSlug: 'public-enrich',
      version: 1,
      sourceWorkspaceId: 'ws-a',
      missingSlots: [],
    });
    const hit = (await repos.searchFlowTools(h.db, 'ws-c', { toolName: 'shared_lookup', limit: 5 })).items[0];
    expect(hit).toMatchObject({
      installationId: inst.id,
      enabled: true,
      trust: { optedIn: true, pinMatches: true },
    });

    // unbinding a required slot switches it off
    const unbound = await repos.updateInstallation(h.db, 'ws-c', inst.id, { slotBindings: { crm: null } });
    expect(unbound).toMatchObject({ enabled: false, slotBindings: {} });
    // another workspace cannot see or change it
    expect(await repos.getInstallation(h.db, 'ws-b', inst.id)).toBeNull();
    await expect(repos.updateInstallation(h.db, 'ws-b', inst.id, { enabled: false })).rejects.toMatchObject({
      code: 'not_found',
    });
    expect((await repos.listInstallations(h.db, 'ws-c', { limit: 10 })).map((i) => i.id).sort()).toEqual(
      [inst.id, ready.id].sort(),
    );
    expect(await repos.listInstallations(h.db, 'ws-a', { limit: 10 })).toEqual([]);
  });

  it('pinned installations keep their version; tracking ones follow live; a source gone private disappears', async () => {
    const pinned = await repos.installFlow(h.db, 'ws-c', {
      sourceWorkspaceId: 'ws-a',
      flowSlug: 'no-setup',
      versionPolicy: 'pinned',
      pinnedVersion: 1,
    });
    await repos.saveDraft(
      h.db,
      'ws-a',
      testFlowDraft({ slug: 'no-setup', tools: [{ name: 'no_setup_tool_v2' }], public: true }),
    );
    await repos.releaseFlow(h.db, 'ws-a', 'no-setup');
    const names = await allToolPages(h.db, 'ws-c', { query: 'no_setup', limit: 50 });
    const tracking = (await repos.listInstallations(h.db, 'ws-c', { limit: 10 })).find(
      (i) => i.sourceFlowSlug === 'no-setup' && i.versionPolicy === 'track-latest',
    );
    expect(names.sort()).toEqual(
      [`${pinned.id}/no-setup:live:no_setup_tool`, `${tracking?.id}/no-setup:live:no_setup_tool_v2`].sort(),
    );
    expect((await repos.resolveInstalledDefinition(h.db, pinned))?.version).toBe(1);

    // v3 is released private: the flow is no longer public; no installation resolves or appears in search
    await repos.saveDraft(
      h.db,
      'ws-a',
      testFlowDraft({ slug: 'no-setup', tools: [{ name: 'no_setup_tool_v3' }], public: false }),
    );
    await repos.releaseFlow(h.db, 'ws-a', 'no-setup');
    expect(await repos.resolveInstalledDefinition(h.db, pinned)).toBeNull();
    expect(await allToolPages(h.db, 'ws-c', { query: 'no_setup', limit: 50 })).toEqual([]);
    expect((await repos.searchFlows(h.db, 'ws-c', { query: 'no-setup', limit: 10 })).items).toEqual([]);
    await expect(repos.updateInstallation(h.db, 'ws-c', pinned.id, { enabled: true })).rejects.toMatchObject({
      code: 'validation_failed',
    });
    // rolling back to the public v2 makes it installable again, but pinning a private version is refused
    await repos.releaseFlow(h.db, 'ws-a', 'no-setup', { version: 2 });
    expect((await repos.resolveInstalledDefinition(h.db, pinned))?.version).toBe(1);
    await expect(
      repos.updateInstallation(h.db, 'ws-c', pinned.id, { pinnedVersion: 3 }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});
