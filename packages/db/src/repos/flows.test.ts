import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../client.js';
import { flowVersions } from '../schema.js';
import { createTestDb, testFlowDraft } from '../testing.js';
import * as repos from './index.js';

// Runs on PGlite by default and on real Postgres when DATABASE_URL is set (.ci/run does both).
let h: DbHandle;

beforeAll(async () => {
  h = await createTestDb();
  for (const id of ['ws-a', 'ws-b']) await repos.createWorkspace(h.db, { id, name: id });
});
afterAll(async () => h?.close());

describe('drafts, versions and the live pointer', () => {
  it('walks draft → v1 → edited draft (live stays v1) → v2 → rollback to v1, with every source readable', async () => {
    const v1 = testFlowDraft({ slug: 'enrich', name: 'Enrich', tools: [{ name: 'enrich_company' }] });
    const saved = await repos.saveDraft(h.db, 'ws-a', v1);
    expect(saved.created).toBe(true);
    expect(saved.flow).toMatchObject({
      slug: 'enrich',
      name: 'Enrich',
      liveVersion: null,
      latestVersion: null,
      isPublic: false,
    });
    expect(await repos.getDefinition(h.db, 'ws-a', 'enrich', 'live')).toBeNull();
    expect(await repos.getDefinition(h.db, 'ws-a', 'enrich', 'latest')).toBeNull();
    expect((await repos.getDefinition(h.db, 'ws-a', 'enrich', 'draft'))?.literal).toBe(v1.literal);

    const r1 = await repos.releaseFlow(h.db, 'ws-a', 'enrich', { releaseNote: 'first' });
    expect(r1).toEqual({
      flowSlug: 'enrich',
      version: 1,
      created: true,
      previousLiveVersion: null,
      releaseNote: 'first',
    });

    const v2 = testFlowDraft({ slug: 'enrich', name: 'Enrich v2', tools: [{ name: 'enrich_company_v2' }] });
    const resaved = await repos.saveDraft(h.db, 'ws-a', v2);
    expect(resaved.created).toBe(false);
    expect(resaved.flow).toMatchObject({ name: 'Enrich v2', liveVersion: 1, latestVersion: 1 });
    const live = await repos.getDefinition(h.db, 'ws-a', 'enrich', 'live');
    expect(live).toMatchObject({ version: 1, source: 'live', literal: v1.literal, releaseNote: 'first' });
    expect((await repos.getDefinition(h.db, 'ws-a', 'enrich', 'active'))?.version).toBe(1);
    expect((await repos.getDefinition(h.db, 'ws-a', 'enrich', 'draft'))?.model.name).toBe('Enrich v2');

    const r2 = await repos.releaseFlow(h.db, 'ws-a', 'enrich');
    expect(r2).toEqual({
      flowSlug: 'enrich',
      version: 2,
      created: true,
      previousLiveVersion: 1,
      releaseNote: null,
    });
    expect((await repos.getDefinition(h.db, 'ws-a', 'enrich', 'live'))?.literal).toBe(v2.literal);
    expect(await repos.getDefinition(h.db, 'ws-a', 'enrich', { version: 1 })).toMatchObject({
      version: 1,
      source: 'version',
      literal: v1.literal,
    });

    const back = await repos.releaseFlow(h.db, 'ws-a', 'enrich', { version: 1 });
    expect(back).toEqual({
      flowSlug: 'enrich',
      version: 1,
      created: false,
      previousLiveVersion: 2,
      releaseNote: 'first',
    });
    expect((await repos.getDefinition(h.db, 'ws-a', 'enrich', 'live'))?.version).toBe(1);
    expect((await repos.getDefinition(h.db, 'ws-a', 'enrich', 'active'))?.version).toBe(1);
    expect((await repos.getDefinition(h.db, 'ws-a', 'enrich', 'latest'))?.version).toBe(2);
    expect(await repos.getDefinition(h.db, 'ws-a', 'enrich', { version: 3 })).toBeNull();
    expect(await repos.getDefinition(h.db, 'ws-a', 'enrich', { version: 0 })).toBeNull();

    // live search rows follow the live version; the draft rows follow the draft
    const live1 = await repos.searchFlowTools(h.db, 'ws-a', { query: 'enrich', limit: 10 });
    expect(live1.items.map((t) => [t.toolName, t.source, t.version])).toEqual([
      ['enrich_company', 'live', 1],
    ]);
    const withDraft = await repos.searchFlowTools(h.db, 'ws-a', {
      query: 'enrich',
      limit: 10,
      includeDraft: true,
    });
    expect(withDraft.items.map((t) => [t.toolName, t.source])).toEqual([
      ['enrich_company', 'live'],
      ['enrich_company_v2', 'draft'],
    ]);

    const versions = await repos.listFlowVersions(h.db, 'ws-a', 'enrich', { limit: 10 });
    expect(versions.map((v) => [v.version, v.releaseNote])).toEqual([
      [2, null],
      [1, 'first'],
    ]);
    expect(
      await repos.listFlowVersions(h.db, 'ws-a', 'enrich', { limit: 10, beforeVersion: 2 }),
    ).toHaveLength(1);
  });

  it('reuses the latest version for an unchanged draft and never rewrites a version', async () => {
    const d = testFlowDraft({ slug: 'stable', tools: [{ name: 'stable_tool' }] });
    await repos.saveDraft(h.db, 'ws-a', d);
    expect((await repos.releaseFlow(h.db, 'ws-a', 'stable')).version).toBe(1);
    const before = await h.db.select().from(flowVersions).where(eq(flowVersions.workspaceId, 'ws-a'));

    await repos.saveDraft(h.db, 'ws-a', d);
    // Issue 12 finding 8: a note given with an unchanged draft was dropped. It is stored on the reused version.
    expect(await repos.releaseFlow(h.db, 'ws-a', 'stable', { releaseNote: 'again' })).toEqual({
      flowSlug: 'stable',
      version: 1,
      created: false,
      previousLiveVersion: 1,
      releaseNote: 'again',
    });
    expect((await repos.releaseFlow(h.db, 'ws-a', 'stable', { releaseNote: 'again' })).releaseNote).toBe(
      'again',
    );
    expect((await repos.releaseFlow(h.db, 'ws-a', 'stable', { releaseNote: 'other' })).releaseNote).toBe(
      'other',
    );
    expect((await repos.releaseFlow(h.db, 'ws-a', 'stable')).releaseNote).toBe('other');
    // a byte-level change (a comment) is a new version
    await repos.saveDraft(
      h.db,
      'ws-a',
      testFlowDraft({ slug: 'stable', tools: [{ name: 'stable_tool' }], comment: 'edited' }),
    );
    expect((await repos.releaseFlow(h.db, 'ws-a', 'stable')).version).toBe(2);
    // after a rollback, an unchanged draft is the latest version again: reused, not duplicated
    await repos.releaseFlow(h.db, 'ws-a', 'stable', { version: 1 });
    expect(await repos.releaseFlow(h.db, 'ws-a', 'stable')).toMatchObject({ version: 2, created: false });

    const after = await h.db.select().from(flowVersions).where(eq(flowVersions.workspaceId, 'ws-a'));
    // The definition never changes; only the release note may have been given again.
    for (const old of before) {
      const now = after.find((v) => v.flowId === old.flowId && v.version === old.version);
      expect(now ? { ...now, releaseNote: old.releaseNote } : now).toEqual(old);
    }
    const stableId = (await repos.getFlow(h.db, 'ws-a', 'stable'))?.id;
    expect(
      after
        .filter((v) => v.flowId === stableId)
        .map((v) => v.version)
        .sort(),
    ).toEqual([1, 2]);
  });

  it('refuses to release without a draft or to an unknown version, and changes nothing then', async () => {
    await expect(repos.releaseFlow(h.db, 'ws-a', 'nope')).rejects.toMatchObject({ code: 'not_found' });
    await repos.saveDraft(h.db, 'ws-a', testFlowDraft({ slug: 'roll' }));
    await expect(repos.releaseFlow(h.db, 'ws-a', 'roll', { version: 7 })).rejects.toMatchObject({
      code: 'not_found',
      message: 'flow roll has no version 7',
    });
    await expect(
      repos.releaseFlow(h.db, 'ws-a', 'roll', { releaseNote: 'x'.repeat(2001) }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
    });
    expect((await repos.getFlow(h.db, 'ws-a', 'roll'))?.liveVersion).toBeNull();
  });

  it('serialises concurrent releases: distinct drafts never collide on a version number', async () => {
    await repos.saveDraft(h.db, 'ws-a', testFlowDraft({ slug: 'race', comment: 'a' }));
    const results = await Promise.all([
      repos.releaseFlow(h.db, 'ws-a', 'race'),
      repos.releaseFlow(h.db, 'ws-a', 'race'),
      repos.releaseFlow(h.db, 'ws-a', 'race'),
    ]);
    expect(results.map((r) => r.version)).toEqual([1, 1, 1]);
    expect(results.filter((r) => r.created)).toHaveLength(1);
  });

  it('reads a flow with its live definition in one statement: none before a release, the live one after, own workspace only', async () => {
    await repos.createWorkspace(h.db, { id: 'ws-live', name: 'ws-live' });
    const draft = testFlowDraft({ slug: 'with-live', name: 'With live', tools: [{ name: 'with_live' }] });
    await repos.saveDraft(h.db, 'ws-live', draft);
    const before = await repos.getFlowWithLive(h.db, 'ws-live', 'with-live');
    expect(before?.flow).toMatchObject({ slug: 'with-live', liveVersion: null });
    expect(before?.live).toBeNull();
    await repos.releaseFlow(h.db, 'ws-live', 'with-live', { releaseNote: 'one' });
    await repos.saveDraft(h.db, 'ws-live', testFlowDraft({ slug: 'with-live', name: 'Edited', tools: [] }));
    const after = await repos.getFlowWithLive(h.db, 'ws-live', 'with-live');
    expect(after?.flow).toMatchObject({ slug: 'with-live', liveVersion: 1, name: 'Edited' });
    // The same definition the per-source read gives, the draft edited since left out.
    expect(after?.live).toEqual(await repos.getDefinition(h.db, 'ws-live', 'with-live', 'live'));
    expect(after?.live).toMatchObject({
      version: 1,
      source: 'live',
      literal: draft.literal,
      releaseNote: 'one',
    });
    expect(await repos.getFlowWithLive(h.db, 'ws-a', 'with-live')).toBeNull();
    expect(await repos.getFlowWithLive(h.db, 'ws-live', 'no-such-flow')).toBeNull();
  });

  it('lists flows in slug order with a bounded page', async () => {
    const first = await repos.listFlowSummaries(h.db, 'ws-a', { limit: 2 });
    expect(first.map((f) => f.slug)).toEqual(['enrich', 'race']);
    expect(first[0]).not.toHaveProperty('draftLiteral');
    expect(first[0]?.hasDraft).toBe(true);
    const rest = await repos.listFlowSummaries(h.db, 'ws-a', { limit: 10, afterSlug: 'race' });
    expect(rest.map((f) => f.slug)).toEqual(['roll', 'stable']);
    expect((await repos.listFlows(h.db, 'ws-a', { limit: 1000 })).length).toBe(4);
  });
});

