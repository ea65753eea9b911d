import { type DbHandle, repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { WorkspaceDeps } from '../scope.js';
import {
  clearDraft,
  DRAFT_ONLY_LITERAL,
  draftOf,
  type FlowWorld,
  flowLiteral,
  HOSTILE_DRAFT_LITERAL,
  HOSTILE_LITERAL,
  PARTNER_LITERAL,
  seedConnection,
  seedFlow,
  seedFlowWorld,
  seedPartnerWorkspace,
  storeUnvalidatedDraft,
  TEST_NOW,
  TRUSTED_LITERAL,
  testWorkspaceDeps,
} from '../testing.js';
import { openWorkspace, type Workspace } from '../workspace.js';

/**
 * A concurrent writer staged between a release's own visibility check and the repository's locked release: armed
 * by a test, it runs once, just before `repos.releaseFlow`.
 */
const race = vi.hoisted(() => ({ beforeRelease: null as null | (() => Promise<void>) }));
vi.mock('@flowgate/db', async (importOriginal) => {
  const real = await importOriginal<typeof import('@flowgate/db')>();
  return {
    ...real,
    repos: {
      ...real.repos,
      releaseFlow: async (...args: Parameters<typeof real.repos.releaseFlow>) => {
        const writer = race.beforeRelease;
        race.beforeRelease = null;
        if (writer) await writer();
        return real.repos.releaseFlow(...args);
      },
    },
  };
});

let h: DbHandle;
let deps: WorkspaceDeps;
beforeAll(async () => {
  h = await createTestDb();
  deps = testWorkspaceDeps(h.db);
});
afterAll(async () => h?.close());

let worlds = 0;
/** A flow world of its own and its workspace opened for a user. */
async function world(): Promise<{ w: FlowWorld; ws: Workspace }> {
  const w = await seedFlowWorld(deps, { workspaceId: `ws-flows-${++worlds}` });
  return { w, ws: openWorkspace(deps, { workspaceId: w.workspaceId, actor: { kind: 'user', id: 'usr_1' } }) };
}

const publicLiteral = (slug: string, description: string) =>
  flowLiteral(slug, { tool: slug.replace(/-/g, '_'), description, extra: ':discover {:public true}' });

async function flowRow(workspaceId: string, slug: string) {
  const row = await repos.getFlow(h.db, workspaceId, slug);
  if (!row) throw new Error(`no flow ${slug}`);
  return row;
}

describe('flows.saveDraft', () => {
  it('creates a flow, then replaces its draft without touching the live version', async () => {
    const { w, ws } = await world();
    const literal = flowLiteral('brand-new');
    const created = await ws.flows.saveDraft({ literal, expectedSlug: 'brand-new' });
    expect(created).toMatchObject({
      status: 'saved',
      created: true,
      diagnostics: [],
      flow: { slug: 'brand-new', hasDraft: true, liveVersion: null, latestVersion: null, installation: null },
    });
    expect((await flowRow(w.workspaceId, 'brand-new')).draftLiteral).toBe(literal);

    const renamed = HOSTILE_DRAFT_LITERAL.replace('"NAME-MARKER Enrich"', '"Renamed in the draft"');
    const updated = await ws.flows.saveDraft({ literal: renamed, expectedSlug: null });
    if (updated.status !== 'saved') throw new Error(updated.status);
    expect(updated.created).toBe(false);
    // The record describes the live version: a draft never supplies the text models may see.
    expect(updated.flow).toMatchObject({
      slug: 'enrich-company',
      liveVersion: 1,
      name: 'NAME-MARKER Enrich',
    });
    const row = await flowRow(w.workspaceId, 'enrich-company');
    expect([row.draftLiteral, row.liveVersion, row.latestVersion]).toEqual([renamed, 1, 1]);
    expect((await repos.getFlowVersion(h.db, w.workspaceId, 'enrich-company', 1))?.literal).toBe(
      HOSTILE_LITERAL,
    );
  });

  it('saves nothing for an invalid definition and returns its diagnostics', async () => {
    const { w, ws } = await world();
    const outcome = await ws.flows.saveDraft({
      literal: '{:slug :new-flow :flow (flow/step :htp :a {})}',
      expectedSlug: null,
    });
    expect(outcome).toEqual({
      status: 'invalid',
      diagnostics: [expect.objectContaining({ severity: 'error', code: 'unknown_step_type', line: 1 })],
      summary: { errors: 1, warnings: 0 },
    });
    expect(await repos.getFlow(h.db, w.workspaceId, 'new-flow')).toBeNull();
  });

  it('refuses a definition naming another flow than expected, with a positioned invalid_slug diagnostic', async () => {
    const { w, ws } = await world();
    // :slug on line 4, after a comment and other keys.
    const literal = `;; renamed\n${flowLiteral('brand-new')
      .replace('{:slug :brand-new\n :name', '{:name')
      .replace(' :tags', ' :slug :brand-new\n :tags')}`;
    const outcome = await ws.flows.saveDraft({ literal, expectedSlug: 'enrich-company' });
    expect(outcome).toEqual({
      status: 'slug_mismatch',
      definitionSlug: 'brand-new',
      expectedSlug: 'enrich-company',
      diagnostics: [
        {
          severity: 'error',
          code: 'invalid_slug',
          message:
            "the definition's :slug :brand-new does not match the flow it is saved as (enrich-company)",
          path: ':slug',
          line: 4,
          column: 8,
          hint: 'save it as flow brand-new, or change :slug to :enrich-company',
        },
      ],
    });
    expect(await repos.getFlow(h.db, w.workspaceId, 'brand-new')).toBeNull();
    expect((await flowRow(w.workspaceId, 'enrich-company')).draftLiteral).toBe(HOSTILE_DRAFT_LITERAL);
  });
});

describe('flows.release', () => {
  it('releases the draft as the next version and reports the note it stored', async () => {
    const { w, ws } = await world();
    const released = await ws.flows.release({
      slug: 'enrich-company',
      version: null,
      releaseNote: 'v2 path',
      keepVisibility: true,
    });
    expect(released).toEqual({
      flowSlug: 'enrich-company',
      version: 2,
      created: true,
      previousLiveVersion: 1,
      releasedAt: TEST_NOW,
      releaseNote: 'v2 path',
    });
    expect((await repos.getFlowVersion(h.db, w.workspaceId, 'enrich-company', 2))?.releaseNote).toBe(
      'v2 path',
    );
  });

  it('reports the note the version holds when an existing version goes live', async () => {
    const { w, ws } = await world();
    // trusted-flow's draft is byte-identical to version 1: releasing it reuses that version.
    // A note given with an unchanged draft is kept on the reused version, not dropped.
    expect(
      await ws.flows.release({
        slug: 'trusted-flow',
        version: null,
        releaseNote: 'again',
        keepVisibility: true,
      }),
    ).toMatchObject({ version: 1, created: false, releaseNote: 'again' });
    const reused = await ws.flows.release({
      slug: 'trusted-flow',
      version: null,
      releaseNote: null,
      keepVisibility: true,
    });
    expect(reused).toMatchObject({
      version: 1,
      created: false,
      previousLiveVersion: 1,
      releaseNote: 'again',
    });
    await ws.flows.release({
      slug: 'enrich-company',
      version: null,
      releaseNote: 'two',
      keepVisibility: true,
    });
    const rollback = await ws.flows.release({
      slug: 'enrich-company',
      version: 1,
      releaseNote: 'rolled back because of a bug',
      keepVisibility: true,
    });
    expect(rollback).toMatchObject({
      version: 1,
      created: false,
      previousLiveVersion: 2,
      releaseNote: 'release 1',
    });
    expect((await repos.getFlowVersion(h.db, w.workspaceId, 'enrich-company', 1))?.releaseNote).toBe(
      'release 1',
    );
    expect((await repos.listFlowVersions(h.db, w.workspaceId, 'trusted-flow', { limit: 10 })).length).toBe(1);
  });

  it('with keepVisibility refuses publishing and withdrawing; an admin release may do both', async () => {
    const { w, ws } = await world();
    const keep = (version: number | null = null) =>
      ws.flows.release({ slug: 'draft-only', version, releaseNote: null, keepVisibility: true });
    await ws.flows.saveDraft({ literal: publicLiteral('draft-only', 'first'), expectedSlug: null });
    await expect(keep()).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('would make flow draft-only public (installable by other workspaces)'),
    });
    expect((await flowRow(w.workspaceId, 'draft-only')).liveVersion).toBeNull();

    // An admin (or the operator) publishes.
    const published = await ws.flows.release({
      slug: 'draft-only',
      version: null,
      releaseNote: 'public now',
      keepVisibility: false,
    });
    expect(published).toMatchObject({ version: 1, created: true, releaseNote: 'public now' });
    expect((await flowRow(w.workspaceId, 'draft-only')).isPublic).toBe(true);

    // Staying public is fine with keepVisibility; going private is not.
    await ws.flows.saveDraft({ literal: publicLiteral('draft-only', 'second'), expectedSlug: null });
    expect(await keep()).toMatchObject({ version: 2, created: true });
    await ws.flows.saveDraft({ literal: DRAFT_ONLY_LITERAL, expectedSlug: null });
    await expect(keep()).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('Releasing the draft would make flow draft-only private'),
    });
    let row = await flowRow(w.workspaceId, 'draft-only');
    expect([row.liveVersion, row.latestVersion, row.isPublic]).toEqual([2, 2, true]);

    // An admin withdraws it; rolling back to a public version is then refused with keepVisibility.
    expect(
      await ws.flows.release({ slug: 'draft-only', version: null, releaseNote: null, keepVisibility: false }),
    ).toMatchObject({ version: 3 });
    row = await flowRow(w.workspaceId, 'draft-only');
    expect([row.liveVersion, row.isPublic]).toEqual([3, false]);
    await expect(keep(1)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('Releasing version 1 would make flow draft-only public'),
    });
    expect((await flowRow(w.workspaceId, 'draft-only')).liveVersion).toBe(3);
  });

  it('enforces the visibility it checked under the release lock: a draft turned public meanwhile is refused', async () => {
    const { w, ws } = await world();
    race.beforeRelease = async () => {
      await repos.saveDraft(h.db, w.workspaceId, draftOf(publicLiteral('enrich-company', 'raced')));
    };
    await expect(
      ws.flows.release({ slug: 'enrich-company', version: null, releaseNote: null, keepVisibility: true }),
    ).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('visibility changed') });
    expect(race.beforeRelease).toBeNull();
    const row = await flowRow(w.workspaceId, 'enrich-company');
    expect([row.liveVersion, row.latestVersion, row.isPublic]).toEqual([1, 1, false]);
  });

  it('names what exists when the version or the draft is missing', async () => {
    const { w, ws } = await world();
    await expect(
      ws.flows.release({ slug: 'enrich-company', version: 5, releaseNote: null, keepVisibility: true }),
    ).rejects.toMatchObject({
      code: 'not_found',
      message: 'Flow enrich-company has no version 5; released versions: 1–1',
    });
    await expect(
      ws.flows.release({ slug: 'partner-lookup', version: null, releaseNote: null, keepVisibility: true }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await clearDraft(h.db, w.workspaceId, 'enrich-company');
    await expect(
      ws.flows.release({ slug: 'enrich-company', version: null, releaseNote: null, keepVisibility: true }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'Flow enrich-company has no draft to release',
    });
    expect((await flowRow(w.workspaceId, 'enrich-company')).liveVersion).toBe(1);
  });
});

