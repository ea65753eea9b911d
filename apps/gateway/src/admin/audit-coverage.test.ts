import { repos } from '@flowgate/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../testing.js';

/**
 * Every admin action is audited (docs/admin-api.md). The list below maps each mutating admin route to the action its
 * audit row carries; the first test fails when the app gains a mutating admin route that is not in it, the second
 * calls every route in it and finds its row. The MCP endpoints are left out: they audit per JSON-RPC call. The
 * console's forms call these same routes in process, so they are covered through them.
 */
const AUDITED_ADMIN_ROUTES: Record<string, string> = {
  'POST /api/admin/workspaces': 'workspaces.create',
  'POST /api/workspaces/:ws/service-accounts': 'service_accounts.create',
  'PATCH /api/workspaces/:ws/service-accounts/:sa': 'service_accounts.update',
  'POST /api/workspaces/:ws/service-accounts/:sa/keys': 'api_keys.create',
  'DELETE /api/workspaces/:ws/service-accounts/:sa/keys/:keyId': 'api_keys.revoke',
  'POST /api/workspaces/:ws/connections': 'connections.create',
  'PATCH /api/workspaces/:ws/connections/:id': 'connections.update',
  'POST /api/workspaces/:ws/connections/:id/rotate': 'connections.rotate',
  'POST /api/workspaces/:ws/connections/:id/disable': 'connections.disable',
  'POST /api/workspaces/:ws/connections/:id/enable': 'connections.enable',
  'POST /api/workspaces/:ws/connections/:id/check': 'connections.check',
  'DELETE /api/workspaces/:ws/connections/:id': 'connections.delete',
  'PUT /api/workspaces/:ws/mcp-policy': 'mcp_policy.update',
  'PUT /api/workspaces/:ws/flows/:slug/draft': 'flows.draft.save',
  'POST /api/workspaces/:ws/flows/:slug/release': 'flows.release',
  'PUT /api/workspaces/:ws/flows/:slug/bindings': 'flows.bindings.set',
  'PATCH /api/workspaces/:ws/flows/:slug': 'flows.trust.set',
  'POST /api/workspaces/:ws/installations': 'installations.create',
  'PATCH /api/workspaces/:ws/installations/:id': 'installations.update',
  'POST /api/workspaces/:ws/flows/:slug/runs': 'runs.start',
  'POST /api/workspaces/:ws/runs/:runId/cancel': 'runs.cancel',
};

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const isMcpEndpoint = (path: string) => path.endsWith('/mcp');

const WS = 'ws-audited';
const SOURCE = 'ws-audit-source';
const EDN = { 'content-type': 'application/edn' };
const FLOW = `{:slug :audited
 :requires [{:slot :crm :type :http-api}]
 :invocations {:default {:inputs [{:name :domain :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "audited_tool" :invocation :default}]}
 :flow (flow/step :function :wait {:code (fn [x] x) :input (flow/input)})}`;
const PUBLIC_FLOW = `{:slug :shared
 :invocations {:default {:inputs [{:name :domain :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "shared_tool" :invocation :default}]}
 :discover {:public true}
 :flow (flow/input)}`;

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
  await h.createWorkspace(SOURCE);
  await h.request('PUT', `/api/workspaces/${SOURCE}/flows/shared/draft`, { body: PUBLIC_FLOW, headers: EDN });
  await h.request('POST', `/api/workspaces/${SOURCE}/flows/shared/release`, { body: {} });
}, 60_000);
afterAll(async () => h?.close());

/** The workspace's audit rows written since `afterId`, oldest first. */
async function rowsSince(afterId: number) {
  await h.deps.audit.flush();
  const rows = await repos.listAuditEntries(h.db.db, WS, { limit: 500 });
  return rows.filter((r) => r.id > afterId).sort((a, b) => a.id - b.id);
}

