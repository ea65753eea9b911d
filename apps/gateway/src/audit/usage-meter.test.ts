import { type Database, type DbHandle, repos, schema } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuditPruner, USAGE_BATCH_IDS_KEPT_MS } from './prune.js';
import { createAuditQueue } from './queue.js';
import { createUsageMeter, type MeteredCall, usagePrincipal } from './usage-meter.js';

let h: DbHandle;
const silent = pino({ level: 'silent' });
beforeAll(async () => {
  h = await createTestDb();
});
afterAll(async () => h?.close());

const call = (workspaceId: string, over: Partial<MeteredCall> = {}): MeteredCall => ({
  workspaceId,
  method: 'tools/call',
  tool: 'search',
  principal: 'key_1',
  client: 'claude',
  outcome: 'ok',
  durationMs: 30,
  ...over,
});

const byKey = <T>(rows: T[], key: (r: T) => string) =>
  rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
const callRows = async (workspaceId: string) =>
  byKey(
    (await h.db.select().from(schema.usageCalls)).filter((r) => r.workspaceId === workspaceId),
    (r) => `${r.hour.toISOString()} ${r.tool} ${r.outcome}`,
  );
const runRows = async (workspaceId: string) =>
  byKey(
    (await h.db.select().from(schema.usageRuns)).filter((r) => r.workspaceId === workspaceId),
    (r) => `${r.hour.toISOString()} ${r.flow}`,
  );

/** The database, except that the next `failures` batch statements fail before or after they took effect. */
function flaky(db: Database, state: { failures: number; afterCommit: boolean }): Database {
  return Object.create(db, {
    execute: {
      value: async (...args: Parameters<Database['execute']>) => {
        if (state.failures > 0 && !state.afterCommit) {
          state.failures--;
          throw new Error('connection refused');
        }
        const result = await db.execute(...args);
        if (state.failures > 0) {
          state.failures--;
          throw new Error('connection reset before the commit was acknowledged');
        }
        return result;
      },
    },
  }) as Database;
}

