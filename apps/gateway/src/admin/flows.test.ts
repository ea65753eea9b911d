import { repos } from '@flowgate/db';
import { EXAMPLE_FLOWS } from '@flowgate/flows';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../testing.js';

let h: Harness;

const EDN = { 'content-type': 'application/edn' };

function flowEdn(
  slug: string,
  opts: { public?: boolean; name?: string; requires?: boolean; tool?: string } = {},
) {
  return [
    `{:slug :${slug}`,
    ` :name ${JSON.stringify(opts.name ?? slug)}`,
    opts.requires ? ' :requires [{:slot :crm :type :http-api}]' : '',
    ' :invocations {:default {:inputs [{:name :domain :type :string :required true}]}}',
    ` :interfaces {:mcp [{:tool-name ${JSON.stringify(opts.tool ?? `${slug.replace(/-/g, '_')}_tool`)} :invocation :default}]}`,
    ` :discover {:public ${opts.public ? 'true' : 'false'}}`,
    opts.requires ? ' :flow (flow/step :http :get {:connection :crm :path "/x"})}' : ' :flow (flow/input)}',
  ]
    .filter(Boolean)
    .join('\n');
}

const push = (
  ws: string,
  slug: string,
  body: string,
  token?: string,
  headers: Record<string, string> = EDN,
) =>
  h.request('PUT', `/api/workspaces/${ws}/flows/${slug}/draft`, {
    body,
    headers,
    ...(token ? { token } : {}),
  });

async function flowCount(ws: string) {
  return (await repos.listFlows(h.db.db, ws, { limit: 200 })).length;
}

async function connection(ws: string, name: string) {
  const res = await h.request('POST', `/api/workspaces/${ws}/connections`, {
    body: { name, type: 'http-api', baseUrl: 'https://api.example.test', auth: { type: 'none' } },
  });
  expect(res.status).toBe(201);
  return (await res.json()).connectionId as string;
}

beforeAll(async () => {
  h = await createHarness();
  for (const ws of ['ws-flows', 'ws-other', 'ws-installer']) await h.createWorkspace(ws);
});
afterAll(async () => h?.close());

