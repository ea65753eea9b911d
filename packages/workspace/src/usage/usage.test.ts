import { type DbHandle, repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOperator } from '../operator.js';
import { seedWorkspace, testWorkspaceDeps } from '../testing.js';
import { openWorkspace } from '../workspace.js';
import { MAX_USAGE_GROUPS, quantileMs, USAGE_OTHER_GROUP } from './index.js';

let h: DbHandle;
const H0 = new Date('2026-11-20T10:00:00.000Z');
const H1 = new Date('2026-11-20T11:00:00.000Z');
const D1 = new Date('2026-11-21T09:00:00.000Z');
const actor = { kind: 'service_account' as const, id: 'sa_1' };
const ws = (id: string) => openWorkspace(testWorkspaceDeps(h.db), { workspaceId: id, actor });

/** `n` calls all in bucket `bucket`. */
const durations = (n: number, bucket: number) => Array.from({ length: 12 }, (_, i) => (i === bucket ? n : 0));
const call = (over: Partial<repos.UsageCallDelta> & { count: number }, bucket = 3): repos.UsageCallDelta => ({
  workspaceId: 'ws-a',
  hour: H0,
  method: 'tools/call',
  tool: 'search',
  principal: 'key_1',
  client: 'claude',
  outcome: 'ok',
  durations: durations(over.count, bucket),
  ...over,
});
const run = (over: Partial<repos.UsageRunDelta>): repos.UsageRunDelta => ({
  workspaceId: 'ws-a',
  hour: H0,
  flow: 'nap',
  ...repos.NO_RUN_COUNTS,
  ...over,
});

beforeAll(async () => {
  h = await createTestDb();
  for (const id of ['ws-a', 'ws-b', 'ws-c']) await seedWorkspace(h.db, id, id);
  await repos.applyUsageBatch(h.db, {
    id: 'b1',
    calls: [
      call({ count: 4 }),
      call({ count: 2, outcome: 'error', principal: 'key_2', client: '' }, 5),
      call({ count: 1, outcome: 'blocked', tool: 'delete' }),
      call({ count: 3, method: 'tools/list', tool: '', client: 'cursor' }),
      call({ count: 5, hour: H1, tool: 'fetch', principal: 'jwt:alice' }),
      call({ count: 7, hour: D1 }),
      call({ count: 100, workspaceId: 'ws-b' }),
    ],
    runs: [
      run({ started: 3, completed: 2, failed: 1, steps: 9, httpCalls: 4, llmTokens: 1200 }),
      run({ hour: H1, flow: 'other-flow', started: 1, cancelled: 1 }),
      run({ workspaceId: 'ws-b', started: 50, llmTokens: 99 }),
    ],
  });
});
afterAll(async () => h?.close());

const range = { from: new Date('2026-11-20T00:00:00Z'), to: new Date('2026-11-22T00:00:00Z') };