describe('usage meter', () => {
  it('counts calls per hour, rolling over with the clock, with durations in their buckets', async () => {
    let t = Date.parse('2026-11-20T10:59:59.000Z');
    const meter = createUsageMeter(h.db, silent, { now: () => t });
    meter.call(call('ws-hour', { durationMs: 3 }));
    meter.call(call('ws-hour', { durationMs: 30 }));
    meter.call(call('ws-hour', { outcome: 'error', durationMs: 20_000 }));
    t += 1_000; // 11:00:00: the next hour
    meter.call(call('ws-hour', { durationMs: 7 }));
    expect(meter.pending).toBe(true);
    await meter.flush();
    expect(meter.pending).toBe(false);
    const rows = await callRows('ws-hour');
    expect(rows.map((r) => [r.hour.toISOString(), r.outcome, r.count, r.d0, r.d1, r.d3, r.d11])).toEqual([
      ['2026-11-20T10:00:00.000Z', 'error', 1, 0, 0, 0, 1],
      ['2026-11-20T10:00:00.000Z', 'ok', 2, 1, 0, 1, 0],
      ['2026-11-20T11:00:00.000Z', 'ok', 1, 0, 1, 0, 0],
    ]);
    // Later counts of the same row add to it.
    meter.call(call('ws-hour', { durationMs: 7 }));
    await meter.flush();
    expect((await callRows('ws-hour')).at(-1)?.count).toBe(2);
  });

  it('counts runs by flow: started, and ended by status with their usage', async () => {
    const meter = createUsageMeter(h.db, silent, { now: () => Date.parse('2026-11-20T10:30:00Z') });
    const ended = { workspaceId: 'ws-runs', flowSlug: 'nap', steps: 2, httpCalls: 1, llmTokens: 10 };
    for (let i = 0; i < 4; i++) meter.runStarted({ workspaceId: 'ws-runs', flowSlug: 'nap' });
    meter.runEnded({ ...ended, status: 'completed' });
    meter.runEnded({ ...ended, status: 'failed' });
    meter.runEnded({ ...ended, status: 'timed-out' });
    meter.runEnded({ ...ended, status: 'cancelled', steps: 0, httpCalls: 0, llmTokens: 0 });
    await meter.flush();
    const [row] = await runRows('ws-runs');
    expect(row).toMatchObject({
      flow: 'nap',
      started: 4,
      completed: 1,
      failed: 2,
      cancelled: 1,
      steps: 6,
      httpCalls: 3,
      llmTokens: 30,
    });
  });

  it('retries a batch whose commit was not acknowledged without counting it twice', async () => {
    const state = { failures: 1, afterCommit: true };
    const ids: string[] = [];
    let n = 0;
    const meter = createUsageMeter(flaky(h.db, state), silent, {
      batchId: () => {
        const id = `retry-batch-${++n}`;
        ids.push(id);
        return id;
      },
    });
    for (let i = 0; i < 5; i++) meter.call(call('ws-retry'));
    await meter.flush(); // committed, but the answer was lost: the batch stays
    expect(meter.pending).toBe(true);
    expect((await callRows('ws-retry'))[0]?.count).toBe(5);
    meter.call(call('ws-retry'));
    await meter.flush(); // the same batch again (already applied: adds nothing), then the new one
    expect(meter.pending).toBe(false);
    expect(ids).toEqual(['retry-batch-1', 'retry-batch-2']);
    expect((await callRows('ws-retry'))[0]?.count).toBe(6);
  });

  it('keeps a batch the database refused and writes it once it answers', async () => {
    const state = { failures: 2, afterCommit: false };
    const meter = createUsageMeter(flaky(h.db, state), silent);
    meter.call(call('ws-down'));
    await meter.flush();
    meter.call(call('ws-down'));
    await meter.flush();
    expect(await callRows('ws-down')).toEqual([]);
    await meter.flush();
    expect((await callRows('ws-down'))[0]?.count).toBe(2);
  });

  it('a crash loses only what was not yet written: acknowledged batches stay', async () => {
    const meter = createUsageMeter(h.db, silent);
    for (let i = 0; i < 3; i++) meter.call(call('ws-crash'));
    meter.runStarted({ workspaceId: 'ws-crash', flowSlug: 'nap' });
    await meter.flush();
    // Counted but never flushed, then the process dies: the meter is simply dropped.
    for (let i = 0; i < 7; i++) meter.call(call('ws-crash'));
    // A new process starts counting afresh.
    const next = createUsageMeter(h.db, silent);
    next.call(call('ws-crash'));
    await next.flush();
    expect((await callRows('ws-crash'))[0]?.count).toBe(4);
    expect((await runRows('ws-crash'))[0]?.started).toBe(1);
  });

  it('is flushed by the audit queue, on its ticks and on close', async () => {
    const meter = createUsageMeter(h.db, silent);
    const queue = createAuditQueue(h.db, silent, { flushIntervalMs: 20, usage: meter });
    meter.call(call('ws-queue'));
    await expect.poll(async () => (await callRows('ws-queue'))[0]?.count, { timeout: 5_000 }).toBe(1);
    meter.call(call('ws-queue'));
    meter.call(call('ws-queue'));
    await queue.close();
    expect((await callRows('ws-queue'))[0]?.count).toBe(3);
  });

  it('bounds memory: a batch is cut at maxKeys rows and at most maxBatches wait', async () => {
    const state = { failures: 100, afterCommit: false };
    const meter = createUsageMeter(flaky(h.db, state), silent, { maxKeys: 2, maxBatches: 2 });
    for (let i = 0; i < 10; i++) meter.call(call('ws-bound', { tool: `t${i}` }));
    await meter.flush();
    state.failures = 0;
    await meter.flush();
    // 10 rows at 2 per batch: 5 batches, of which the newest 2 were kept (t6..t9).
    expect((await callRows('ws-bound')).map((r) => r.tool)).toEqual(['t6', 't7', 't8', 't9']);
  });

  it('counts nothing when off', async () => {
    const meter = createUsageMeter(h.db, silent, { enabled: false });
    meter.call(call('ws-off'));
    meter.runStarted({ workspaceId: 'ws-off', flowSlug: 'nap' });
    expect(meter.pending).toBe(false);
    await meter.flush();
    expect(await callRows('ws-off')).toEqual([]);
    expect(await runRows('ws-off')).toEqual([]);
  });

  it('names principals by key, then JWT subject', () => {
    expect(usagePrincipal({ kind: 'service_account', id: 'sa_1', keyId: 'key_9' })).toBe('key_9');
    expect(usagePrincipal({ kind: 'user', id: 'alice', keyId: null })).toBe('jwt:alice');
    expect(usagePrincipal({ kind: 'operator', id: 'operator' })).toBe('operator');
  });

  it('adds an applied batch id once across calls of the repository', async () => {
    const batch = { id: 'repo-once', calls: [], runs: [] };
    expect(await repos.applyUsageBatch(h.db, batch)).toBe('applied');
    expect(await repos.applyUsageBatch(h.db, batch)).toBe('duplicate');
  });

  it('is pruned past FLOWGATE_USAGE_RETENTION_DAYS, and applied batch ids after a day', async () => {
    const now = Date.parse('2026-11-20T12:00:00Z');
    const day = 86_400_000;
    let t = now - 32 * day;
    const old = createUsageMeter(h.db, silent, { now: () => t, batchId: () => 'prune-old' });
    old.call(call('ws-prune'));
    t = now - 31 * day;
    old.call(call('ws-prune'));
    old.runStarted({ workspaceId: 'ws-prune', flowSlug: 'nap' });
    await old.flush();
    const recent = createUsageMeter(h.db, silent, { now: () => now - 29 * day, batchId: () => 'prune-new' });
    recent.call(call('ws-prune'));
    await recent.flush();
    // Batch ids were stamped by the database's clock (now): a pruner a day and a bit later forgets them.
    const pruner = startAuditPruner({
      db: h.db,
      logger: silent,
      retentionDays: 0,
      maxRowsPerWorkspace: 0,
      usageRetentionDays: 30,
      now: () => now,
      intervalMs: 3_600_000,
    });
    try {
      const counts = await pruner.runOnce();
      expect(counts.usage).toBe(3); // the two old hours' call rows and the old run row
      expect((await callRows('ws-prune')).map((r) => r.hour.toISOString())).toEqual([
        '2026-10-22T12:00:00.000Z',
      ]);
      expect(await runRows('ws-prune')).toEqual([]);
    } finally {
      await pruner.stop();
    }
    const later = startAuditPruner({
      db: h.db,
      logger: silent,
      retentionDays: 0,
      maxRowsPerWorkspace: 0,
      now: () => Date.now() + USAGE_BATCH_IDS_KEPT_MS + 60_000,
      intervalMs: 3_600_000,
    });
    try {
      await later.runOnce();
      // Forgotten: the same id is applied again (no retry comes that late).
      expect(await repos.applyUsageBatch(h.db, { id: 'prune-old', calls: [], runs: [] })).toBe('applied');
    } finally {
      await later.stop();
    }
  });
});
