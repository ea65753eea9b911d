import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../client.js';
import { runEvents, runSlots, runSteps, runs } from '../schema.js';
import { createTestDb, testRun } from '../testing.js';
import { appendEvents, claimRuns, finishAttempt } from './run-queue.js';
import { createRun, getRun } from './runs.js';
import { createWorkspace } from './workspaces.js';

/** The one-statement claim and finish: keys within one batch, the row shape, events in order. */

const WS = 'ws-queue-batch';
let h: DbHandle;

beforeAll(async () => {
  h = await createTestDb();
  await createWorkspace(h.db, { id: WS, name: 'queue' });
});

afterAll(async () => {
  await h?.close();
});

const newRun = (id: string, concurrencyKey: string | null) =>
  testRun(WS, id, {
    input: { n: 1, s: 'x' },
    secretInputs: ['s'],
    concurrencyKey,
    deadlineAt: new Date('2030-01-01T00:00:00.000Z'),
  });

describe('run queue claim and finish', () => {
  it('claims one run per key in a batch, returns rows as a select does, and frees the slot on finish', async () => {
    await createRun(h.db, WS, newRun('run_batch_k1', 'key-a'));
    await createRun(h.db, WS, newRun('run_batch_k2', 'key-a'));
    await createRun(h.db, WS, newRun('run_batch_free', null));
    const claimed = await claimRuns(h.db, { owner: 'w1', leaseMs: 60_000, limit: 10 });
    expect(claimed.map((r) => r.id)).toEqual(['run_batch_k1', 'run_batch_free']);
    const selected = await getRun(h.db, WS, 'run_batch_k1');
    expect(claimed[0]).toEqual(selected);
    expect(claimed[0]?.startedAt).toBeInstanceOf(Date);
    expect(claimed[0]?.secretInputs).toEqual(['s']);
    expect(claimed[0]?.input).toEqual({ n: 1, s: 'x' });
    expect(claimed[0]?.status).toBe('running');
    expect(claimed[0]?.attempts).toBe(1);
    // The key is held: its second run is no candidate.
    expect(await claimRuns(h.db, { owner: 'w2', leaseMs: 60_000, limit: 10 })).toEqual([]);

    const notified: string[] = [];
    const unlisten = await h.listen('queue_test_ended', (id) => notified.push(id));
    const lease = { runId: 'run_batch_k1', workspaceId: WS, owner: 'w1' };
    const at = new Date('2026-01-01T00:00:00.000Z');
    const done = await finishAttempt(
      h.db,
      lease,
      { status: 'completed', result: 'text result', resultMime: 'text/plain' },
      { steps: 1 },
      [
        { type: 'run_started', status: 'running', at },
        { type: 'step_completed', stepId: 'a', detail: { x: 1 } },
        { type: 'run_completed', status: 'completed' },
      ],
      [{ stepId: 'a', type: 'function', result: { y: 2 }, startedAt: at, finishedAt: at }],
      'queue_test_ended',
    );
    expect(done?.freedSlot).toBe(true);
    // The finishing statement itself told the channel.
    for (let i = 0; i < 100 && notified.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(notified).toEqual(['run_batch_k1']);
    await unlisten();
    expect(done?.run).toEqual(await getRun(h.db, WS, 'run_batch_k1'));
    const journal = await h.db.select().from(runSteps).where(eq(runSteps.runId, 'run_batch_k1'));
    expect(
      journal.map((s) => [s.stepId, s.type, s.status, s.result, s.attempts, s.startedAt, s.finishedAt]),
    ).toEqual([['a', 'function', 'completed', { y: 2 }, 1, at, at]]);
    // A second finish of the same lease writes nothing.
    expect(
      await finishAttempt(
        h.db,
        lease,
        { status: 'failed', error: { code: 'x', message: 'x' } },
        {},
        { type: 'run_failed' },
      ),
    ).toBeNull();
    const events = await h.db
      .select()
      .from(runEvents)
      .where(eq(runEvents.runId, 'run_batch_k1'))
      .orderBy(runEvents.id);
    expect(events.map((e) => [e.type, e.stepId, e.status, e.detail])).toEqual([
      ['run_started', null, 'running', null],
      ['step_completed', 'a', null, { x: 1 }],
      ['run_completed', null, 'completed', null],
    ]);
    expect(events[0]?.at).toEqual(at);
    const [row] = await h.db.select().from(runs).where(eq(runs.id, 'run_batch_k1'));
    expect([row?.status, row?.result, row?.resultMime, row?.leaseOwner, row?.usage]).toEqual([
      'completed',
      'text result',
      'text/plain',
      null,
      { steps: 1 },
    ]);
    expect(await h.db.select().from(runSlots).where(eq(runSlots.runId, 'run_batch_k1'))).toEqual([]);
    // The key is free again: its second run is claimed now.
    const next = await claimRuns(h.db, { owner: 'w2', leaseMs: 60_000, limit: 10 });
    expect(next.map((r) => r.id)).toEqual(['run_batch_k2']);
  });

  it('notifies the run id with appended events, in the same statement, and nothing when the lease is lost', async () => {
    await createRun(h.db, WS, newRun('run_events_notify', null));
    const [claimed] = await claimRuns(h.db, { owner: 'w-ev', leaseMs: 60_000, limit: 1 });
    expect(claimed?.id).toBe('run_events_notify');
    const notified: string[] = [];
    const unlisten = await h.listen('queue_test_events', (id) => notified.push(id));
    try {
      const lease = { runId: 'run_events_notify', workspaceId: WS, owner: 'w-ev' };
      const written = await appendEvents(
        h.db,
        lease,
        [
          { type: 'run_started', status: 'running' },
          { type: 'step_started', stepId: 'a' },
        ],
        'queue_test_events',
      );
      expect(written).toBe(true);
      for (let i = 0; i < 100 && notified.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(notified).toEqual(['run_events_notify']);
      // Another owner holds no lease: nothing is written, nobody is told.
      const lost = await appendEvents(
        h.db,
        { ...lease, owner: 'w-other' },
        [{ type: 'step_completed', stepId: 'a' }],
        'queue_test_events',
      );
      expect(lost).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
      expect(notified).toEqual(['run_events_notify']);
      const events = await h.db.select().from(runEvents).where(eq(runEvents.runId, 'run_events_notify'));
      expect(events.map((e) => e.type)).toEqual(['run_started', 'step_started']);
    } finally {
      await unlisten();
    }
  });
});
