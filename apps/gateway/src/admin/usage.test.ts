import { repos } from '@flowgate/db';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../testing.js';

// The usage routes over rollups seeded directly (the meter's own tests cover how calls become rollups): the answer's
// shape, the defaults, the validation, and that nobody reads a workspace they may not.

let h: Harness;
const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'flowgate';
let signAdmin: (workspaceId: string) => Promise<string>;

const H10 = new Date('2025-11-20T10:00:00.000Z');
const H11 = new Date('2025-11-20T11:00:00.000Z');
const D21 = new Date('2025-11-21T09:00:00.000Z');
const WINDOW = 'from=2025-11-20T00:00:00Z&to=2025-11-22T00:00:00Z';

/** `n` calls in duration bucket 3, (25, 50] ms. */
const durations = (n: number) => Array.from({ length: 12 }, (_, i) => (i === 3 ? n : 0));
const call = (over: Partial<repos.UsageCallDelta> & { count: number }): repos.UsageCallDelta => ({
  workspaceId: 'ws-use-a',
  hour: H10,
  method: 'tools/call',
  tool: 'run_flow',
  principal: 'key_1',
  client: 'claude',
  outcome: 'ok',
  durations: durations(over.count),
  ...over,
});
const run = (over: Partial<repos.UsageRunDelta>): repos.UsageRunDelta => ({
  workspaceId: 'ws-use-a',
  hour: H10,
  flow: 'report',
  ...repos.NO_RUN_COUNTS,
  ...over,
});

type Json = Record<string, unknown> & { code?: string; message?: string };
const get = async (path: string, token?: string) => {
  const res = await h.request('GET', path, token === undefined ? {} : { token });
  return { status: res.status, body: (await res.json()) as Json };
};
const usage = (ws: string, q: string, token?: string) => get(`/api/workspaces/${ws}/usage?${q}`, token);

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  h = await createHarness({
    env: {
      FLOWGATE_JWT_ISSUER: ISSUER,
      FLOWGATE_JWT_AUDIENCE: AUDIENCE,
      FLOWGATE_JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
    },
  });
  signAdmin = (workspaceId) =>
    new SignJWT({ workspaces: [{ id: workspaceId, role: 'admin' }] })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('alice')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(pair.privateKey);
  for (const id of ['ws-use-a', 'ws-use-b', 'ws-use-c']) await h.createWorkspace(id);
  const now = Date.now();
  await repos.applyUsageBatch(h.db.db, {
    id: 'seed-1',
    calls: [
      call({ count: 4 }),
      call({ count: 2, outcome: 'error', principal: 'key_2', client: '' }),
      call({ count: 1, outcome: 'blocked', tool: 'delete_flow' }),
      call({ count: 1, hour: H11, tool: 'list_runs', principal: 'jwt:alice', outcome: 'rate_limited' }),
      call({ count: 3, hour: D21, method: 'tools/list', tool: '' }),
      call({ count: 100, workspaceId: 'ws-use-b' }),
      // ws-use-c: one call this hour, one 9 days ago (outside the default 7 days). WINDOW lies a year before this test
      // was written, so neither row ever lands in it.
      call({ count: 5, workspaceId: 'ws-use-c', hour: repos.usageHourOf(now) }),
      call({ count: 50, workspaceId: 'ws-use-c', hour: repos.usageHourOf(now - 9 * 86_400_000) }),
    ],
    runs: [
      run({ started: 3, completed: 2, failed: 1, steps: 9, httpCalls: 4, llmTokens: 1200 }),
      run({ workspaceId: 'ws-use-b', started: 7, llmTokens: 99 }),
    ],
  });
});
afterAll(async () => h?.close());