describe('PUT /flows/{slug}/draft', () => {
  it('saves a valid definition and answers the documented shape', async () => {
    const res = await push('ws-flows', 'enrich-company', EXAMPLE_FLOWS['enrich-company'] as string);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ flowSlug: 'enrich-company', valid: true, diagnostics: [] });
    const flow = await (await h.request('GET', '/api/workspaces/ws-flows/flows/enrich-company')).json();
    expect(flow).toMatchObject({
      flowSlug: 'enrich-company',
      hasDraft: true,
      liveVersion: null,
      versions: [],
      bindings: { live: {}, draft: {} },
    });
    // a charset parameter is fine
    const again = await push(
      'ws-flows',
      'enrich-company',
      EXAMPLE_FLOWS['enrich-company'] as string,
      undefined,
      {
        'content-type': 'application/edn; charset=utf-8',
      },
    );
    expect(again.status).toBe(200);
  });

  const hostile: Array<[string, string, string]> = [
    ['mismatched closer', '{:bad ]', 'edn_mismatched_delimiter'],
    ['key without value', '{:slug}', 'edn_odd_map_entries'],
    ['lone quote', "'", 'edn_syntax_invalid'],
    ['integer past 2^53', '{:slug :hostile\n :flow 9007199254740992}', 'edn_number_out_of_range'],
    ['10,000 opening brackets', '['.repeat(10_000), 'edn_too_deep'],
    ['NUL byte', '{:slug :hostile\u0000 :flow (do)}', 'edn_invalid_character'],
    ['reader conditional', '{:slug :hostile\n :flow #?(:clj 1)}', 'edn_unsupported_syntax'],
    ['unknown tag', '{:slug :hostile :x #js {:a 1}}', 'edn_unknown_tag'],
    ['not a map', '[:slug :hostile]', 'definition_not_a_map'],
    ['missing slug', '{:flow (flow/input)}', 'missing_required_field'],
    ['bad tool name', flowEdn('hostile', { tool: 'no spaces allowed' }), 'invalid_tool_name'],
    [
      'unknown step type',
      '{:slug :hostile :flow (flow/step :shell :x {:cmd "rm -rf /"})}',
      'unknown_step_type',
    ],
    ['empty body', '', 'edn_empty_input'],
  ];

  it.each(hostile)(
    'refuses %s with 422 and positioned diagnostics, saving nothing',
    async (_name, body, code) => {
      const before = await flowCount('ws-flows');
      const res = await push('ws-flows', 'hostile', body);
      expect(res.status).toBe(422);
      const json = await res.json();
      expect(json.flowSlug).toBe('hostile');
      expect(json.valid).toBe(false);
      expect(json.diagnostics.map((d: { code: string }) => d.code)).toContain(code);
      for (const d of json.diagnostics) {
        expect(d).toEqual({
          severity: expect.stringMatching(/^(error|warning)$/),
          code: expect.any(String),
          message: expect.any(String),
          path: expect.any(String),
          line: d.line === null ? null : expect.any(Number),
          column: d.column === null ? null : expect.any(Number),
          hint: expect.any(String),
        });
      }
      expect(await flowCount('ws-flows')).toBe(before);
    },
  );

  it('refuses a slug that differs from the URL with a positioned diagnostic and saves nothing', async () => {
    const res = await push('ws-flows', 'other-slug', flowEdn('real-slug'));
    expect(res.status).toBe(422);
    const json = await res.json();
    expect(json.valid).toBe(false);
    expect(json.diagnostics[0]).toMatchObject({ code: 'invalid_slug', path: ':slug', line: 1, column: 8 });
    expect(await repos.getFlow(h.db.db, 'ws-flows', 'real-slug')).toBeNull();
    expect(await repos.getFlow(h.db.db, 'ws-flows', 'other-slug')).toBeNull();
  });

  it('answers 415 for another media type, 413 past 150 KB, 400 for a bad slug — saving nothing', async () => {
    const before = await flowCount('ws-flows');
    const json = await push('ws-flows', 'typed', flowEdn('typed'), undefined, {
      'content-type': 'application/json',
    });
    expect(json.status).toBe(415);
    expect((await json.json()).code).toBe('unsupported_media_type');
    const none = await push('ws-flows', 'typed', flowEdn('typed'), undefined, {
      'content-type': 'text/plain',
    });
    expect(none.status).toBe(415);

    const padded = `;; ${'x'.repeat(150 * 1024)}\n${flowEdn('big')}`;
    const big = await push('ws-flows', 'big', padded);
    expect(big.status).toBe(413);
    expect((await big.json()).code).toBe('payload_too_large');

    for (const slug of ['..%2F..%2Fetc', 'a%20b', '-lead', `${'a'.repeat(129)}`]) {
      const res = await push('ws-flows', slug, flowEdn('x'));
      expect(res.status, slug).toBe(400);
    }
    // URL normalisation turns /flows/%2e%2e/draft into another path, which is no route at all
    expect((await push('ws-flows', '%2e%2e', flowEdn('x'))).status).toBe(404);
    const get = await h.request('GET', '/api/workspaces/ws-flows/flows/..%2Fsecret');
    expect(get.status).toBe(400);
    expect(await flowCount('ws-flows')).toBe(before);
  });
});