describe('usage.series', () => {
  it('counts calls per hour and tool, tools only, with percentiles from the buckets', async () => {
    const s = await ws('ws-a').usage.series({ ...range, granularity: 'hour', groupBy: 'tool' });
    expect(s.points.map((p) => [p.time, p.group, p.count, p.errors])).toEqual([
      ['2026-11-20T10:00:00.000Z', 'delete', 1, 0],
      ['2026-11-20T10:00:00.000Z', 'search', 6, 2],
      ['2026-11-20T11:00:00.000Z', 'fetch', 5, 0],
      ['2026-11-21T09:00:00.000Z', 'search', 7, 0],
    ]);
    // search at 10:00: 4 calls in (25, 50] and 2 in (100, 250] ms.
    const search = s.points[1];
    expect(search?.p50Ms).toBe(43.8); // rank 3 of the 4 in (25, 50]: 25 + 25 * 3/4
    expect(search?.p95Ms).toBe(227.5); // rank 5.7: 100 + 150 * 1.7/2
    expect(s.totals).toEqual({ calls: 22, errors: 2, runs: 4, llmTokens: 1200 });
    expect(s.from).toBe('2026-11-20T00:00:00.000Z');
    expect(s.to).toBe('2026-11-22T00:00:00.000Z');
  });

  it('groups by day, method, key, client (unknown named) and outcome', async () => {
    const by = async (groupBy: 'method' | 'key' | 'client' | 'outcome') =>
      (await ws('ws-a').usage.series({ ...range, granularity: 'day', groupBy })).points.map((p) => [
        p.time.slice(0, 10),
        p.group,
        p.count,
      ]);
    expect(await by('method')).toEqual([
      ['2026-11-20', 'tools/call', 12],
      ['2026-11-20', 'tools/list', 3],
      ['2026-11-21', 'tools/call', 7],
    ]);
    expect(await by('key')).toEqual([
      ['2026-11-20', 'jwt:alice', 5],
      ['2026-11-20', 'key_1', 8],
      ['2026-11-20', 'key_2', 2],
      ['2026-11-21', 'key_1', 7],
    ]);
    expect(await by('client')).toEqual([
      ['2026-11-20', '(unknown)', 2],
      ['2026-11-20', 'claude', 10],
      ['2026-11-20', 'cursor', 3],
      ['2026-11-21', 'claude', 7],
    ]);
    expect(await by('outcome')).toEqual([
      ['2026-11-20', 'blocked', 1],
      ['2026-11-20', 'error', 2],
      ['2026-11-20', 'ok', 12],
      ['2026-11-21', 'ok', 7],
    ]);
  });

  it('answers runs, steps, HTTP calls and tokens by flow', async () => {
    const s = await ws('ws-a').usage.series({ ...range, granularity: 'hour', groupBy: 'flow' });
    expect(s.points).toEqual([
      {
        time: '2026-11-20T10:00:00.000Z',
        group: 'nap',
        count: 3,
        errors: 1,
        p50Ms: null,
        p95Ms: null,
        runs: { started: 3, completed: 2, failed: 1, cancelled: 0 },
        steps: 9,
        httpCalls: 4,
        llmTokens: 1200,
      },
      {
        time: '2026-11-20T11:00:00.000Z',
        group: 'other-flow',
        count: 1,
        errors: 0,
        p50Ms: null,
        p95Ms: null,
        runs: { started: 1, completed: 0, failed: 0, cancelled: 1 },
        steps: 0,
        httpCalls: 0,
        llmTokens: 0,
      },
    ]);
  });

  it("never shows another workspace's usage", async () => {
    const c = await ws('ws-c').usage.series({ ...range, granularity: 'day', groupBy: 'key' });
    expect(c.points).toEqual([]);
    expect(c.totals).toEqual({ calls: 0, errors: 0, runs: 0, llmTokens: 0 });
    const b = await ws('ws-b').usage.series({ ...range, granularity: 'day', groupBy: 'flow' });
    expect(b.points.map((p) => [p.group, p.count])).toEqual([['nap', 50]]);
    expect(b.totals).toEqual({ calls: 100, errors: 0, runs: 50, llmTokens: 99 });
  });

  it('reads only the hours in the range', async () => {
    const s = await ws('ws-a').usage.series({
      from: new Date('2026-11-20T11:30:00Z'),
      to: new Date('2026-11-21T09:00:00Z'),
      granularity: 'hour',
      groupBy: 'tool',
    });
    // Aligned outward to 11:00; 09:00 the next day is excluded (to is exclusive).
    expect(s.points.map((p) => [p.time, p.group, p.count])).toEqual([
      ['2026-11-20T11:00:00.000Z', 'fetch', 5],
    ]);
  });

  it('rejects out-of-bounds queries with invalid_usage_query', async () => {
    const w = ws('ws-a');
    const bad = [
      { from: range.to, to: range.from, granularity: 'day', groupBy: 'tool' },
      { from: new Date(0), to: new Date(401 * 86_400_000), granularity: 'day', groupBy: 'tool' },
      { from: new Date(0), to: new Date(32 * 86_400_000), granularity: 'hour', groupBy: 'tool' },
      { ...range, granularity: 'week', groupBy: 'tool' },
      { ...range, granularity: 'day', groupBy: 'workspace' },
      { from: new Date(Number.NaN), to: range.to, granularity: 'day', groupBy: 'tool' },
    ];
    for (const q of bad) {
      await expect(w.usage.series(q as never)).rejects.toMatchObject({
        code: 'invalid_usage_query',
        status: 400,
      });
    }
  });

  it(`folds groups past ${MAX_USAGE_GROUPS} into ${USAGE_OTHER_GROUP}`, async () => {
    await seedWorkspace(h.db, 'ws-many', 'many');
    const calls = Array.from({ length: MAX_USAGE_GROUPS + 5 }, (_, i) =>
      // tool t000 has the most calls, t204 the fewest
      call({ workspaceId: 'ws-many', tool: `t${String(i).padStart(3, '0')}`, count: 1_000 - i }),
    );
    await repos.applyUsageBatch(h.db, { id: 'many', calls, runs: [] });
    const s = await ws('ws-many').usage.series({ ...range, granularity: 'day', groupBy: 'tool' });
    expect(s.points).toHaveLength(MAX_USAGE_GROUPS);
    const other = s.points.find((p) => p.group === USAGE_OTHER_GROUP);
    // t199..t204 fold: 801 + 800 + ... + 796
    expect(other?.count).toBe(801 + 800 + 799 + 798 + 797 + 796);
    expect(s.points.some((p) => p.group === 't198')).toBe(true);
    expect(s.points.some((p) => p.group === 't199')).toBe(false);
  });
});