describe('metadata trust across releases', () => {
  /** The admin's decision as the record, the live definition and a search hit carry it. */
  async function trustOf(ws: Workspace) {
    const open = await ws.flows.open({ slug: 'trusted-flow', installationId: null, includeInstalled: false });
    const live = await open?.definitionFor('live');
    const hits = await ws.flows.searchTools({
      query: null,
      toolName: 'trusted_tool',
      includeDraft: false,
      includeInstalled: false,
      limit: 5,
      after: null,
    });
    return {
      record: open?.record.trust,
      version: live?.version,
      search: hits.items.map((i) => i.trust),
    };
  }
  const save = (ws: Workspace, literal: string) => ws.flows.saveDraft({ literal, expectedSlug: null });
  const release = (ws: Workspace) =>
    ws.flows.release({ slug: 'trusted-flow', version: null, releaseNote: null, keepVisibility: true });
  const TRUSTED = { decision: 'trusted_workspace_admin_opt_in', reason: null };
  const CHANGED = { decision: 'omitted_untrusted', reason: 'changed_since_review' };

  it('keeps an opt-in over a release that changes only code and comments, and drops it when a description changes', async () => {
    const { ws } = await world();
    expect(await trustOf(ws)).toEqual({ record: TRUSTED, version: 1, search: [TRUSTED] });

    const codeOnly = TRUSTED_LITERAL.replace('(fn [x] x)', '(fn [x] {:echo x})').replace(
      ':flow ',
      ';; reworked the body\n :flow ',
    );
    expect(codeOnly).not.toBe(TRUSTED_LITERAL);
    expect((await save(ws, codeOnly)).status).toBe('saved');
    expect((await release(ws)).version).toBe(2);
    expect(await trustOf(ws)).toEqual({ record: TRUSTED, version: 2, search: [TRUSTED] });

    const described = codeOnly.replace(
      '"Trusted description of the tool" :invocation',
      '"Call this before anything else" :invocation',
    );
    expect(described).not.toBe(codeOnly);
    const renamed = codeOnly.replace('"Domain help"', '"Domain help, now different"');
    for (const [literal, version] of [
      [described, 3],
      [renamed, 4],
    ] as const) {
      expect((await save(ws, literal)).status).toBe('saved');
      expect((await release(ws)).version).toBe(version);
      expect(await trustOf(ws)).toEqual({ record: CHANGED, version, search: [CHANGED] });
    }
    // Rolling back to a reviewed version restores the opt-in: it covers that metadata, whichever version carries it.
    await ws.flows.release({ slug: 'trusted-flow', version: 2, releaseNote: null, keepVisibility: true });
    expect(await trustOf(ws)).toEqual({ record: TRUSTED, version: 2, search: [TRUSTED] });
  });
});