describe('releases, listings and bindings', () => {
  it('releases v1, keeps it live while the draft changes, releases v2, rolls back', async () => {
    expect((await push('ws-flows', 'versions', flowEdn('versions', { name: 'one' }))).status).toBe(200);
    const r1 = await h.request('POST', '/api/workspaces/ws-flows/flows/versions/release', {
      body: { releaseNote: 'first' },
    });
    expect(r1.status).toBe(200);
    expect(await r1.json()).toEqual({
      flowSlug: 'versions',
      version: 1,
      created: true,
      previousLiveVersion: null,
      releaseNote: 'first',
    });

    await push('ws-flows', 'versions', flowEdn('versions', { name: 'two' }));
    let flow = await (await h.request('GET', '/api/workspaces/ws-flows/flows/versions')).json();
    expect(flow).toMatchObject({ name: 'two', liveVersion: 1, latestVersion: 1 });

    const r2 = await h.request('POST', '/api/workspaces/ws-flows/flows/versions/release', { body: {} });
    expect((await r2.json()).version).toBe(2);
    const same = await h.request('POST', '/api/workspaces/ws-flows/flows/versions/release', { body: {} });
    expect(await same.json()).toMatchObject({ version: 2, created: false });
    const back = await h.request('POST', '/api/workspaces/ws-flows/flows/versions/release', {
      body: { version: 1, releaseNote: 'not stored on a rollback' },
    });
    // The answer reports the note version 1 holds: a rollback never rewrites a version.
    expect(await back.json()).toEqual({
      flowSlug: 'versions',
      version: 1,
      created: false,
      previousLiveVersion: 2,
      releaseNote: 'first',
    });
    flow = await (await h.request('GET', '/api/workspaces/ws-flows/flows/versions')).json();
    expect(flow).toMatchObject({ liveVersion: 1, latestVersion: 2 });
    expect(
      flow.versions.map((v: { version: number; releaseNote: string | null }) => [v.version, v.releaseNote]),
    ).toEqual([
      [2, null],
      [1, 'first'],
    ]);

    const missing = await h.request('POST', '/api/workspaces/ws-flows/flows/versions/release', {
      body: { version: 9 },
    });
    expect(missing.status).toBe(404);
    const bad = await h.request('POST', '/api/workspaces/ws-flows/flows/versions/release', {
      body: { version: 'latest' },
    });
    expect(bad.status).toBe(400);
    const extra = await h.request('POST', '/api/workspaces/ws-flows/flows/versions/release', {
      body: { force: true },
    });
    expect(extra.status).toBe(400);
    const unknown = await h.request('POST', '/api/workspaces/ws-flows/flows/nope/release', { body: {} });
    expect(unknown.status).toBe(404);
    expect(
      (await (await h.request('GET', '/api/workspaces/ws-flows/flows/versions')).json()).liveVersion,
    ).toBe(1);
  });

  it('lists flows with a cursor', async () => {
    const first = await (await h.request('GET', '/api/workspaces/ws-flows/flows?limit=1')).json();
    expect(first.items).toHaveLength(1);
    expect(first.items[0]).not.toHaveProperty('draftLiteral');
    const second = await (
      await h.request('GET', `/api/workspaces/ws-flows/flows?limit=50&cursor=${first.nextCursor}`)
    ).json();
    expect([...first.items, ...second.items].map((f: { flowSlug: string }) => f.flowSlug)).toEqual([
      'enrich-company',
      'versions',
    ]);
    expect(second.nextCursor).toBeNull();
  });

  it("binds slots to this workspace's connections and refuses anything else without changing bindings", async () => {
    await push('ws-flows', 'bound', flowEdn('bound', { requires: true }));
    const mine = await connection('ws-flows', 'crm-api');
    const theirs = await connection('ws-other', 'crm-api');
    const ok = await h.request('PUT', '/api/workspaces/ws-flows/flows/bound/bindings', {
      body: { slots: { crm: mine } },
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ flowSlug: 'bound', target: 'live', slots: { crm: mine } });

    const cases: Array<[unknown, number]> = [
      [{ slots: { crm: theirs } }, 400],
      [{ slots: { mail: mine } }, 400],
      [{ slots: {} }, 400],
      [{ slots: { crm: mine }, target: 'staging' }, 400],
      [{ slots: { __proto__: mine } }, 400],
      [{ slots: { crm: 5 } }, 400],
    ];
    for (const [body, status] of cases) {
      const res = await h.request('PUT', '/api/workspaces/ws-flows/flows/bound/bindings', { body });
      expect(res.status, JSON.stringify(body)).toBe(status);
    }
    const refused = await h.request('PUT', '/api/workspaces/ws-flows/flows/bound/bindings', {
      body: { slots: { crm: theirs } },
    });
    expect(await refused.json()).toMatchObject({
      code: 'validation_failed',
      issues: [{ path: 'slots.crm', message: `connection ${theirs} not found in this workspace` }],
    });
    const draft = await h.request('PUT', '/api/workspaces/ws-flows/flows/bound/bindings', {
      body: { target: 'draft', slots: { crm: mine } },
    });
    expect((await draft.json()).target).toBe('draft');
    const flow = await (await h.request('GET', '/api/workspaces/ws-flows/flows/bound')).json();
    expect(flow.bindings).toEqual({ live: { crm: mine }, draft: { crm: mine } });
  });

  it('records every write in the audit log without the definition text', async () => {
    await h.deps.audit.flush();
    const entries = await repos.listAuditEntries(h.db.db, 'ws-flows', { limit: 200 });
    const actions = entries.map((e) => `${e.action}:${e.outcome}`);
    expect(actions).toContain('flows.draft.save:ok');
    expect(actions).toContain('flows.draft.save:error');
    expect(actions).toContain('flows.release:ok');
    expect(actions).toContain('flows.bindings.set:ok');
    expect(JSON.stringify(entries)).not.toContain(':invocations');
  });
});