describe('audit coverage of the admin API', () => {
  it('every mutating admin route of the app is in the audited list, and nothing else is', () => {
    const routes = new Set<string>();
    for (const r of h.app.routes) {
      if (!MUTATING.has(r.method) || isMcpEndpoint(r.path)) continue;
      if (r.path.startsWith('/api/admin/') || r.path.startsWith('/api/workspaces/')) {
        routes.add(`${r.method} ${r.path}`);
      }
    }
    expect([...routes].sort()).toEqual(Object.keys(AUDITED_ADMIN_ROUTES).sort());
  });

  it('each route writes its audit row, naming the actor', async () => {
    const ids: Record<string, string> = {};
    // Bodies that name ids made by earlier steps are functions, read when the step runs.
    type Step = {
      route: string;
      path: () => string;
      body?: unknown;
      headers?: Record<string, string>;
    };
    const steps: Step[] = [
      {
        route: 'POST /api/admin/workspaces',
        path: () => '/api/admin/workspaces',
        body: { id: WS, name: 'Audited' },
      },
      {
        route: 'POST /api/workspaces/:ws/service-accounts',
        path: () => `/api/workspaces/${WS}/service-accounts`,
        body: { name: 'bot', capabilities: ['flows.read'] },
      },
      {
        route: 'PATCH /api/workspaces/:ws/service-accounts/:sa',
        path: () => `/api/workspaces/${WS}/service-accounts/${ids.sa}`,
        body: { name: 'bot-2' },
      },
      {
        route: 'POST /api/workspaces/:ws/service-accounts/:sa/keys',
        path: () => `/api/workspaces/${WS}/service-accounts/${ids.sa}/keys`,
        body: {},
      },
      {
        route: 'DELETE /api/workspaces/:ws/service-accounts/:sa/keys/:keyId',
        path: () => `/api/workspaces/${WS}/service-accounts/${ids.sa}/keys/${ids.key}`,
      },
      {
        route: 'POST /api/workspaces/:ws/connections',
        path: () => `/api/workspaces/${WS}/connections`,
        body: { name: 'crm', type: 'http-api', baseUrl: 'https://api.example.test', auth: { type: 'none' } },
      },
      {
        route: 'PATCH /api/workspaces/:ws/connections/:id',
        path: () => `/api/workspaces/${WS}/connections/${ids.conn}`,
        body: { auth: { type: 'bearer', secret: 'initial-secret-value-0001' } },
      },
      {
        route: 'POST /api/workspaces/:ws/connections/:id/rotate',
        path: () => `/api/workspaces/${WS}/connections/${ids.conn}/rotate`,
        body: { secret: 'rotated-secret-value-0002' },
      },
      {
        route: 'POST /api/workspaces/:ws/connections/:id/disable',
        path: () => `/api/workspaces/${WS}/connections/${ids.conn}/disable`,
      },
      {
        route: 'POST /api/workspaces/:ws/connections/:id/enable',
        path: () => `/api/workspaces/${WS}/connections/${ids.conn}/enable`,
      },
      {
        route: 'POST /api/workspaces/:ws/connections/:id/check',
        path: () => `/api/workspaces/${WS}/connections/${ids.conn}/check`,
      },
      {
        route: 'PUT /api/workspaces/:ws/mcp-policy',
        path: () => `/api/workspaces/${WS}/mcp-policy`,
        body: { readOnly: false },
      },
      {
        route: 'PUT /api/workspaces/:ws/flows/:slug/draft',
        path: () => `/api/workspaces/${WS}/flows/audited/draft`,
        body: FLOW,
        headers: EDN,
      },
      {
        route: 'POST /api/workspaces/:ws/flows/:slug/release',
        path: () => `/api/workspaces/${WS}/flows/audited/release`,
        body: {},
      },
      {
        route: 'PUT /api/workspaces/:ws/flows/:slug/bindings',
        path: () => `/api/workspaces/${WS}/flows/audited/bindings`,
        body: () => ({ slots: { crm: ids.conn } }),
      },
      {
        route: 'PATCH /api/workspaces/:ws/flows/:slug',
        path: () => `/api/workspaces/${WS}/flows/audited`,
        body: { trustMetadata: true },
      },
      {
        route: 'POST /api/workspaces/:ws/installations',
        path: () => `/api/workspaces/${WS}/installations`,
        body: { sourceWorkspaceId: SOURCE, flowSlug: 'shared', versionPolicy: 'track-latest' },
      },
      {
        route: 'PATCH /api/workspaces/:ws/installations/:id',
        path: () => `/api/workspaces/${WS}/installations/${ids.inst}`,
        body: { enabled: true },
      },
      {
        route: 'POST /api/workspaces/:ws/flows/:slug/runs',
        path: () => `/api/workspaces/${WS}/flows/audited/runs`,
        body: { input: { domain: 'acme.test' } },
      },
      {
        route: 'POST /api/workspaces/:ws/runs/:runId/cancel',
        path: () => `/api/workspaces/${WS}/runs/${ids.run}/cancel`,
      },
      {
        route: 'DELETE /api/workspaces/:ws/connections/:id',
        path: () => `/api/workspaces/${WS}/connections/${ids.conn}?force=true`,
      },
    ];
    expect(new Set(steps.map((s) => s.route))).toEqual(new Set(Object.keys(AUDITED_ADMIN_ROUTES)));

    let last = 0;
    for (const step of steps) {
      const [method] = step.route.split(' ') as [string];
      const res = await h.request(method, step.path(), {
        ...(step.body !== undefined
          ? { body: typeof step.body === 'function' ? (step.body as () => unknown)() : step.body }
          : {}),
        ...(step.headers ? { headers: step.headers } : {}),
      });
      expect(res.status, `${step.route}: ${res.status}`).toBeLessThan(300);
      const body = res.status === 204 ? null : await res.json();
      ids.sa ??= body?.serviceAccountId;
      if (body?.key?.keyId) ids.key = body.key.keyId;
      if (step.route === 'POST /api/workspaces/:ws/connections') ids.conn = body.connectionId;
      if (step.route === 'POST /api/workspaces/:ws/installations') ids.inst = body.installationId;
      if (step.route === 'POST /api/workspaces/:ws/flows/:slug/runs') ids.run = body.runId;

      const rows = await rowsSince(last);
      const action = AUDITED_ADMIN_ROUTES[step.route];
      expect(
        rows.map((r) => r.action),
        step.route,
      ).toContain(action);
      const row = rows.find((r) => r.action === action);
      expect(row, step.route).toMatchObject({ kind: 'admin', outcome: 'ok', principalType: 'operator' });
      last = Math.max(last, ...rows.map((r) => r.id));
    }
  });
});

