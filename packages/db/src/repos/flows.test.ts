import { type FlowModel, validateFlow } from '@flowgate/flows';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../client.js';
import * as schema from '../schema.js';
import { flowTools, flowVersions } from '../schema.js';
import { createTestDb } from '../testing.js';
import * as repos from './index.js';

// Runs on PGlite by default and on real Postgres when DATABASE_URL is set (.ci/run does both).
let h: DbHandle;

interface FlowSpec {
  slug: string;
  name?: string;
  description?: string;
  tags?: string[];
  tools?: Array<{ name: string; description?: string }>;
  requires?: Array<{ slot: string; type: 'http-api' | 'llm-provider' | 'secret' }>;
  public?: boolean;
  comment?: string;
}

function flowEdn(spec: FlowSpec): string {
  const q = (s: string) => JSON.stringify(s);
  const requires = spec.requires ?? [];
  const tools = spec.tools ?? [];
  const body = requires.length
    ? `(do ${requires.map((r) => `(flow/step :http :call-${r.slot} {:connection :${r.slot} :path "/x"})`).join(' ')})`
    : '(flow/input)';
  return [
    spec.comment ? `;; ${spec.comment}` : '',
    `{:slug :${spec.slug}`,
    spec.name ? ` :name ${q(spec.name)}` : '',
    spec.description ? ` :description ${q(spec.description)}` : '',
    ` :tags [${(spec.tags ?? []).map(q).join(' ')}]`,
    requires.length
      ? ` :requires [${requires.map((r) => `{:slot :${r.slot} :type :${r.type}}`).join(' ')}]`
      : '',
    ' :invocations {:default {:inputs [{:name :x :type :string}]}}',
    ` :interfaces {:mcp [${tools
      .map(
        (t) =>
          `{:tool-name ${q(t.name)}${t.description ? ` :description ${q(t.description)}` : ''} :invocation :default}`,
      )
      .join(' ')}]}`,
    ` :discover {:public ${spec.public ? 'true' : 'false'}}`,
    ` :flow ${body}}`,
  ]
    .filter(Boolean)
    .join('\n');
}

function draftOf(spec: FlowSpec): { literal: string; model: FlowModel } {
  const literal = flowEdn(spec);
  const result = validateFlow(literal);
  if (!result.valid || !result.model)
    throw new Error(`test flow invalid: ${JSON.stringify(result.diagnostics)}`);
  return { literal, model: result.model };
}

async function conn(ws: string, id: string, type: 'http-api' | 'llm-provider' | 'secret' = 'http-api') {
  await repos.createConnection(h.db, ws, {
    id,
    name: id,
    type,
    baseUrl: 'https://api.example.test',
    authType: 'none',
    secretCiphertext: null,
    config: {},
  });
}

async function allToolPages(ws: string, options: Omit<repos.ToolSearchOptions, 'after'>) {
  const names: string[] = [];
  let after: repos.ToolSearchPosition | undefined;
  for (let i = 0; i < 1000; i++) {
    const page = await repos.searchFlowTools(h.db, ws, { ...options, after });
    names.push(
      ...page.items.map(
        (t) =>
          `${t.origin === 'installation' ? `${t.installationId}/` : ''}${t.flowSlug}:${t.source}:${t.toolName}`,
      ),
    );
    if (!page.next) return names;
    expect(repos.isToolSearchPosition(JSON.parse(JSON.stringify(page.next)))).toBe(true);
    after = page.next;
  }
  throw new Error('pagination did not end');
}

beforeAll(async () => {
  h = await createTestDb();
  for (const id of ['ws-a', 'ws-b', 'ws-c', 'ws-big']) await repos.createWorkspace(h.db, { id, name: id });
});
afterAll(async () => h?.close());