describe('guards inside the release and draft transactions', () => {
  beforeAll(async () => {
    for (const id of ['ws-guard']) await repos.createWorkspace(h.db, { id, name: id });
  });

  it('enforces the expected visibility under the row lock, and changes nothing when it differs', async () => {
    await repos.saveDraft(h.db, 'ws-guard', testFlowDraft({ slug: 'vis' }));
    await expect(repos.releaseFlow(h.db, 'ws-guard', 'vis', { expectedPublic: true })).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('visibility'),
    });
    expect((await repos.getFlow(h.db, 'ws-guard', 'vis'))?.liveVersion).toBeNull();
    expect(await repos.releaseFlow(h.db, 'ws-guard', 'vis', { expectedPublic: false })).toMatchObject({
      version: 1,
      created: true,
    });
    // A draft that turned public after the caller checked is refused too.
    await repos.saveDraft(h.db, 'ws-guard', testFlowDraft({ slug: 'vis', public: true }));
    await expect(repos.releaseFlow(h.db, 'ws-guard', 'vis', { expectedPublic: false })).rejects.toMatchObject(
      {
        code: 'conflict',
      },
    );
    const flow = await repos.getFlow(h.db, 'ws-guard', 'vis');
    expect([flow?.liveVersion, flow?.latestVersion, flow?.isPublic]).toEqual([1, 1, false]);
  });

  it('enforces an approved definition text under the row lock: a draft saved since releases nothing', async () => {
    await repos.createWorkspace(h.db, { id: 'ws-approve', name: 'ws-approve' });
    const first = testFlowDraft({ slug: 'approved' });
    await repos.saveDraft(h.db, 'ws-approve', first);
    const approved = repos.literalSha256(first.literal);
    const edited = testFlowDraft({ slug: 'approved', comment: 'edited after approval' });
    await repos.saveDraft(h.db, 'ws-approve', edited);
    await expect(
      repos.releaseFlow(h.db, 'ws-approve', 'approved', { expectedLiteralSha256: approved }),
    ).rejects.toMatchObject({
      code: 'conflict',
      message: `flow approved: the definition to release changed since it was approved (approved sha256 ${approved}, now ${repos.literalSha256(edited.literal)}); nothing was released`,
    });
    expect((await repos.getFlow(h.db, 'ws-approve', 'approved'))?.latestVersion).toBeNull();
    const current = repos.literalSha256(edited.literal);
    expect(
      await repos.releaseFlow(h.db, 'ws-approve', 'approved', { expectedLiteralSha256: current }),
    ).toMatchObject({ version: 1, created: true });
    // A rollback is bound to the version's own text.
    await repos.saveDraft(h.db, 'ws-approve', first);
    await repos.releaseFlow(h.db, 'ws-approve', 'approved');
    await expect(
      repos.releaseFlow(h.db, 'ws-approve', 'approved', { version: 1, expectedLiteralSha256: approved }),
    ).rejects.toMatchObject({ code: 'conflict' });
    expect(
      await repos.releaseFlow(h.db, 'ws-approve', 'approved', { version: 1, expectedLiteralSha256: current }),
    ).toMatchObject({ version: 1, created: false, previousLiveVersion: 2 });
  });

  it('reports the note a release stored: a new version keeps it, a rollback reports the version its own', async () => {
    await repos.saveDraft(h.db, 'ws-guard', testFlowDraft({ slug: 'notes' }));
    expect(await repos.releaseFlow(h.db, 'ws-guard', 'notes', { releaseNote: 'first' })).toMatchObject({
      version: 1,
      releaseNote: 'first',
    });
    await repos.saveDraft(h.db, 'ws-guard', testFlowDraft({ slug: 'notes', comment: 'two' }));
    await repos.releaseFlow(h.db, 'ws-guard', 'notes');
    expect(
      await repos.releaseFlow(h.db, 'ws-guard', 'notes', { version: 1, releaseNote: 'rolled back' }),
    ).toMatchObject({ version: 1, created: false, releaseNote: 'first' });
  });

  it('bounds the versions of a flow and the flows of a workspace', async () => {
    const limits = { maxVersionsPerFlow: 2, maxFlowsPerWorkspace: 3 };
    for (const comment of ['a', 'b', 'c']) {
      await repos.saveDraft(h.db, 'ws-guard', testFlowDraft({ slug: 'many', comment }), limits);
      if (comment !== 'c') await repos.releaseFlow(h.db, 'ws-guard', 'many', { limits });
    }
    await expect(repos.releaseFlow(h.db, 'ws-guard', 'many', { limits })).rejects.toMatchObject({
      code: 'conflict',
      message: 'flow many has 2 versions, the limit; roll back to an existing version instead',
    });
    // Pointing live at an existing version still works at the limit.
    expect(await repos.releaseFlow(h.db, 'ws-guard', 'many', { version: 1, limits })).toMatchObject({
      version: 1,
    });
    expect(repos.MAX_VERSIONS_PER_FLOW).toBe(1000);
    expect(repos.MAX_FLOWS_PER_WORKSPACE).toBe(20_000);

    // ws-guard holds vis, notes and many: a fourth flow is refused, saving an existing one is not.
    await expect(
      repos.saveDraft(h.db, 'ws-guard', testFlowDraft({ slug: 'fourth' }), limits),
    ).rejects.toMatchObject({ code: 'conflict', message: 'a workspace has at most 3 flows' });
    expect(await repos.getFlow(h.db, 'ws-guard', 'fourth')).toBeNull();
    await repos.saveDraft(h.db, 'ws-guard', testFlowDraft({ slug: 'notes', comment: 'three' }), limits);
    await expect(
      repos.importFlows(h.db, 'ws-guard', [testFlowDraft({ slug: 'bulk' })], { release: false, limits }),
    ).rejects.toMatchObject({ code: 'conflict' });
  });
});