describe('applyUsageBatch', () => {
  it('adds a batch once: a retried batch id adds nothing', async () => {
    await seedWorkspace(h.db, 'ws-retry', 'retry');
    const batch = { id: 'retry-1', calls: [call({ workspaceId: 'ws-retry', count: 3 })], runs: [] };
    expect(await repos.applyUsageBatch(h.db, batch)).toBe('applied');
    expect(await repos.applyUsageBatch(h.db, batch)).toBe('duplicate');
    await repos.applyUsageBatch(h.db, { ...batch, id: 'retry-2' });
    const s = await ws('ws-retry').usage.series({ ...range, granularity: 'day', groupBy: 'tool' });
    expect(s.totals.calls).toBe(6);
  });
});

describe('operator.usageByWorkspace', () => {
  it('ranks workspaces by calls with calls per day', async () => {
    const op = openOperator({ db: h.db }, { actor: { kind: 'operator', id: 'op' } });
    const rows = await op.usageByWorkspace({ ...range, granularity: 'day' });
    const byId = Object.fromEntries(rows.map((r) => [r.workspaceId, r]));
    expect(rows[0]?.workspaceId).toBe('ws-many');
    expect(byId['ws-b']).toEqual({
      workspaceId: 'ws-b',
      calls: 100,
      errors: 0,
      runs: 50,
      llmTokens: 99,
      daily: [100, 0],
    });
    expect(byId['ws-a']).toEqual({
      workspaceId: 'ws-a',
      calls: 22,
      errors: 2,
      runs: 4,
      llmTokens: 1200,
      daily: [15, 7],
    });
    expect(byId['ws-c']).toBeUndefined();
    await expect(
      op.usageByWorkspace({ from: range.to, to: range.from, granularity: 'day' }),
    ).rejects.toMatchObject({
      code: 'invalid_usage_query',
    });
  });
});

describe('quantileMs', () => {
  it('interpolates inside the bucket and answers the open bucket with its lower bound', () => {
    expect(quantileMs(durations(0, 0), 0.5)).toBeNull();
    expect(quantileMs(durations(10, 0), 0.5)).toBe(2.5);
    expect(quantileMs(durations(2, 11), 0.95)).toBe(10_000);
  });
});