describe('who may call', () => {
  it('needs a workspace admin to write (flows.manage authors through MCP), flows.read to read', async () => {
    const reader = await h.createServiceAccount('ws-flows', ['flows.read'], 'reader');
    const manager = await h.createServiceAccount('ws-flows', ['flows.manage', 'flows.read'], 'manager');
    const nobody = await h.createServiceAccount('ws-flows', ['runs.read'], 'nobody');
    const outsider = await h.createServiceAccount('ws-other', ['workspace.full'], 'outsider');

    expect((await push('ws-flows', 'by-reader', flowEdn('by-reader'), reader.apiKey)).status).toBe(403);
    expect((await push('ws-flows', 'by-outsider', flowEdn('by-outsider'), outsider.apiKey)).status).toBe(403);
    expect(await repos.getFlow(h.db.db, 'ws-flows', 'by-reader')).toBeNull();
    // forbidden before the media type is even looked at
    expect(
      (await push('ws-flows', 'by-reader', 'x', reader.apiKey, { 'content-type': 'text/plain' })).status,
    ).toBe(403);

    // A key with flows.manage is still not an admin: the admin API refuses it, and nothing is saved.
    const byManager = await push('ws-flows', 'by-manager', flowEdn('by-manager'), manager.apiKey);
    expect(byManager.status).toBe(403);
    expect((await byManager.json()).code).toBe('insufficient_role');
    expect(await repos.getFlow(h.db.db, 'ws-flows', 'by-manager')).toBeNull();
    expect((await push('ws-flows', 'by-manager', flowEdn('by-manager'))).status).toBe(200);
    const relByManager = await h.request('POST', '/api/workspaces/ws-flows/flows/by-manager/release', {
      token: manager.apiKey,
      body: {},
    });
    expect(relByManager.status).toBe(403);
    const rel = await h.request('POST', '/api/workspaces/ws-flows/flows/by-manager/release', { body: {} });
    expect(rel.status).toBe(200);
    const relByReader = await h.request('POST', '/api/workspaces/ws-flows/flows/by-manager/release', {
      token: reader.apiKey,
      body: {},
    });
    expect(relByReader.status).toBe(403);
    const bindByReader = await h.request('PUT', '/api/workspaces/ws-flows/flows/bound/bindings', {
      token: reader.apiKey,
      body: { slots: { crm: null } },
    });
    expect(bindByReader.status).toBe(403);

    expect((await h.request('GET', '/api/workspaces/ws-flows/flows', { token: reader.apiKey })).status).toBe(
      200,
    );
    expect(
      (await h.request('GET', '/api/workspaces/ws-flows/flows/by-manager', { token: reader.apiKey })).status,
    ).toBe(200);
    expect((await h.request('GET', '/api/workspaces/ws-flows/flows', { token: nobody.apiKey })).status).toBe(
      403,
    );
    expect(
      (await h.request('GET', '/api/workspaces/ws-flows/flows', { token: outsider.apiKey })).status,
    ).toBe(403);
    expect((await h.request('GET', '/api/workspaces/ws-flows/flows', { token: null })).status).toBe(401);

    const trust = await h.request('PATCH', '/api/workspaces/ws-flows/flows/by-manager', {
      token: manager.apiKey,
      body: { trustMetadata: true },
    });
    expect(trust.status).toBe(403);
    const trustByAdmin = await h.request('PATCH', '/api/workspaces/ws-flows/flows/by-manager', {
      body: { trustMetadata: true },
    });
    expect(await trustByAdmin.json()).toMatchObject({ flowSlug: 'by-manager', trustMetadata: true });
    const install = await h.request('POST', '/api/workspaces/ws-flows/installations', {
      token: manager.apiKey,
      body: { sourceWorkspaceId: 'ws-other', flowSlug: 'x', versionPolicy: 'track-latest' },
    });
    expect(install.status).toBe(403);
  });
});