describe('drafts, versions and the live pointer', () => {
  it('walks draft → v1 → edited draft (live stays v1) → v2 → rollback to v1, with every source readable', async () => {
    const v1 = draftOf({ slug: 'enrich', name: 'Enrich', tools: [{ name: 'enrich_company' }] });
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

    const v2 = draftOf({ slug: 'enrich', name: 'Enrich v2', tools: [{ name: 'enrich_company_v2' }] });
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
    const d = draftOf({ slug: 'stable', tools: [{ name: 'stable_tool' }] });
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
      draftOf({ slug: 'stable', tools: [{ name: 'stable_tool' }], comment: 'edited' }),
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
    await repos.saveDraft(h.db, 'ws-a', draftOf({ slug: 'roll' }));
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
    await repos.saveDraft(h.db, 'ws-a', draftOf({ slug: 'race', comment: 'a' }));
    const results = await Promise.all([
      repos.releaseFlow(h.db, 'ws-a', 'race'),
      repos.releaseFlow(h.db, 'ws-a', 'race'),
      repos.releaseFlow(h.db, 'ws-a', 'race'),
    ]);
    expect(results.map((r) => r.version)).toEqual([1, 1, 1]);
    expect(results.filter((r) => r.created)).toHaveLength(1);
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
    for (const id of ['ws-guard', 'ws-trust']) await repos.createWorkspace(h.db, { id, name: id });
  });

  it('enforces the expected visibility under the row lock, and changes nothing when it differs', async () => {
    await repos.saveDraft(h.db, 'ws-guard', draftOf({ slug: 'vis' }));
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
    await repos.saveDraft(h.db, 'ws-guard', draftOf({ slug: 'vis', public: true }));
    await expect(repos.releaseFlow(h.db, 'ws-guard', 'vis', { expectedPublic: false })).rejects.toMatchObject(
      {
        code: 'conflict',
      },
    );
    const flow = await repos.getFlow(h.db, 'ws-guard', 'vis');
    expect([flow?.liveVersion, flow?.latestVersion, flow?.isPublic]).toEqual([1, 1, false]);
  });

  it('reports the note a release stored: a new version keeps it, a rollback reports the version its own', async () => {
    await repos.saveDraft(h.db, 'ws-guard', draftOf({ slug: 'notes' }));
    expect(await repos.releaseFlow(h.db, 'ws-guard', 'notes', { releaseNote: 'first' })).toMatchObject({
      version: 1,
      releaseNote: 'first',
    });
    await repos.saveDraft(h.db, 'ws-guard', draftOf({ slug: 'notes', comment: 'two' }));
    await repos.releaseFlow(h.db, 'ws-guard', 'notes');
    expect(
      await repos.releaseFlow(h.db, 'ws-guard', 'notes', { version: 1, releaseNote: 'rolled back' }),
    ).toMatchObject({ version: 1, created: false, releaseNote: 'first' });
  });

  it('bounds the versions of a flow and the flows of a workspace', async () => {
    const limits = { maxVersionsPerFlow: 2, maxFlowsPerWorkspace: 3 };
    for (const comment of ['a', 'b', 'c']) {
      await repos.saveDraft(h.db, 'ws-guard', draftOf({ slug: 'many', comment }), limits);
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
      repos.saveDraft(h.db, 'ws-guard', draftOf({ slug: 'fourth' }), limits),
    ).rejects.toMatchObject({ code: 'conflict', message: 'a workspace has at most 3 flows' });
    expect(await repos.getFlow(h.db, 'ws-guard', 'fourth')).toBeNull();
    await repos.saveDraft(h.db, 'ws-guard', draftOf({ slug: 'notes', comment: 'three' }), limits);
    await expect(
      repos.importFlows(h.db, 'ws-guard', [draftOf({ slug: 'bulk' })], { release: false, limits }),
    ).rejects.toMatchObject({ code: 'conflict' });
  });
});