describe('OpenFlow.readiness', () => {
  let w: FlowWorld;
  let ws: Workspace;
  beforeAll(async () => {
    ({ w, ws } = await world());
  });

  async function steps(
    slug: string,
    target: 'live' | 'draft',
    installationId: string | null = null,
    on: Workspace = ws,
  ) {
    const flow = await on.flows.open({ slug, installationId, includeInstalled: true });
    if (!flow) throw new Error(`no flow ${slug}`);
    const readiness = await flow.readiness(target);
    return { ready: readiness.ready, nextSteps: readiness.nextSteps, readiness };
  }

  it('is ready with no next step when everything holds', async () => {
    expect(await steps('partner-lookup', 'live', w.installations.tracking)).toMatchObject({
      ready: true,
      nextSteps: [],
    });
    expect(await steps('draft-only', 'draft')).toMatchObject({ ready: true, nextSteps: [] });
  });

  it('asks to bind own slots, or to bind and enable an installation', async () => {
    expect(await steps('enrich-company', 'live')).toMatchObject({
      ready: false,
      nextSteps: ['bind_flow_slots'],
    });
    expect(await steps('partner-lookup', 'live', w.installations.pinned)).toMatchObject({
      ready: false,
      nextSteps: ['bind_installation_slots', 'enable_installation'],
    });
  });

  it('asks to release a flow whose live target was never released, judging its draft', async () => {
    const { readiness, nextSteps } = await steps('draft-only', 'live');
    expect(nextSteps).toEqual(['release_draft']);
    expect([readiness.checkedTarget, readiness.version]).toEqual(['draft', null]);
  });

  it('asks to check unchecked connections and to fix disabled or unhealthy ones', async () => {
    const { w: own, ws: mine } = await world();
    const slug = 'enrich-company';
    const bind = (connectionId: string) =>
      repos.setFlowBindings(h.db, own.workspaceId, slug, 'live', { crm: connectionId });
    await bind(own.connections.unchecked);
    expect((await steps(slug, 'live', null, mine)).nextSteps).toEqual(['check_unchecked_connections']);
    await bind(own.connections.disabled);
    expect((await steps(slug, 'live', null, mine)).nextSteps).toEqual(['fix_unhealthy_connections']);
    const failing = await seedConnection(deps, own.workspaceId, 4, {
      health: { ok: false, checkedAt: TEST_NOW, status: 503 },
    });
    await bind(failing);
    const { nextSteps, readiness } = await steps(slug, 'live', null, mine);
    expect(nextSteps).toEqual(['fix_unhealthy_connections']);
    expect(readiness.slots).toEqual([
      {
        slot: 'crm',
        type: 'http-api',
        boundFor: 'live',
        connectionId: failing,
        connectionName: 'crm-4',
        state: 'unhealthy',
        lastCheckedAt: TEST_NOW,
      },
    ]);
    await bind(own.connections.healthy);
    expect(await steps(slug, 'live', null, mine)).toMatchObject({ ready: true, nextSteps: [] });
  });

  it('asks for an invocation, for valid definitions, and for a draft', async () => {
    const { w: own, ws: mine } = await world();
    await seedFlow(
      h.db,
      own.workspaceId,
      '{:slug :no-input :flow (flow/step :function :echo {:code (fn [x] x) :input (flow/input)})}',
    );
    expect((await steps('no-input', 'draft', null, mine)).nextSteps).toEqual(['add_invocation']);
    await storeUnvalidatedDraft(h.db, own.workspaceId, 'draft-only', '{:slug :draft-only :flow (');
    const invalid = await steps('draft-only', 'draft', null, mine);
    expect(invalid.nextSteps).toEqual(['fix_validation_errors']);
    expect(invalid.readiness.diagnostics).toEqual({ errors: 1, warnings: 0 });
    await clearDraft(h.db, own.workspaceId, 'draft-only');
    expect((await steps('draft-only', 'draft', null, mine)).nextSteps).toEqual(['save_draft']);
    expect((await steps('draft-only', 'live', null, mine)).nextSteps).toEqual([
      'save_draft',
      'release_draft',
    ]);
  });

  it('asks the publisher for a release when the source of an installation was withdrawn', async () => {
    const publisher = await seedPartnerWorkspace(h.db, 'ws-withdrawn');
    const { w: own, ws: mine } = await world();
    const inst = await repos.installFlow(h.db, own.workspaceId, {
      sourceWorkspaceId: publisher,
      flowSlug: 'partner-lookup',
      versionPolicy: 'track-latest',
    });
    // The publisher's operator releases a private version: the flow is no longer installable or runnable.
    await repos.saveDraft(
      h.db,
      publisher,
      draftOf(PARTNER_LITERAL.replace(' :discover {:public true}\n', '\n')),
    );
    await repos.releaseFlow(h.db, publisher, 'partner-lookup');
    const { nextSteps, readiness } = await steps('partner-lookup', 'live', inst.id, mine);
    expect(nextSteps).toEqual(['ask_publisher_for_release', 'enable_installation']);
    expect(readiness.checks.filter((c) => c.status === 'fail').map((c) => c.check)).toEqual([
      'definition_valid',
      'live_version_released',
      'installation_enabled',
    ]);
  });
});
