import { isQuotaExceeded, type QuotaExceeded } from '@flowgate/core';
import { createDb, type DbHandle, repos, schema } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedFlow, seedWorkspace, testWorkspaceDeps } from './testing.js';
import { openWorkspace } from './workspace.js';

/**
 * Quotas are counted in the database by a conditional increment, so they hold under concurrency on both drivers:
 * 20 starts at once against a limit of 5 start exactly 5. Periods are UTC months (runs, tokens) and days (tool calls);
 * an injected clock moves across their ends.
 */

const ECHO = `{:slug :echo
 :invocations {:default {:inputs [{:name :n :type :integer :required true}]}}
 :interfaces {:mcp [{:tool-name "echo" :invocation :default}]}
 :flow (flow/step :function :echo {:code (fn [x] x) :input (flow/input)})}`;

function quotaSuite(name: string, open: () => Promise<DbHandle>) {
  describe(name, () => {
    let handle: DbHandle;
    let clock = new Date('2026-11-20T11:00:00.000Z');
    const WORKSPACES = ['ws-q-runs', 'ws-q-conc', 'ws-q-roll', 'ws-q-calls', 'ws-q-other', 'ws-q-null'];
    beforeAll(async () => {
      handle = await open();
      for (const ws of WORKSPACES) {
        await seedWorkspace(handle.db, ws, ws);
        await seedFlow(handle.db, ws, ECHO, { release: 'r1' });
      }
    }, 60_000);
    afterAll(async () => {
      await handle?.close();
    });

    const workspace = (id: string) =>
      openWorkspace(
        testWorkspaceDeps(handle.db, { now: () => clock, runs: { queued() {}, cancelRequested() {} } }),
        { workspaceId: id, actor: { kind: 'service_account', id: 'sa_quota' } },
      );
    const start = (id: string, n: number, idempotencyKey: string | null = null) =>
      workspace(id).runs.start({
        slug: 'echo',
        toolName: 'echo',
        invocation: null,
        installationId: null,
        target: null,
        input: { n },
        idempotencyKey,
        includeInstalled: false,
        allowDraft: false,
      });
    const counters = (ws: string) =>
      handle.db
        .select({
          quota: schema.workspaceQuotaCounters.quota,
          periodStart: schema.workspaceQuotaCounters.periodStart,
          used: schema.workspaceQuotaCounters.used,
        })
        .from(schema.workspaceQuotaCounters)
        .where(eq(schema.workspaceQuotaCounters.workspaceId, ws))
        .orderBy(schema.workspaceQuotaCounters.quota, schema.workspaceQuotaCounters.periodStart);
    const runCount = async (ws: string) =>
      (await handle.db.select().from(schema.runs).where(eq(schema.runs.workspaceId, ws))).length;
    const refusal = async (p: Promise<unknown>): Promise<QuotaExceeded> => {
      const error = await p.then(
        () => null,
        (e: unknown) => e,
      );
      if (!isQuotaExceeded(error)) throw new Error(`expected quota_exceeded, got ${String(error)}`);
      return error;
    };

    it('the first run start past runsPerMonth is refused with quota, limit and reset; nothing is stored', async () => {
      clock = new Date('2026-11-20T11:00:00.000Z');
      await workspace('ws-q-runs').policy.put({ quotas: { runsPerMonth: 3 } });
      for (let n = 0; n < 3; n++)
        await expect(start('ws-q-runs', n)).resolves.toMatchObject({ created: true });
      const error = await refusal(start('ws-q-runs', 3));
      expect(error.status).toBe(429);
      expect(error.toBody()).toEqual({
        code: 'quota_exceeded',
        message:
          'This workspace used its quota of 3 run starts per month (runsPerMonth); it resets at 2026-12-01T00:00:00.000Z',
        quota: 'runsPerMonth',
        limit: 3,
        resetsAt: '2026-12-01T00:00:00.000Z',
        // 10 days and 13 hours to the month's end
        retryAfterSeconds: 910_800,
      });
      expect(error.headers).toEqual({ 'retry-after': '910800' });
      expect(await runCount('ws-q-runs')).toBe(3);
      expect(await counters('ws-q-runs')).toEqual([
        { quota: 'runsPerMonth', periodStart: new Date('2026-11-01T00:00:00.000Z'), used: 3 },
      ]);
    });

    it('a retry of an earlier start answers its run, whether the quota is used up or not, and takes no unit', async () => {
      clock = new Date('2026-11-20T11:00:00.000Z');
      await workspace('ws-q-other').policy.put({ quotas: { runsPerMonth: 2 } });
      const first = await start('ws-q-other', 1, 'key-1');
      expect(first.created).toBe(true);
      // under the quota: the retry is the same run and the count stays at 1
      await expect(start('ws-q-other', 1, 'key-1')).resolves.toMatchObject({
        created: false,
        run: { id: first.run.id },
      });
      expect((await counters('ws-q-other'))[0]?.used).toBe(1);
      await start('ws-q-other', 2, 'key-2');
      // used up: the retry still gets its run, a new start is refused
      await expect(start('ws-q-other', 1, 'key-1')).resolves.toMatchObject({
        created: false,
        run: { id: first.run.id },
      });
      expect((await refusal(start('ws-q-other', 3, 'key-3'))).quota).toBe('runsPerMonth');
      expect(await runCount('ws-q-other')).toBe(2);
    });

    it('20 concurrent starts against runsPerMonth 5 start exactly 5; another workspace is untouched', async () => {
      clock = new Date('2026-11-20T11:00:00.000Z');
      await workspace('ws-q-conc').policy.put({ quotas: { runsPerMonth: 5 } });
      const before = await counters('ws-q-runs');
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, n) => start('ws-q-conc', n)));
      const started = outcomes.filter((o) => o.status === 'fulfilled');
      const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
      expect(started).toHaveLength(5);
      expect(refused).toHaveLength(15);
      for (const e of refused)
        expect(e).toMatchObject({ code: 'quota_exceeded', quota: 'runsPerMonth', limit: 5 });
      expect(await runCount('ws-q-conc')).toBe(5);
      expect(await counters('ws-q-conc')).toEqual([
        { quota: 'runsPerMonth', periodStart: new Date('2026-11-01T00:00:00.000Z'), used: 5 },
      ]);
      expect(await counters('ws-q-runs')).toEqual(before);
    });

    it('20 concurrent tool calls against toolCallsPerDay 5 admit exactly 5; the day rolls over at UTC midnight', async () => {
      clock = new Date('2026-11-20T23:59:59.000Z');
      const ws = workspace('ws-q-calls');
      await ws.policy.put({ quotas: { toolCallsPerDay: 5 } });
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => ws.quotas.admitToolCall(5)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
      const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
      expect(refused).toHaveLength(15);
      expect((refused[0] as QuotaExceeded).toBody()).toEqual({
        code: 'quota_exceeded',
        message:
          'This workspace used its quota of 5 MCP tool calls per day (toolCallsPerDay); it resets at 2026-11-21T00:00:00.000Z',
        quota: 'toolCallsPerDay',
        limit: 5,
        resetsAt: '2026-11-21T00:00:00.000Z',
        retryAfterSeconds: 1,
      });
      clock = new Date('2026-11-21T00:00:00.000Z');
      await expect(ws.quotas.admitToolCall(5)).resolves.toBeUndefined();
      expect(await counters('ws-q-calls')).toEqual([
        { quota: 'toolCallsPerDay', periodStart: new Date('2026-11-20T00:00:00.000Z'), used: 5 },
        { quota: 'toolCallsPerDay', periodStart: new Date('2026-11-21T00:00:00.000Z'), used: 1 },
      ]);
      // A third day's first call prunes what is older than the day before.
      clock = new Date('2026-11-22T08:00:00.000Z');
      await ws.quotas.admitToolCall(5);
      expect((await counters('ws-q-calls')).map((c) => c.periodStart.toISOString())).toEqual([
        '2026-11-21T00:00:00.000Z',
        '2026-11-22T00:00:00.000Z',
      ]);
      // The caller's view without the quota costs nothing: no count, whatever is stored.
      await ws.quotas.admitToolCall(null);
      expect((await counters('ws-q-calls'))[1]?.used).toBe(1);
      expect(await ws.quotas.standing()).toEqual([
        {
          quota: 'runsPerMonth',
          limit: null,
          used: 0,
          periodStart: '2026-11-01T00:00:00.000Z',
          resetsAt: '2026-12-01T00:00:00.000Z',
        },
        {
          quota: 'llmTokensPerMonth',
          limit: null,
          used: 0,
          periodStart: '2026-11-01T00:00:00.000Z',
          resetsAt: '2026-12-01T00:00:00.000Z',
        },
        {
          quota: 'toolCallsPerDay',
          limit: 5,
          used: 1,
          periodStart: '2026-11-22T00:00:00.000Z',
          resetsAt: '2026-11-23T00:00:00.000Z',
        },
      ]);
    });

    it('runsPerMonth rolls over at the UTC month end, and December rolls into January', async () => {
      const ws = 'ws-q-roll';
      await workspace(ws).policy.put({ quotas: { runsPerMonth: 1 } });
      clock = new Date('2026-11-30T23:59:59.500Z');
      await start(ws, 1);
      const late = await refusal(start(ws, 2));
      expect(late).toMatchObject({ resetsAt: '2026-12-01T00:00:00.000Z', retryAfterSeconds: 1 });
      clock = new Date('2026-12-01T00:00:00.000Z');
      await expect(start(ws, 3)).resolves.toMatchObject({ created: true });
      expect(await refusal(start(ws, 4))).toMatchObject({ resetsAt: '2027-01-01T00:00:00.000Z' });
      clock = new Date('2027-01-15T12:00:00.000Z');
      await expect(start(ws, 5)).resolves.toMatchObject({ created: true });
      // January's first unit pruned November; December (the period before) is kept.
      expect(await counters(ws)).toEqual([
        { quota: 'runsPerMonth', periodStart: new Date('2026-12-01T00:00:00.000Z'), used: 1 },
        { quota: 'runsPerMonth', periodStart: new Date('2027-01-01T00:00:00.000Z'), used: 1 },
      ]);
    });

    it('setting a quota to null removes it; other fields and quotas keep their values', async () => {
      clock = new Date('2026-11-20T11:00:00.000Z');
      const ws = workspace('ws-q-null');
      await ws.policy.put({ readOnly: true, quotas: { runsPerMonth: 1, toolCallsPerDay: 7 } });
      await start('ws-q-null', 1);
      await refusal(start('ws-q-null', 2));
      const put = await ws.policy.put({ quotas: { runsPerMonth: null } });
      expect(put.readOnly).toBe(true);
      expect(put.quotas).toEqual({ runsPerMonth: null, llmTokensPerMonth: null, toolCallsPerDay: 7 });
      expect((await ws.policy.get()).quotas).toEqual(put.quotas);
      for (let n = 2; n < 5; n++)
        await expect(start('ws-q-null', n)).resolves.toMatchObject({ created: true });
      // No quota, no count: the removed quota's rows are gone, and nothing counts while it is unset.
      await ws.quotas.admitToolCall(7);
      expect(await counters('ws-q-null')).toEqual([
        { quota: 'toolCallsPerDay', periodStart: new Date('2026-11-20T00:00:00.000Z'), used: 1 },
      ]);
      // Set again, it counts from then: one more start is admitted under a limit of 1.
      await ws.policy.put({ quotas: { runsPerMonth: 1 } });
      await expect(start('ws-q-null', 5)).resolves.toMatchObject({ created: true });
      await refusal(start('ws-q-null', 6));
      // A cached view that still has the call quota while the stored one is gone admits without counting.
      await ws.policy.put({ quotas: { toolCallsPerDay: null } });
      await expect(ws.quotas.admitToolCall(7)).resolves.toBeUndefined();
      expect(await counters('ws-q-null')).toEqual([
        { quota: 'runsPerMonth', periodStart: new Date('2026-11-01T00:00:00.000Z'), used: 1 },
      ]);
    });

    it('an after-the-fact quota (LLM tokens) is read with its standing and added to whatever the limit', async () => {
      const period = (await import('@flowgate/core')).quotaPeriod('llmTokensPerMonth', clock);
      expect(await repos.quotaStanding(handle.db, 'ws-q-other', 'llmTokensPerMonth', period)).toBeNull();
      await workspace('ws-q-other').policy.put({ quotas: { llmTokensPerMonth: 100 } });
      expect(await repos.quotaStanding(handle.db, 'ws-q-other', 'llmTokensPerMonth', period)).toEqual({
        limit: 100,
        used: 0,
      });
      await repos.addQuotaUse(handle.db, 'ws-q-other', 'llmTokensPerMonth', period, 70);
      await repos.addQuotaUse(handle.db, 'ws-q-other', 'llmTokensPerMonth', period, 70);
      expect(await repos.quotaStanding(handle.db, 'ws-q-other', 'llmTokensPerMonth', period)).toEqual({
        limit: 100,
        used: 140,
      });
      const rows = await handle.db
        .select()
        .from(schema.workspaceQuotaCounters)
        .where(
          and(
            eq(schema.workspaceQuotaCounters.quota, 'llmTokensPerMonth'),
            eq(schema.workspaceQuotaCounters.workspaceId, 'ws-q-conc'),
          ),
        );
      expect(rows).toEqual([]);
    });
  });
}

quotaSuite('quotas on PGlite', async () => {
  const handle = await createDb();
  await handle.migrate();
  return handle;
});

describe.skipIf(!process.env.DATABASE_URL)('on Postgres (DATABASE_URL)', () => {
  quotaSuite('quotas on Postgres', () => createTestDb());
});