describe('metadata trust pins', () => {
  it('pins an own flow opt-in to the live version metadata, and refuses one without a live version', async () => {
    await repos.saveDraft(h.db, 'ws-trust', draftOf({ slug: 'pinned' }));
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
    await repos.saveDraft(h.db, 'ws-trust', draftOf({ slug: 'shared', public: true }));
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
      draftOf({ slug: 'shared', public: true, description: 'v2 says something else' }),
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
    const base = draftOf({ slug: 'digest', description: 'Grüße – 漢字 🚀' }).model;
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
    await repos.saveDraft(h.db, 'ws-trust', draftOf({ slug: 'legacy' }));
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

describe('tenancy', () => {
  it('another workspace cannot read, release, bind or overwrite a flow', async () => {
    await repos.saveDraft(
      h.db,
      'ws-a',
      draftOf({ slug: 'secret-flow', name: 'A only', tools: [{ name: 'a_only' }] }),
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
    const b = await repos.saveDraft(h.db, 'ws-b', draftOf({ slug: 'secret-flow', name: 'B copy' }));
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

describe('bindings', () => {
  it('binds slots to connections of the same workspace only, of the right type, and unbinds with null', async () => {
    await conn('ws-a', 'conn_a_crm');
    await conn('ws-a', 'conn_a_llm', 'llm-provider');
    await conn('ws-b', 'conn_b_crm');
    await repos.saveDraft(
      h.db,
      'ws-a',
      draftOf({
        slug: 'bound',
        requires: [
          { slot: 'crm', type: 'http-api' },
          { slot: 'llm', type: 'llm-provider' },
        ],
      }),
    );
    expect(await repos.setFlowBindings(h.db, 'ws-a', 'bound', 'live', { crm: 'conn_a_crm' })).toEqual({
      crm: 'conn_a_crm',
    });

    const refused = async (slots: Record<string, string | null>, message: string) => {
      await expect(repos.setFlowBindings(h.db, 'ws-a', 'bound', 'live', slots)).rejects.toMatchObject({
        code: 'validation_failed',
        issues: [expect.objectContaining({ message })],
      });
    };
    await refused({ crm: 'conn_b_crm' }, 'connection conn_b_crm not found in this workspace');
    await refused({ crm: 'conn_missing' }, 'connection conn_missing not found in this workspace');
    await refused({ crm: 'conn_a_llm' }, 'slot crm needs a http-api connection; conn_a_llm is llm-provider');
    await refused({ mail: 'conn_a_crm' }, 'the flow does not require a slot mail; it requires: crm, llm');
    // one bad entry refuses the whole request
    await expect(
      repos.setFlowBindings(h.db, 'ws-a', 'bound', 'live', { llm: 'conn_a_llm', crm: 'conn_b_crm' }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    expect(await repos.getFlowBindings(h.db, 'ws-a', 'bound', 'live')).toEqual({ crm: 'conn_a_crm' });

    expect(await repos.setFlowBindings(h.db, 'ws-a', 'bound', 'draft', { llm: 'conn_a_llm' })).toEqual({
      llm: 'conn_a_llm',
    });
    expect(
      await repos.setFlowBindings(h.db, 'ws-a', 'bound', 'live', { llm: 'conn_a_llm', crm: null }),
    ).toEqual({
      llm: 'conn_a_llm',
    });
    expect(await repos.getFlowBindings(h.db, 'ws-a', 'bound', 'draft')).toEqual({ llm: 'conn_a_llm' });
  });
});

describe('installations', () => {
  beforeAll(async () => {
    await repos.saveDraft(
      h.db,
      'ws-a',
      draftOf({
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
      draftOf({ slug: 'public-unreleased', tools: [{ name: 'unreleased_tool' }], public: true }),
    );
    await repos.saveDraft(h.db, 'ws-a', draftOf({ slug: 'private-one', tools: [{ name: 'private_tool' }] }));
    await repos.releaseFlow(h.db, 'ws-a', 'private-one');
    await repos.saveDraft(
      h.db,
      'ws-a',
      draftOf({ slug: 'no-setup', tools: [{ name: 'no_setup_tool' }], public: true }),
    );
    await repos.releaseFlow(h.db, 'ws-a', 'no-setup');
    await conn('ws-b', 'conn_b_api');
    await conn('ws-b', 'conn_b_secret', 'secret');
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

    const everything = await allToolPages('ws-b', { limit: 50, includeDraft: true });
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

    await conn('ws-c', 'conn_c_api');
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
      draftOf({ slug: 'no-setup', tools: [{ name: 'no_setup_tool_v2' }], public: true }),
    );
    await repos.releaseFlow(h.db, 'ws-a', 'no-setup');
    const names = await allToolPages('ws-c', { query: 'no_setup', limit: 50 });
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
      draftOf({ slug: 'no-setup', tools: [{ name: 'no_setup_tool_v3' }], public: false }),
    );
    await repos.releaseFlow(h.db, 'ws-a', 'no-setup');
    expect(await repos.resolveInstalledDefinition(h.db, pinned)).toBeNull();
    expect(await allToolPages('ws-c', { query: 'no_setup', limit: 50 })).toEqual([]);
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

describe('search', () => {
  beforeAll(async () => {
    const specs: FlowSpec[] = [
      { slug: 'lookup', name: 'Lookup', tools: [{ name: 'lookup' }, { name: 'lookup_many' }] },
      {
        slug: 'crm-sync',
        name: 'CRM sync',
        description: 'Copies contacts to the CRM',
        tools: [{ name: 'sync_contacts' }],
      },
      {
        slug: 'finder',
        name: 'Finder',
        description: 'lookup helper',
        tools: [{ name: 'find_things', description: 'Lookup of things' }],
      },
      { slug: 'weird', name: '100% off_sale', tools: [{ name: 'x.y-z' }] },
    ];
    await repos.createWorkspace(h.db, { id: 'ws-search', name: 'search' });
    for (const s of specs) {
      await repos.saveDraft(h.db, 'ws-search', draftOf(s));
      await repos.releaseFlow(h.db, 'ws-search', s.slug);
    }
  });

  it('ranks exact tool name, then prefix, then text matches', async () => {
    const page = await repos.searchFlowTools(h.db, 'ws-search', { query: 'LOOKUP', limit: 10 });
    expect(page.items.map((t) => [t.toolName, t.rank])).toEqual([
      ['lookup', 0],
      ['lookup_many', 1],
      ['find_things', 2],
    ]);
    expect(page.next).toBeNull();
    const flows = await repos.searchFlows(h.db, 'ws-search', { query: 'lookup', limit: 10 });
    expect(flows.items.map((f) => [f.flowSlug, f.rank])).toEqual([
      ['lookup', 0],
      ['finder', 2],
    ]);
    expect(
      (await repos.searchFlows(h.db, 'ws-search', { query: 'crm', limit: 10 })).items.map((f) => [
        f.flowSlug,
        f.rank,
      ]),
    ).toEqual([['crm-sync', 1]]);
  });

  it('requires every term, treats LIKE wildcards literally, and finds exact names case-sensitively', async () => {
    expect(
      (await repos.searchFlowTools(h.db, 'ws-search', { query: 'copies crm', limit: 10 })).items.map(
        (t) => t.toolName,
      ),
    ).toEqual(['sync_contacts']);
    expect(
      (await repos.searchFlowTools(h.db, 'ws-search', { query: 'copies finder', limit: 10 })).items,
    ).toEqual([]);
    expect(
      (await repos.searchFlowTools(h.db, 'ws-search', { query: '%', limit: 10 })).items.map(
        (t) => t.toolName,
      ),
    ).toEqual(['x.y-z']);
    expect(
      (await repos.searchFlowTools(h.db, 'ws-search', { query: 'f_s', limit: 10 })).items.map(
        (t) => t.toolName,
      ),
    ).toEqual(['x.y-z']);
    expect(
      (await repos.searchFlowTools(h.db, 'ws-search', { query: '_', limit: 10 })).items.map(
        (t) => t.toolName,
      ),
    ).toEqual(['find_things', 'lookup_many', 'sync_contacts', 'x.y-z']);
    expect(
      (await repos.searchFlowTools(h.db, 'ws-search', { toolName: 'lookup', limit: 10 })).items.map(
        (t) => t.flowSlug,
      ),
    ).toEqual(['lookup']);
    expect((await repos.searchFlowTools(h.db, 'ws-search', { toolName: 'LOOKUP', limit: 10 })).items).toEqual(
      [],
    );
  });

  it('bounds the page size and the query', async () => {
    const page = await repos.searchFlowTools(h.db, 'ws-search', { limit: 10_000 });
    expect(page.items.length).toBeLessThanOrEqual(repos.SEARCH_LIMIT_MAX);
    expect(repos.normaliseQuery(`  A  b ${'c'.repeat(500)}`).text.length).toBe(repos.SEARCH_QUERY_MAX_LENGTH);
    expect(repos.normaliseQuery('a b c d e f g h i j a').terms).toEqual([
      'a',
      'b',
      'c',
      'd',
      'e',
      'f',
      'g',
      'h',
    ]);
    expect((await repos.searchFlowTools(h.db, 'ws-search', { limit: 0 })).items).toHaveLength(1);
  });

  it('browses each own tool once with drafts, saying how the draft compares, page after page', async () => {
    const ws = 'ws-browse';
    await repos.createWorkspace(h.db, { id: ws, name: ws });
    await repos.saveDraft(h.db, ws, draftOf({ slug: 'same-f', tools: [{ name: 'same_tool' }] }));
    await repos.releaseFlow(h.db, ws, 'same-f');
    await repos.saveDraft(
      h.db,
      ws,
      draftOf({ slug: 'diff-f', tools: [{ name: 'diff_tool' }, { name: 'gone_tool' }] }),
    );
    await repos.releaseFlow(h.db, ws, 'diff-f');
    const edited = { slug: 'diff-f', name: 'Edited', tools: [{ name: 'diff_tool' }, { name: 'new_tool' }] };
    await repos.saveDraft(h.db, ws, draftOf(edited));
    await repos.saveDraft(h.db, ws, draftOf({ slug: 'draft-f', tools: [{ name: 'draft_only_tool' }] }));

    const rows = async (options: Omit<repos.ToolSearchOptions, 'after'>) => {
      const out: Array<[string, string, string | null]> = [];
      let after: repos.ToolSearchPosition | undefined;
      do {
        const page = await repos.searchFlowTools(h.db, ws, { ...options, after });
        out.push(...page.items.map((t): [string, string, string | null] => [t.toolName, t.source, t.draft]));
        after = page.next ?? undefined;
      } while (after);
      return out;
    };
    const browsed: Array<[string, string, string | null]> = [
      ['diff_tool', 'live', 'differs'],
      ['draft_only_tool', 'draft', 'only'],
      ['gone_tool', 'live', 'absent'],
      ['new_tool', 'draft', 'only'],
      ['same_tool', 'live', 'same'],
    ];
    // Pages of one and of many agree: the collapse is in the statement, so cursors never skip or repeat a tool.
    expect(await rows({ limit: 1, includeDraft: true })).toEqual(browsed);
    expect(await rows({ limit: 50, includeDraft: true })).toEqual(browsed);
    // Without drafts, and in a text search or an exact lookup, rows are as before: no draft state.
    expect(await rows({ limit: 50 })).toEqual([
      ['diff_tool', 'live', null],
      ['gone_tool', 'live', null],
      ['same_tool', 'live', null],
    ]);
    expect(await rows({ limit: 50, includeDraft: true, query: 'same' })).toEqual([
      ['same_tool', 'draft', null],
      ['same_tool', 'live', null],
    ]);
    expect(await rows({ limit: 50, includeDraft: true, toolName: 'diff_tool' })).toEqual([
      ['diff_tool', 'draft', null],
      ['diff_tool', 'live', null],
    ]);
  });

  it('sends one statement text per query shape, with the query in its parameters', async () => {
    const a = repos.flowToolSearchStatement('ws-search', { query: 'alpha beta', limit: 5 });
    const b = repos.flowToolSearchStatement('ws-other', { query: 'gamma_x delta', limit: 9 });
    expect(b.sql).toBe(a.sql);
    expect(a.params).toContain('%alpha%');
    expect(b.params).toContain('%gamma\\_x%');
    expect(b.params).toContain('ws-other');
    expect(b.params).not.toContain('ws-search');
    expect(b.params).toContain(10);
    // A long term (checked whole on the row), drafts, one term and a resume point are other shapes.
    const other = [
      { query: 'alpha abcdefghijklmnop', limit: 5 },
      { query: 'alpha beta', limit: 5, includeDraft: true },
      { query: 'alpha', limit: 5 },
      {
        query: 'alpha beta',
        limit: 5,
        after: { rank: 2, key: 'k', group: 0, id: 'f', source: 'live', toolName: 'k' } as const,
      },
    ];
    for (const options of other) {
      expect(repos.flowToolSearchStatement('ws-search', options).sql, JSON.stringify(options)).not.toBe(
        a.sql,
      );
    }
    // The tuning bounds are part of the text: changing them (tests do) never reuses a stale text.
    const saved = { ...repos.SEARCH_TUNING };
    Object.assign(repos.SEARCH_TUNING, { firstWalkRows: 7 });
    try {
      expect(repos.flowToolSearchStatement('ws-search', { query: 'alpha beta', limit: 5 }).sql).not.toBe(
        a.sql,
      );
    } finally {
      Object.assign(repos.SEARCH_TUNING, saved);
    }
  });
});

describe('search over a workspace larger than the walk (both search paths)', () => {
  const vocabulary = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
  const models: FlowModel[] = [];

  beforeAll(async () => {
    const items: Array<{ literal: string; model: FlowModel }> = [];
    for (let i = 0; i < 1100; i++) {
      const word = vocabulary[i % vocabulary.length] as string;
      const rare = i % 97 === 0 ? ' zebra' : '';
      const d = draftOf({
        slug: `f${String(i).padStart(4, '0')}`,
        name: `Flow ${word}${rare}`,
        tools: [
          { name: `t_${word}_${i}` },
          ...(i % 3 === 0 ? [{ name: `u_${i}`, description: `extra ${word}` }] : []),
        ],
      });
      items.push(d);
      models.push(d.model);
    }
    await repos.importFlows(h.db, 'ws-big', items, { release: true, chunkSize: 300 });
  });

  it('pages through common and rare terms exactly as an independent filter would, without gaps or repeats', async () => {
    const oracle = (query: string) => {
      const terms = repos.normaliseQuery(query).terms;
      const rows = models.flatMap((m) =>
        repos.toolRowsFromModel(m).map((r) => ({ slug: m.slug, name: r.toolName, text: r.searchText })),
      );
      const q = terms.join(' ');
      const rank = (name: string) =>
        terms.length === 1 && name === q ? 0 : terms.length === 1 && name.startsWith(q) ? 1 : 2;
      return rows
        .filter((r) => rank(r.name) < 2 || terms.every((t) => r.text.includes(t)))
        .sort((a, b) => rank(a.name) - rank(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((r) => `${r.slug}:live:${r.name}`);
    };
    const queries = [
      'zebra',
      'alpha',
      'flow',
      'echo 7',
      'u_',
      't_golf_1',
      'nomatch',
      'extra hotel',
      'a_9',
      'extra',
      '1',
    ];
    for (const query of queries) {
      expect(await allToolPages('ws-big', { query, limit: 37 }), query).toEqual(oracle(query));
    }
    // Shrunk bounds send the same queries through every branch: the second walk, and the sorted fallback after it.
    const saved = { ...repos.SEARCH_TUNING };
    Object.assign(repos.SEARCH_TUNING, { firstWalkRows: 5, indexMatchesMax: 20, secondWalkRows: 40 });
    try {
      for (const query of queries) {
        expect(await allToolPages('ws-big', { query, limit: 7 }), `${query} (shrunk)`).toEqual(oracle(query));
      }
    } finally {
      Object.assign(repos.SEARCH_TUNING, saved);
    }
    // browse: every live tool once, in name order
    const all = await allToolPages('ws-big', { limit: 50 });
    expect(all).toHaveLength(models.reduce((n, m) => n + m.interfaces.mcp.length, 0));
    expect(new Set(all).size).toBe(all.length);
  });

  it('searches flows by slug and text across both paths', async () => {
    const names: string[] = [];
    let after: repos.FlowSearchPosition | undefined;
    do {
      const page = await repos.searchFlows(h.db, 'ws-big', { query: 'zebra', limit: 4, after });
      names.push(...page.items.map((f) => f.flowSlug));
      after = page.next ?? undefined;
    } while (after);
    expect(names).toEqual(models.filter((m) => m.name?.includes('zebra')).map((m) => m.slug));
    const saved = { ...repos.SEARCH_TUNING };
    Object.assign(repos.SEARCH_TUNING, { firstWalkRows: 5, indexMatchesMax: 20, secondWalkRows: 40 });
    try {
      for (const query of ['hotel', 'flow', 'zebra']) {
        const slugs: string[] = [];
        let next: repos.FlowSearchPosition | undefined;
        do {
          const page = await repos.searchFlows(h.db, 'ws-big', { query, limit: 9, after: next });
          slugs.push(...page.items.map((f) => f.flowSlug));
          next = page.next ?? undefined;
        } while (next);
        const text = (m: FlowModel) => repos.flowSearchText(m);
        expect(slugs, query).toEqual(models.filter((m) => text(m).includes(query)).map((m) => m.slug));
      }
    } finally {
      Object.assign(repos.SEARCH_TUNING, saved);
    }
    const exact = await repos.searchFlows(h.db, 'ws-big', { query: 'f0042', limit: 3 });
    expect(exact.items.map((f) => [f.flowSlug, f.rank])).toEqual([['f0042', 0]]);
  });

  it('keeps imported flows consistent with released ones', async () => {
    const flow = await repos.getFlow(h.db, 'ws-big', 'f0001');
    expect(flow).toMatchObject({ liveVersion: 1, latestVersion: 1 });
    const rows = await h.db
      .select()
      .from(flowTools)
      .where(and(eq(flowTools.workspaceId, 'ws-big'), eq(flowTools.flowSlug, 'f0001')));
    expect(rows.map((r) => r.source).sort()).toEqual(['draft', 'live']);
    // an unchanged draft of an imported flow reuses version 1
    expect(await repos.releaseFlow(h.db, 'ws-big', 'f0001')).toMatchObject({ version: 1, created: false });
  });
});