describe('tenancy', () => {
  it('another workspace cannot read, release, bind or overwrite a flow', async () => {
    await repos.saveDraft(
      h.db,
      'ws-a',
      testFlowDraft({ slug: 'secret-flow', name: 'A only', tools: [{ name: 'a_only' }] }),
    );
    await repos.releaseFlow(h.db, 'ws-a', 'secret-flow');
    expect(await repos.getFlow(h.db, 'ws-b', 'secret-flow')).toBeNull();
    for (const source of ['draft', 'latest', 'live', 'active', { version: 1 }] as const) {
      expect(await repos.getDefinition(h.db, 'ws-b', 'secret-flow', source)).toBeNull();
    }
    expect(await repos.getFlowVersion(h.db, 'ws-b', 'secret-flow', 1)).toBeNull();
    expect(await repos.listFlowVersions(h.db, 'ws-b', 'secret-flow', { limit: 10 })).toEqual([]);
    await expect(repos.releaseFlow(h.db, 'ws-b', 'secret-flow')).rejects.toMatchObject({ code: 'not_found' });
    await expect(repos.setFlowBindings(h.db, 'ws-b', 'secret-flow', 'live', {})).rejects.toMatchObject({
      code: 'not_found',
    });
    expect(await repos.setFlowTrustMetadata(h.db, 'ws-b', 'secret-flow', true)).toBeNull();
    expect(await repos.getFlowBindings(h.db, 'ws-b', 'secret-flow', 'live')).toBeNull();

    // the same slug in B is B's own flow; A's is untouched
    const b = await repos.saveDraft(h.db, 'ws-b', testFlowDraft({ slug: 'secret-flow', name: 'B copy' }));
    expect(b.created).toBe(true);
    const a = await repos.getFlow(h.db, 'ws-a', 'secret-flow');
    expect(a).toMatchObject({ name: 'A only', liveVersion: 1 });
    expect(b.flow.id).not.toBe(a?.id);
    expect(
      (await repos.searchFlowTools(h.db, 'ws-b', { query: 'a_only', limit: 10, includeDraft: true })).items,
    ).toEqual([]);
    expect((await repos.searchFlows(h.db, 'ws-b', { query: 'a only', limit: 10 })).items).toEqual([]);
  });
});