describe('admin run start and cancel audit rows', () => {
  it('name the actor, the run, the flow and the outcome, never the input', async () => {
    const { apiKey, serviceAccountId, keyId } = await h.createServiceAccount(WS, ['flows.read', 'flows.run']);
    // The coverage test deleted the bound connection: bind a fresh one.
    const conn = await h.request('POST', `/api/workspaces/${WS}/connections`, {
      body: { name: 'crm-2', type: 'http-api', baseUrl: 'https://api.example.test', auth: { type: 'none' } },
    });
    const { connectionId } = await conn.json();
    await h.request('PUT', `/api/workspaces/${WS}/flows/audited/bindings`, {
      body: { slots: { crm: connectionId } },
    });
    const before = (await rowsSince(0)).at(-1)?.id ?? 0;
    const started = await h.request('POST', `/api/workspaces/${WS}/flows/audited/runs`, {
      token: apiKey,
      body: { input: { domain: 'secret-domain.test' } },
    });
    expect(started.status).toBe(202);
    const { runId } = await started.json();
    const cancelled = await h.request('POST', `/api/workspaces/${WS}/runs/${runId}/cancel`, {
      token: apiKey,
    });
    expect(cancelled.status).toBe(200);
    const refused = await h.request('POST', `/api/workspaces/${WS}/flows/nope/runs`, {
      token: apiKey,
      body: { input: {} },
    });
    expect(refused.status).toBe(404);
    const unknownCancel = await h.request('POST', `/api/workspaces/${WS}/runs/run_unknown/cancel`, {
      token: apiKey,
    });
    expect(unknownCancel.status).toBe(404);

    const rows = (await rowsSince(before)).filter((r) => r.action.startsWith('runs.'));
    const actor = { kind: 'admin', principalType: 'service_account', principalId: serviceAccountId, keyId };
    expect(rows).toMatchObject([
      {
        ...actor,
        action: 'runs.start',
        outcome: 'ok',
        errorCode: null,
        runId,
        arguments: { flowSlug: 'audited', target: 'live' },
      },
      {
        ...actor,
        action: 'runs.cancel',
        outcome: 'ok',
        errorCode: null,
        runId,
        arguments: { runId, flowSlug: 'audited' },
      },
      {
        ...actor,
        action: 'runs.start',
        outcome: 'error',
        errorCode: 'not_found',
        runId: null,
        arguments: { flowSlug: 'nope', target: 'live' },
      },
      {
        ...actor,
        action: 'runs.cancel',
        outcome: 'error',
        errorCode: 'not_found',
        runId: null,
        arguments: { runId: 'run_unknown' },
      },
    ]);
    expect(JSON.stringify(rows)).not.toContain('secret-domain.test');
  });
});
