import type { RunStatus } from '@flowgate/core';
import { eq, inArray, sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../client.js';
import { runEvents, runSteps, runs } from '../schema.js';
import { createTestDb } from '../testing.js';
import {
  appendEvents,
  claimRuns,
  finishAttempt,
  type Lease,
  recordStep,
  releaseLease,
  renewLease,
} from './run-queue.js';
import { cancelRun } from './runs.js';
import { createWorkspace } from './workspaces.js';

/**
 * Random interleavings of what 2–3 workers do to a handful of runs — claim (alone or all at once), renew, step
 * writes, finish, release — with leases expiring and runs cancelled in between. Lease time comes from the database's
 * now(), so expiry is driven by moving `lease_expires_at` into the past; leases are otherwise long enough never to
 * lapse during a case. A model says which worker holds each run; every repository answer must match it exactly:
 * at most one worker's fenced writes are ever accepted for a run, and a worker whose lease was taken over gets every
 * write refused. Runs on PGlite by default and on Postgres with DATABASE_URL (where "claim together" really races).
 */

const WS = 'ws-prop';
const LEASE_MS = 60_000;
const WORKERS = ['w0', 'w1', 'w2'] as const;
type WorkerId = (typeof WORKERS)[number];

/** The workers of this model finish a run as completed, failed or waiting; none times one out. */
type Status = Exclude<RunStatus, 'timed-out'>;

interface RunModel {
  id: string;
  status: Status;
  /** Who holds the lease (the only worker whose fenced writes may apply); null when nobody does. */
  holder: WorkerId | null;
  /** The lease is past its expiry (or was released): another claim may take the run over. */
  expired: boolean;
  /** A waiting run whose wake time has passed. */
  due: boolean;
  attempts: number;
  cancelRequested: boolean;
  /** Step rows and events accepted so far. */
  steps: Set<string>;
  events: number;
}

interface Model {
  runs: RunModel[];
  workers: number;
}

interface Real {
  h: DbHandle;
}

const FINAL: readonly Status[] = ['completed', 'failed', 'cancelled'];
const leaseOf = (run: RunModel, w: WorkerId): Lease => ({ runId: run.id, workspaceId: WS, owner: w });
const holds = (run: RunModel, w: WorkerId) => run.status === 'running' && run.holder === w;

function claimable(run: RunModel): boolean {
  return (
    run.status === 'queued' ||
    (run.status === 'waiting' && run.due) ||
    (run.status === 'running' && run.expired)
  );
}

/** Oldest first, as the queue orders them (runs are created in index order, ids sort the same way). */
const claimableIds = (m: Model) => m.runs.filter(claimable).map((r) => r.id);

function takeOver(run: RunModel, w: WorkerId): void {
  run.status = 'running';
  run.holder = w;
  run.expired = false;
  run.due = false;
  run.attempts += 1;
}

/** What the database says about every run must be what the model says. */
async function agree(m: Model, r: Real): Promise<void> {
  const rows = await r.h.db
    .select({
      id: runs.id,
      status: runs.status,
      leaseOwner: runs.leaseOwner,
      attempts: runs.attempts,
      cancelRequested: runs.cancelRequested,
      valid: sql<boolean>`coalesce(${runs.leaseExpiresAt} > now(), false)`,
    })
    .from(runs)
    .where(eq(runs.workspaceId, WS))
    .orderBy(runs.id);
  const steps = await r.h.db
    .select({ runId: runSteps.runId, stepId: runSteps.stepId })
    .from(runSteps)
    .where(eq(runSteps.workspaceId, WS));
  const events = await r.h.db
    .select({ runId: runEvents.runId, n: sql<number>`count(*)::int` })
    .from(runEvents)
    .where(eq(runEvents.workspaceId, WS))
    .groupBy(runEvents.runId);
  expect(
    rows.map((row) => ({
      id: row.id,
      status: row.status,
      attempts: row.attempts,
      cancelRequested: row.cancelRequested,
      // A valid lease names exactly the worker the model says holds the run.
      validHolder: row.status === 'running' && row.valid ? row.leaseOwner : null,
      steps: steps
        .filter((s) => s.runId === row.id)
        .map((s) => s.stepId)
        .sort(),
      events: events.find((e) => e.runId === row.id)?.n ?? 0,
    })),
  ).toEqual(
    m.runs.map((run) => ({
      id: run.id,
      status: run.status,
      attempts: run.attempts,
      cancelRequested: run.cancelRequested,
      validHolder: run.status === 'running' && !run.expired ? run.holder : null,
      steps: [...run.steps].sort(),
      events: run.events,
    })),
  );
}

type Cmd = fc.AsyncCommand<Model, Real>;

class Claim implements Cmd {
  constructor(
    readonly w: WorkerId,
    readonly limit: number,
  ) {}
  check(m: Model) {
    return WORKERS.indexOf(this.w) < m.workers;
  }
  async run(m: Model, r: Real) {
    const expected = claimableIds(m).slice(0, this.limit);
    const got = await claimRuns(r.h.db, { owner: this.w, leaseMs: LEASE_MS, limit: this.limit });
    expect(got.map((g) => g.id).sort()).toEqual(expected);
    for (const g of got) {
      expect(g).toMatchObject({ status: 'running', leaseOwner: this.w });
      takeOver(m.runs.find((run) => run.id === g.id)!, this.w);
    }
    await agree(m, r);
  }
  toString() {
    return `claim(${this.w}, ${this.limit})`;
  }
}

/** Every worker claims at the same moment: no run may be handed to two of them. */
class ClaimTogether implements Cmd {
  check() {
    return true;
  }
  async run(m: Model, r: Real) {
    const open = claimableIds(m);
    const workers = WORKERS.slice(0, m.workers);
    const got = await Promise.all(
      workers.map((w) => claimRuns(r.h.db, { owner: w, leaseMs: LEASE_MS, limit: 1 })),
    );
    const ids = got.flat().map((g) => g.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(Math.min(open.length, workers.length));
    for (const id of ids) expect(open).toContain(id);
    got.forEach((claimed, i) => {
      for (const g of claimed) takeOver(m.runs.find((run) => run.id === g.id)!, workers[i]!);
    });
    await agree(m, r);
  }
  toString() {
    return 'claimTogether';
  }
}

class Renew implements Cmd {
  constructor(
    readonly w: WorkerId,
    readonly i: number,
  ) {}
  check(m: Model) {
    return WORKERS.indexOf(this.w) < m.workers && this.i < m.runs.length;
  }
  async run(m: Model, r: Real) {
    const run = m.runs[this.i]!;
    const renewed = await renewLease(r.h.db, leaseOf(run, this.w), LEASE_MS);
    if (holds(run, this.w)) {
      // The holder of an expired lease nobody took over yet may still renew it: it is still the only holder.
      expect(renewed).toEqual({ cancelRequested: run.cancelRequested });
      run.expired = false;
    } else {
      expect(renewed).toBeNull();
    }
    await agree(m, r);
  }
  toString() {
    return `renew(${this.w}, run${this.i})`;
  }
}

/** Time passes beyond the lease (the holder stalled or died). */
class Expire implements Cmd {
  constructor(readonly i: number) {}
  check(m: Model) {
    return this.i < m.runs.length;
  }
  async run(m: Model, r: Real) {
    const run = m.runs[this.i]!;
    await r.h.db
      .update(runs)
      .set({ leaseExpiresAt: sql`now() - interval '1 second'` })
      .where(sql`${runs.id} = ${run.id} and ${runs.status} = 'running'`);
    if (run.status === 'running') run.expired = true;
    await agree(m, r);
  }
  toString() {
    return `expire(run${this.i})`;
  }
}

class Step implements Cmd {
  constructor(
    readonly w: WorkerId,
    readonly i: number,
    readonly stepId: string,
  ) {}
  check(m: Model) {
    return WORKERS.indexOf(this.w) < m.workers && this.i < m.runs.length;
  }
  async run(m: Model, r: Real) {
    const run = m.runs[this.i]!;
    const lease = leaseOf(run, this.w);
    const wrote = await recordStep(r.h.db, lease, {
      stepId: this.stepId,
      type: 'http',
      status: 'completed',
      result: { by: this.w },
      finishedAt: new Date(),
    });
    const logged = await appendEvents(r.h.db, lease, [
      { type: 'step_started', stepId: this.stepId, stepType: 'http', status: 'started' },
      { type: 'step_completed', stepId: this.stepId, stepType: 'http', status: 'completed' },
    ]);
    const ok = holds(run, this.w);
    expect([wrote, logged]).toEqual([ok, ok]);
    if (ok) {
      run.steps.add(this.stepId);
      run.events += 2;
    }
    await agree(m, r);
  }
  toString() {
    return `step(${this.w}, run${this.i}, ${this.stepId})`;
  }
}

class Finish implements Cmd {
  constructor(
    readonly w: WorkerId,
    readonly i: number,
    readonly end: 'completed' | 'failed' | 'sleep-due' | 'sleep-later',
  ) {}
  check(m: Model) {
    return WORKERS.indexOf(this.w) < m.workers && this.i < m.runs.length;
  }
  async run(m: Model, r: Real) {
    const run = m.runs[this.i]!;
    const end =
      this.end === 'completed'
        ? { status: 'completed' as const, result: { ok: true }, resultMime: 'application/json' }
        : this.end === 'failed'
          ? { status: 'failed' as const, error: { code: 'boom', message: 'boom' } }
          : {
              status: 'waiting' as const,
              wakeAt: new Date(Date.now() + (this.end === 'sleep-due' ? -1_000 : 3_600_000)),
            };
    const done = await finishAttempt(r.h.db, leaseOf(run, this.w), end, {}, { type: `run_${this.end}` });
    if (holds(run, this.w)) {
      expect(done?.run.status).toBe(end.status);
      run.status = end.status;
      run.holder = null;
      run.expired = false;
      run.due = this.end === 'sleep-due';
      run.events += 1;
    } else {
      expect(done).toBeNull();
    }
    await agree(m, r);
  }
  toString() {
    return `finish(${this.w}, run${this.i}, ${this.end})`;
  }
}

/** Graceful hand-back: the run is claimable at once. */
class Release implements Cmd {
  constructor(
    readonly w: WorkerId,
    readonly i: number,
  ) {}
  check(m: Model) {
    return WORKERS.indexOf(this.w) < m.workers && this.i < m.runs.length;
  }
  async run(m: Model, r: Real) {
    const run = m.runs[this.i]!;
    const released = await releaseLease(r.h.db, leaseOf(run, this.w));
    expect(released).toBe(holds(run, this.w));
    if (released) {
      run.holder = null;
      run.expired = true;
    }
    await agree(m, r);
  }
  toString() {
    return `release(${this.w}, run${this.i})`;
  }
}

class Cancel implements Cmd {
  constructor(readonly i: number) {}
  check(m: Model) {
    return this.i < m.runs.length;
  }
  async run(m: Model, r: Real) {
    const run = m.runs[this.i]!;
    const out = await cancelRun(r.h.db, WS, run.id);
    if (run.status === 'queued' || run.status === 'waiting') {
      expect(out).toMatchObject({ stopping: false, run: { status: 'cancelled' } });
      run.status = 'cancelled';
      run.holder = null;
      run.due = false;
      run.events += 1;
    } else if (run.status === 'running') {
      expect(out).toMatchObject({ stopping: true, run: { status: 'running' } });
      run.cancelRequested = true;
    } else {
      expect(out?.run.status).toBe(run.status);
      expect(FINAL).toContain(run.status);
    }
    await agree(m, r);
  }
  toString() {
    return `cancel(run${this.i})`;
  }
}

let h: DbHandle;

beforeAll(async () => {
  h = await createTestDb();
  await createWorkspace(h.db, { id: WS, name: 'property' });
});

afterAll(async () => {
  await h?.close();
});

async function freshRuns(count: number): Promise<RunModel[]> {
  await h.db.delete(runs).where(eq(runs.workspaceId, WS));
  const ids = Array.from({ length: count }, (_, i) => `run_prop${String(i).padStart(2, '0')}`);
  // One per statement, so created_at orders them as their ids do.
  for (const id of ids) {
    await h.db.insert(runs).values({
      id,
      workspaceId: WS,
      flowId: 'f',
      flowSlug: 'f',
      definitionWorkspaceId: WS,
      invocation: 'default',
      target: 'live',
      status: 'queued',
      input: {},
    });
  }
  const stale = await h.db.select({ id: runSteps.runId }).from(runSteps).where(inArray(runSteps.runId, ids));
  expect(stale).toEqual([]);
  return ids.map((id) => ({
    id,
    status: 'queued',
    holder: null,
    expired: false,
    due: false,
    attempts: 0,
    cancelRequested: false,
    steps: new Set<string>(),
    events: 0,
  }));
}

describe('the run queue under random interleavings of workers', () => {
  it('never lets two workers hold one run, and refuses every write of a worker that lost its lease', async () => {
    const worker = fc.constantFrom(...WORKERS);
    const runIndex = fc.integer({ min: 0, max: 2 });
    const commands = [
      fc.tuple(worker, fc.integer({ min: 1, max: 3 })).map(([w, n]) => new Claim(w, n)),
      fc.constant(new ClaimTogether()),
      fc.tuple(worker, runIndex).map(([w, i]) => new Renew(w, i)),
      runIndex.map((i) => new Expire(i)),
      fc.tuple(worker, runIndex, fc.constantFrom('a', 'b', 'c')).map(([w, i, s]) => new Step(w, i, s)),
      fc
        .tuple(
          worker,
          runIndex,
          fc.constantFrom('completed', 'failed', 'sleep-due', 'sleep-later') as fc.Arbitrary<Finish['end']>,
        )
        .map(([w, i, e]) => new Finish(w, i, e)),
      fc.tuple(worker, runIndex).map(([w, i]) => new Release(w, i)),
      runIndex.map((i) => new Cancel(i)),
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.commands(commands, { maxCommands: 30 }),
        async (workers, runCount, cmds) => {
          const model: Model = { runs: await freshRuns(runCount), workers };
          await fc.asyncModelRun(() => ({ model, real: { h } }), cmds);
        },
      ),
      { numRuns: process.env.DATABASE_URL ? 100 : 150 },
    );
  }, 60_000);
});