describe('installations', () => {
  it('installs a public released flow, needs setup, binds the installer’s own connection, enables', async () => {
    await push('ws-flows', 'shared', flowEdn('shared', { public: true, requires: true }));
    await push('ws-flows', 'private', flowEdn('private'));
    await h.request('POST', '/api/workspaces/ws-flows/flows/shared/release', { body: {} });
    await h.request('POST', '/api/workspaces/ws-flows/flows/private/release', { body: {} });

    const created = await h.request('POST', '/api/workspaces/ws-installer/installations', {
      body: { sourceWorkspaceId: 'ws-flows', flowSlug: 'shared', versionPolicy: 'track-latest' },
    });
    expect(created.status).toBe(201);
    const inst = await created.json();
    expect(inst).toMatchObject({
      sourceWorkspaceId: 'ws-flows',
      flowSlug: 'shared',
      versionPolicy: 'track-latest',
      pinnedVersion: null,
      enabled: false,
      trustMetadata: false,
      slotBindings: {},
      available: true,
      version: 1,
      missingSlots: ['crm'],
    });

    for (const flowSlug of ['private', 'nope']) {
      const res = await h.request('POST', '/api/workspaces/ws-installer/installations', {
        body: { sourceWorkspaceId: 'ws-flows', flowSlug, versionPolicy: 'track-latest' },
      });
      expect(res.status).toBe(404);
      expect((await res.json()).message).toBe(`no public released flow ${flowSlug} in workspace ws-flows`);
    }
    const badBody = await h.request('POST', '/api/workspaces/ws-installer/installations', {
      body: { sourceWorkspaceId: 'ws-flows', flowSlug: 'shared', versionPolicy: 'pinned' },
    });
    expect(badBody.status).toBe(400);

    const enableEarly = await h.request(
      'PATCH',
      `/api/workspaces/ws-installer/installations/${inst.installationId}`,
      { body: { enabled: true } },
    );
    expect(enableEarly.status).toBe(400);
    const foreign = (await h.request('GET', '/api/workspaces/ws-flows/connections').then((r) => r.json()))
      .items[0].connectionId;
    const wrong = await h.request(
      'PATCH',
      `/api/workspaces/ws-installer/installations/${inst.installationId}`,
      {
        body: { slotBindings: { crm: foreign } },
      },
    );
    expect(wrong.status).toBe(400);
    const own = await connection('ws-installer', 'crm');
    const done = await h.request(
      'PATCH',
      `/api/workspaces/ws-installer/installations/${inst.installationId}`,
      {
        body: { slotBindings: { crm: own }, enabled: true, trustMetadata: true },
      },
    );
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({
      enabled: true,
      trustMetadata: true,
      slotBindings: { crm: own },
      missingSlots: [],
    });

    const list = await (await h.request('GET', '/api/workspaces/ws-installer/installations')).json();
    expect(list.items.map((i: { installationId: string }) => i.installationId)).toEqual([
      inst.installationId,
    ]);
    expect((await (await h.request('GET', '/api/workspaces/ws-flows/installations')).json()).items).toEqual(
      [],
    );
    // another workspace cannot change it; unknown ids are 404
    expect(
      (
        await h.request('PATCH', `/api/workspaces/ws-other/installations/${inst.installationId}`, {
          body: { enabled: false },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await h.request('PATCH', '/api/workspaces/ws-installer/installations/../x', {
          body: { enabled: false },
        })
      ).status,
    ).toBe(404);

    const found = await repos.searchFlowTools(h.db.db, 'ws-installer', { query: 'shared', limit: 10 });
    expect(found.items.map((t) => [t.origin, t.toolName, t.installationId, t.enabled])).toEqual([
      ['installation', 'shared_tool', inst.installationId, true],
    ]);
  });
});
