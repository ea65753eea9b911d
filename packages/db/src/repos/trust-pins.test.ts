import type { FlowModel } from '@flowgate/flows';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../client.js';
import * as schema from '../schema.js';
import { createTestDb, testFlowDraft } from '../testing.js';
import * as repos from './index.js';

// Runs on PGlite by default and on real Postgres when DATABASE_URL is set (.ci/run does both).
let h: DbHandle;

beforeAll(async () => {
  h = await createTestDb();
  for (const id of ['ws-guard', 'ws-trust']) await repos.createWorkspace(h.db, { id, name: id });
});
afterAll(async () => h?.close());

describe('metadata trust pins', () => {
  it('pins an own flow opt-in to the live version metadata, and refuses one without a live version', async () => {
    await repos.saveDraft(h.db, 'ws-trust', testFlowDraft({ slug: 'pinned' }));
    await expect(repos.setFlowTrustMetadata(h.db, 'ws-trust', 'pinned', true)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('no live version'),
    });
    expect((await repos.getFlow(h.db, 'ws-trust', 'pinned'))?.trustMetadata).toBe(false);
    await repos.releaseFlow(h.db, 'ws-trust', 'pinned');
    const live = await repos.getDefinition(h.db, 'ws-trust', 'pinned', 'live');
    const row = await repos.setFlowTrustMetadata(h.db, 'ws-trust', 'pinned', true);
    expect(live?.metadataSha256).toBe(repos.metadataSha256(live?.model as FlowModel));
    expect(row).toMatchObject({ trustMetadata: true, trustedMetadataSha256: live?.metadataSha256 });
    expect(await repos.versionMetadataSha256(h.db, 'ws-trust', row?.id ?? '', 1, { publicOnly: false })).toBe(
      row?.trustedMetadataSha256,
    );
    expect(
      await repos.versionMetadataSha256(h.db, 'ws-trust', row?.id ?? '', 1, { publicOnly: true }),
    ).toBeNull();
    expect(await repos.setFlowTrustMetadata(h.db, 'ws-trust', 'pinned', false)).toMatchObject({
      trustMetadata: false,
      trustedMetadataSha256: null,
    });
    expect(await repos.setFlowTrustMetadata(h.db, 'ws-trust', 'missing', true)).toBeNull();
  });

  it('pins an installer opt-in to the version the installation runs, not to later releases', async () => {
    await repos.saveDraft(h.db, 'ws-trust', testFlowDraft({ slug: 'shared', public: true }));
    await repos.releaseFlow(h.db, 'ws-trust', 'shared');
    const inst = await repos.installFlow(h.db, 'ws-guard', {
      sourceWorkspaceId: 'ws-trust',
      flowSlug: 'shared',
      versionPolicy: 'track-latest',
    });
    const v1 = await repos.resolveInstalledDefinition(h.db, inst);
    const trusted = await repos.updateInstallation(h.db, 'ws-guard', inst.id, { trustMetadata: true });
    expect(trusted.trustedMetadataSha256).toBe(repos.metadataSha256(v1?.model as FlowModel));
    await repos.saveDraft(
      h.db,
      'ws-trust',
      testFlowDraft({ slug: 'shared', public: true, description: 'v2 says something else' }),
    );
    await repos.releaseFlow(h.db, 'ws-trust', 'shared');
    const later = await repos.updateInstallation(h.db, 'ws-guard', inst.id, { enabled: true });
    expect(later.trustedMetadataSha256).toBe(trusted.trustedMetadataSha256);
    const v2 = await repos.resolveInstalledDefinition(h.db, later);
    expect(v2?.version).toBe(2);
    expect(v2?.metadataSha256).not.toBe(later.trustedMetadataSha256);
    expect(
      (await repos.updateInstallation(h.db, 'ws-guard', inst.id, { trustMetadata: false }))
        .trustedMetadataSha256,
    ).toBeNull();
  });

  it('digests metadata, not code, comments or key order', () => {
    const base = testFlowDraft({ slug: 'digest', description: 'Grüße – 漢字 🚀' }).model;
    const digest = repos.metadataSha256(base);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    const reordered = Object.fromEntries(Object.entries(base).reverse()) as FlowModel;
    expect(repos.metadataSha256(reordered)).toBe(digest);
    // Step summaries are derived from the body (code): they are not metadata.
    expect(repos.metadataSha256({ ...base, steps: [] })).toBe(digest);
    expect(repos.metadataSha256({ ...base, description: 'Grüße' })).not.toBe(digest);
    expect(repos.metadataSha256({ ...base, tags: [...base.tags, 'new'] })).not.toBe(digest);
  });

  it("moves an opt-in pinned to a literal digest (before migration 0012) to that version's metadata digest", async () => {
    await repos.saveDraft(h.db, 'ws-trust', testFlowDraft({ slug: 'legacy' }));
    await repos.releaseFlow(h.db, 'ws-trust', 'legacy');
    const live = await repos.getDefinition(h.db, 'ws-trust', 'legacy', 'live');
    const flowId = live?.flowId ?? '';
    // The state an older database holds: a literal pin, and versions without a metadata digest.
    await h.db
      .update(schema.flows)
      .set({ trustMetadata: true, trustedMetadataSha256: live?.literalSha256 ?? null })
      .where(and(eq(schema.flows.workspaceId, 'ws-trust'), eq(schema.flows.id, flowId)));
    await h.db
      .update(schema.flowVersions)
      .set({ metadataSha256: null })
      .where(and(eq(schema.flowVersions.workspaceId, 'ws-trust'), eq(schema.flowVersions.flowId, flowId)));
    expect(await repos.backfillMetadataDigests(h.db)).toBeGreaterThanOrEqual(1);
    expect(await repos.backfillMetadataDigests(h.db)).toBe(0);
    const pinned = await repos.getFlow(h.db, 'ws-trust', 'legacy');
    expect(pinned?.trustedMetadataSha256).toBe(live?.metadataSha256);
    expect(await repos.versionMetadataSha256(h.db, 'ws-trust', flowId, 1, { publicOnly: false })).toBe(
      live?.metadataSha256,
    );
  });
});