describe('GET /api/workspaces/{ws}/usage', () => {
  it('answers the series by tool per day: points, percentiles, totals, the aligned window', async () => {
    const r = await usage('ws-use-a', `${WINDOW}&granularity=day&group_by=tool`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      from: '2025-11-20T00:00:00.000Z',
      to: '2025-11-22T00:00:00.000Z',
      granularity: 'day',
      groupBy: 'tool',
      points: [
        {
          time: '2025-11-20T00:00:00.000Z',
          group: 'delete_flow',
          count: 1,
          errors: 0,
          p50Ms: 37.5,
          p95Ms: 48.8,
        },
        {
          time: '2025-11-20T00:00:00.000Z',
          group: 'list_runs',
          count: 1,
          errors: 0,
          p50Ms: 37.5,
          p95Ms: 48.8,
        },
        {
          time: '2025-11-20T00:00:00.000Z',
          group: 'run_flow',
          count: 6,
          errors: 2,
          p50Ms: 37.5,
          p95Ms: 48.8,
        },
      ],
      // Totals count every call; by tool only tools/call has a group (the tools/list calls are left out).
      totals: { calls: 11, errors: 2, runs: 3, llmTokens: 1200 },
    });
  });

  it('groups by hour and by outcome, key, client, method and flow', async () => {
    const groups = async (groupBy: string, granularity = 'day') => {
      const r = await usage('ws-use-a', `${WINDOW}&granularity=${granularity}&group_by=${groupBy}`);
      expect(r.status, groupBy).toBe(200);
      return (r.body.points as Array<{ time: string; group: string; count: number }>).map((p) => [
        p.time.slice(0, 13),
        p.group,
        p.count,
      ]);
    };
    expect(await groups('outcome', 'hour')).toEqual([
      ['2025-11-20T10', 'blocked', 1],
      ['2025-11-20T10', 'error', 2],
      ['2025-11-20T10', 'ok', 4],
      ['2025-11-20T11', 'rate_limited', 1],
      ['2025-11-21T09', 'ok', 3],
    ]);
    expect(await groups('key')).toEqual([
      ['2025-11-20T00', 'jwt:alice', 1],
      ['2025-11-20T00', 'key_1', 5],
      ['2025-11-20T00', 'key_2', 2],
      ['2025-11-21T00', 'key_1', 3],
    ]);
    expect(await groups('client')).toEqual([
      ['2025-11-20T00', '(unknown)', 2],
      ['2025-11-20T00', 'claude', 6],
      ['2025-11-21T00', 'claude', 3],
    ]);
    expect(await groups('method')).toEqual([
      ['2025-11-20T00', 'tools/call', 8],
      ['2025-11-21T00', 'tools/list', 3],
    ]);
    const flows = await usage('ws-use-a', `${WINDOW}&group_by=flow`);
    expect(flows.body.points).toEqual([
      {
        time: '2025-11-20T00:00:00.000Z',
        group: 'report',
        count: 3,
        errors: 1,
        p50Ms: null,
        p95Ms: null,
        runs: { started: 3, completed: 2, failed: 1, cancelled: 0 },
        steps: 9,
        httpCalls: 4,
        llmTokens: 1200,
      },
    ]);
  });

  it('defaults to the last 7 days, by day, by tool', async () => {
    const before = Date.now();
    const r = await usage('ws-use-c', '');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ granularity: 'day', groupBy: 'tool', totals: { calls: 5 } });
    expect((r.body.points as unknown[]).map((p) => (p as { count: number }).count)).toEqual([5]);
    // [now - 7 days, now), aligned outward to whole days.
    const day = 86_400_000;
    expect(Date.parse(r.body.from as string)).toBe(Math.floor((before - 7 * day) / day) * day);
    expect(Date.parse(r.body.to as string)).toBe(Math.ceil(before / day) * day);
  });

  it('refuses a query it cannot answer with 400 invalid_request, before the database', async () => {
    for (const q of [
      'granularity=week',
      'group_by=workspace',
      'group_by=region',
      'from=yesterday',
      'from=2025-11-20T00:00:00',
      'from=2025-11-22T00:00:00Z&to=2025-11-20T00:00:00Z',
      'from=2025-11-20T00:00:00Z&to=2025-11-20T00:00:00Z',
      'from=2025-10-01T00:00:00Z&to=2026-11-20T00:00:00Z',
      'from=2026-10-01T00:00:00Z&to=2026-11-20T00:00:00Z&granularity=hour',
    ]) {
      const r = await usage('ws-use-a', q);
      expect(r.status, q).toBe(400);
      expect(r.body.code, q).toBe('invalid_request');
    }
    const span = await usage('ws-use-a', 'from=2025-10-01T00:00:00Z&to=2026-11-20T00:00:00Z');
    expect(span.body.message).toBe('from and to may be at most 400 days apart');
  });

  it("is for the workspace's admins: another workspace answers as every admin route does", async () => {
    const adminA = await signAdmin('ws-use-a');
    const own = await usage('ws-use-a', `${WINDOW}&group_by=outcome`, adminA);
    expect(own.status).toBe(200);
    expect(own.body.totals).toEqual({ calls: 11, errors: 2, runs: 3, llmTokens: 1200 });
    expect(JSON.stringify(own.body)).not.toContain('100');
    // B's usage, asked by A's admin: the same 403 as any other admin route of B, nothing of B in it.
    const foreign = await usage('ws-use-b', WINDOW, adminA);
    const reference = await get('/api/workspaces/ws-use-b/service-accounts', adminA);
    expect(foreign).toEqual(reference);
    expect(foreign.status).toBe(403);
    expect(foreign.body.points).toBeUndefined();
    // A key of B with every capability is no admin of A, nor of B.
    const bKey = await h.createServiceAccount('ws-use-b', ['workspace.full'], 'b-full');
    expect((await usage('ws-use-a', WINDOW, bKey.apiKey)).status).toBe(403);
    const notAdmin = await usage('ws-use-b', WINDOW, bKey.apiKey);
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.body.code).toBe('insufficient_role');
  });
});

describe('GET /api/admin/usage', () => {
  it("ranks workspaces by calls, with each day's calls", async () => {
    const r = await get(`/api/admin/usage?${WINDOW}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      from: '2025-11-20T00:00:00.000Z',
      to: '2025-11-22T00:00:00.000Z',
      granularity: 'day',
      groupBy: 'workspace',
      items: [
        { workspaceId: 'ws-use-b', calls: 100, errors: 0, runs: 7, llmTokens: 99, daily: [100, 0] },
        { workspaceId: 'ws-use-a', calls: 11, errors: 2, runs: 3, llmTokens: 1200, daily: [8, 3] },
      ],
    });
    expect((await get(`/api/admin/usage?${WINDOW}&group_by=workspace`)).body).toEqual(r.body);
  });

  it('is the operator’s alone, and validated like the workspace route', async () => {
    const adminA = await signAdmin('ws-use-a');
    const refused = await get(`/api/admin/usage?${WINDOW}`, adminA);
    expect(refused).toEqual(await get('/api/admin/workspaces', adminA));
    expect(refused.status).toBe(403);
    for (const q of [
      'group_by=tool',
      'granularity=month',
      'from=2025-11-22T00:00:00Z&to=2025-11-20T00:00:00Z',
    ]) {
      const r = await get(`/api/admin/usage?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.code, q).toBe('invalid_request');
    }
  });
});
