import type { DbHandle } from '@flowgate/db';
import { repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuditPruner } from './prune.js';
import { createAuditQueue } from './queue.js';

/** Issue 12: every blocked or invalid call wrote its own row, so one key could grow audit_entries without bound. */

let h: DbHandle;
beforeAll(async () => {
  h = await createTestDb();
  for (const id of ['ws-c1', 'ws-c2', 'ws-c3', 'ws-p1', 'ws-p2'])
    await repos.createWorkspace(h.db, { id, name: id });
});
afterAll(async () => h?.close());

const blocked = (workspaceId: string, extra: Record<string, unknown> = {}) => ({
  workspaceId,
  principalType: 'service_account',
  principalId: 'sa_1',
  keyId: 'key1',
  kind: 'tools/call',
  action: 'create_flow_draft',
  outcome: 'blocked' as const,
  errorCode: 'missing_capability',
  arguments: { padding: 'x'.repeat(4_000) },
  ...extra,
});

describe('collapsing identical refused calls', () => {
  it('folds repeats into one row with a count, queued or already written', async () => {
    const q = createAuditQueue(h.db, pino({ level: 'silent' }), { flushIntervalMs: 60_000 });
    for (let i = 0; i < 50; i++) q.record(blocked('ws-c1'));
    await q.flush();
    for (let i = 0; i < 25; i++) q.record(blocked('ws-c1'));
    await q.flush();
    await q.close();
    const rows = await repos.listAuditEntries(h.db, 'ws-c1', { limit: 10 });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.count).toBe(75);
  });

  it('keeps different calls, different keys, successes and calls after the window apart', async () => {
    let t = 0;
    const q = createAuditQueue(h.db, pino({ level: 'silent' }), {
      flushIntervalMs: 60_000,
      collapseWindowMs: 1_000,
      now: () => t,
    });
    q.record(blocked('ws-c2'));
    q.record(blocked('ws-c2', { keyId: 'key2', principalId: 'sa_2' }));
    q.record(blocked('ws-c2', { arguments: { other: true } }));
    q.record(blocked('ws-c2', { outcome: 'ok', errorCode: null }));
    q.record(blocked('ws-c2', { outcome: 'ok', errorCode: null }));
    q.record(blocked('ws-c2'));
    t = 2_000;
    q.record(blocked('ws-c2'));
    await q.close();
    const rows = await repos.listAuditEntries(h.db, 'ws-c2', { limit: 20 });
    expect(rows.map((r) => r.count).sort()).toEqual([1, 1, 1, 1, 1, 2]);
    expect(rows).toHaveLength(6);
  });

  it('stays bounded in memory: past maxCollapsing new refusals are written as they come', async () => {
    const q = createAuditQueue(h.db, pino({ level: 'silent' }), {
      flushIntervalMs: 60_000,
      maxCollapsing: 1,
    });
    q.record(blocked('ws-c3', { action: 'a' }));
    q.record(blocked('ws-c3', { action: 'b' }));
    q.record(blocked('ws-c3', { action: 'b' }));
    q.record(blocked('ws-c3', { action: 'a' }));
    await q.close();
    const rows = await repos.listAuditEntries(h.db, 'ws-c3', { limit: 20 });
    expect(rows.map((r) => `${r.action}:${r.count}`).sort()).toEqual(['a:2', 'b:1', 'b:1']);
  });
});

describe('pruning', () => {
  it('deletes entries past the retention and keeps each workspace under its cap, newest kept', async () => {
    const old = new Date(Date.now() - 10 * 86_400_000);
    const entry = (workspaceId: string, action: string, at = new Date()) => ({
      workspaceId,
      principalType: 'operator',
      principalId: 'operator',
      kind: 'admin',
      action,
      outcome: 'ok' as const,
      at,
    });
    await repos.insertAuditEntries(h.db, [entry('ws-p1', 'ancient', old), entry('ws-p2', 'ancient', old)]);
    await repos.insertAuditEntries(
      h.db,
      Array.from({ length: 12 }, (_, i) => entry('ws-p1', `a${i}`)),
    );
    await repos.insertAuditEntries(h.db, [entry('ws-p2', 'b0')]);

    expect(await repos.pruneAuditBefore(h.db, new Date(Date.now() - 86_400_000))).toBeGreaterThanOrEqual(2);
    expect(await repos.pruneAuditOverCap(h.db, 5)).toBeGreaterThanOrEqual(7);
    const p1 = await repos.listAuditEntries(h.db, 'ws-p1', { limit: 50 });
    expect(p1.map((r) => r.action)).toEqual(['a11', 'a10', 'a9', 'a8', 'a7']);
    const p2 = await repos.listAuditEntries(h.db, 'ws-p2', { limit: 50 });
    expect(p2.map((r) => r.action)).toEqual(['b0']);
  });
});

describe('the scheduled prune', () => {
  it('applies the configured retention and cap in one pass', async () => {
    await repos.createWorkspace(h.db, { id: 'ws-s1', name: 'ws-s1' });
    const at = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000);
    await repos.insertAuditEntries(
      h.db,
      [40, 20, 0, 0, 0, 0].map((d, i) => ({
        workspaceId: 'ws-s1',
        principalType: 'operator',
        principalId: 'operator',
        kind: 'admin',
        action: `s${i}`,
        outcome: 'ok' as const,
        at: at(d),
      })),
    );
    const pruner = startAuditPruner({
      db: h.db,
      logger: pino({ level: 'silent' }),
      retentionDays: 30,
      maxRowsPerWorkspace: 3,
    });
    try {
      await pruner.runOnce();
    } finally {
      await pruner.stop();
    }
    const rows = await repos.listAuditEntries(h.db, 'ws-s1', { limit: 50 });
    expect(rows.map((r) => r.action)).toEqual(['s5', 's4', 's3']);
  });
});
