import { EXAMPLE_FLOWS } from '@flowgate/flows';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../testing.js';

let h: Harness;
const WS = 'ws-review';
const EDN = { 'content-type': 'application/edn' };
const edn = EXAMPLE_FLOWS['enrich-company'] as string;

const get = async (path: string, token?: string) => {
  const res = await h.request('GET', path, token ? { token } : {});
  return { status: res.status, body: await res.json() };
};

beforeAll(async () => {
  h = await createHarness();
  await h.createWorkspace(WS);
  await h.createWorkspace('ws-review-b');
});
afterAll(() => h.close());

describe('review routes', () => {
  it('serves the live text a trust opt-in covers, and a diff of two released versions', async () => {
    const flow = `/api/workspaces/${WS}/flows/enrich-company`;
    expect((await get(`${flow}/trust`)).status).toBe(404);
    await h.request('PUT', `${flow}/draft`, { body: edn, headers: EDN });
    expect((await get(`${flow}/trust`)).body).toEqual({ version: null, literal: null, trusted: false });
    await h.request('POST', `${flow}/release`, { body: {} });
    await h.request('PUT', `${flow}/draft`, { body: edn.replace(':name', ':name '), headers: EDN });
    await h.request('POST', `${flow}/release`, { body: {} });
    const trust = await get(`${flow}/trust`);
    expect(trust.body).toMatchObject({ version: 2, trusted: false });
    expect(await h.request('PATCH', flow, { body: { trustMetadata: true } })).toHaveProperty('status', 200);
    expect((await get(`${flow}/trust`)).body).toMatchObject({ version: 2, trusted: true });

    const diff = await get(`${flow}/diff?from=1&to=2`);
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({ from: 1, to: 2 });
    expect(diff.body.patch).toContain('enrich-company v1');
    expect((await get(`${flow}/diff?from=1&to=9`)).status).toBe(404);
    expect((await get(`${flow}/diff?from=x&to=2`)).body.code).toBe('invalid_request');
  });

  it('answers 404 for an installation that does not exist or is not an id', async () => {
    for (const id of ['inst_AAAAAAAAAAAAAAAA', 'nope']) {
      expect((await get(`/api/workspaces/${WS}/installations/${id}/trust`)).body).toEqual({
        code: 'not_found',
        message: 'installation not found',
      });
    }
  });

  it('previews the tools/list of a service account under narrowing headers', async () => {
    const key = await h.createServiceAccount(WS, ['flows.read'], 'previewed');
    const path = `/api/workspaces/${WS}/service-accounts/${key.serviceAccountId}/tools-preview`;
    const all = await get(path);
    expect(all.status).toBe(200);
    expect(all.body.visible).toContain('search_flows');
    const narrowed = await get(`${path}?x-mcp-tools=search_flows`);
    expect(narrowed.body.visible).toEqual(['search_flows']);
    expect((await get(`${path}?x-mcp-tools=no_such_tool`)).body.code).toBe('invalid_request');
    const missing = `/api/workspaces/${WS}/service-accounts/sa_missing/tools-preview`;
    expect((await get(missing)).status).toBe(404);
    expect((await get(path, key.apiKey)).status).toBe(403);
  });

  it('lists workspaces to the operator only, page by page', async () => {
    const first = await get('/api/admin/workspaces?limit=1');
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(1);
    const next = await get(`/api/admin/workspaces?limit=200&cursor=${first.body.nextCursor}`);
    expect(next.body.items.map((w: { id: string }) => w.id)).not.toContain(first.body.items[0].id);
    expect((await get('/api/admin/workspaces?cursor=forged.x')).body.code).toBe('invalid_cursor');
    const key = await h.createServiceAccount(WS, ['flows.read']);
    expect((await get('/api/admin/workspaces', key.apiKey)).status).toBe(403);
  });

  it('filters the audit log', async () => {
    const q = `/api/workspaces/${WS}/audit?tool=service_accounts.create`;
    await expect.poll(async () => (await get(q)).body.items.length, { timeout: 5_000 }).toBeGreaterThan(0);
    const { body } = await get(q);
    expect(new Set(body.items.map((i: { action: string }) => i.action))).toEqual(
      new Set(['service_accounts.create']),
    );
    expect((await get(`${q}&since=2999-01-01T00:00:00Z`)).body.items).toEqual([]);
    expect((await get(`${q}&outcome=maybe`)).body.code).toBe('invalid_request');
  });
});
