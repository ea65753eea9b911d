import type { FlowModel } from '@flowgate/flows';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../client.js';
import { flowTools } from '../schema.js';
import { allToolPages, createTestDb, type TestFlowSpec, testFlowDraft } from '../testing.js';
import * as repos from './index.js';

// Runs on PGlite by default and on real Postgres when DATABASE_URL is set (.ci/run does both).
let h: DbHandle;

beforeAll(async () => {
  h = await createTestDb();
  for (const id of ['ws-big']) await repos.createWorkspace(h.db, { id, name: id });
});
afterAll(async () => h?.close());

describe('search', () => {
  beforeAll(async () => {
    const specs: TestFlowSpec[] = [
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
      await repos.saveDraft(h.db, 'ws-search', testFlowDraft(s));
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
    await repos.saveDraft(h.db, ws, testFlowDraft({ slug: 'same-f', tools: [{ name: 'same_tool' }] }));
    await repos.releaseFlow(h.db, ws, 'same-f');
    await repos.saveDraft(
      h.db,
      ws,
      testFlowDraft({ slug: 'diff-f', tools: [{ name: 'diff_tool' }, { name: 'gone_tool' }] }),
    );
    await repos.releaseFlow(h.db, ws, 'diff-f');
    const edited = { slug: 'diff-f', name: 'Edited', tools: [{ name: 'diff_tool' }, { name: 'new_tool' }] };
    await repos.saveDraft(h.db, ws, testFlowDraft(edited));
    await repos.saveDraft(h.db, ws, testFlowDraft({ slug: 'draft-f', tools: [{ name: 'draft_only_tool' }] }));

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
      const d = testFlowDraft({
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
      expect(await allToolPages(h.db, 'ws-big', { query, limit: 37 }), query).toEqual(oracle(query));
    }
    // Shrunk bounds send the same queries through every branch: the second walk, and the sorted fallback after it.
    const saved = { ...repos.SEARCH_TUNING };
    Object.assign(repos.SEARCH_TUNING, { firstWalkRows: 5, indexMatchesMax: 20, secondWalkRows: 40 });
    try {
      for (const query of queries) {
        expect(await allToolPages(h.db, 'ws-big', { query, limit: 7 }), `${query} (shrunk)`).toEqual(
          oracle(query),
        );
      }
    } finally {
      Object.assign(repos.SEARCH_TUNING, saved);
    }
    // browse: every live tool once, in name order
    const all = await allToolPages(h.db, 'ws-big', { limit: 50 });
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
