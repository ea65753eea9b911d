import { type DbHandle, repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { openWorkspace, type RunHooks, type Workspace } from '@flowgate/workspace';
import { seedFlow, seedWorkspace, testWorkspaceDeps } from '@flowgate/workspace/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunBroker, handoffOf, type RunBroker } from './broker.js';
import { createWorker, ENDED_CHANNEL } from './worker.js';

// Runs on PGlite by default and on Postgres when DATABASE_URL is set.
let h: DbHandle;
const WS = 'ws-broker';
const silent = { info: () => {}, warn: () => {}, error: () => {} };

const SECRET_FLOW = `{:slug :echo
 :invocations {:default {:inputs [{:name :n :type :integer :required true}
                                  {:name :token :type :secret :required true}]}}
 :interfaces {:mcp [{:tool-name "echo_it" :invocation :default}]}
 :flow (flow/step :function :echo {:code (fn [x] {:n (:n x)}) :input (flow/input)})}`;

function broker(): RunBroker {
  return createRunBroker({
    db: h,
    secretBox: testWorkspaceDeps(h.db).secretBox,
    log: silent,
    worker: { concurrency: 2, leaseMs: 5_000 },
  });
}

function workspaceOn(runs: RunHooks): Workspace {
  return openWorkspace(testWorkspaceDeps(h.db, { now: () => new Date(), runs }), {
    workspaceId: WS,
    actor: { kind: 'service_account', id: 'sa_test' },
  });
}

const start = (ws: Workspace, waits: boolean) =>
  ws.runs.start({
    slug: 'echo',
    toolName: 'echo_it',
    invocation: null,
    installationId: null,
    target: null,
    input: { n: 3, token: 'tok-canary-4b1d' },
    idempotencyKey: null,
    includeInstalled: false,
    allowDraft: false,
    waits,
  });

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  h = await createTestDb();
  await seedWorkspace(h.db, WS, 'broker');
  await seedFlow(h.db, WS, SECRET_FLOW, { release: 'v1' });
});

afterAll(async () => {
  await h?.close();
});

describe('run broker', () => {
  it('hands a waited run to the in-process worker and answers its wait in the domain terms, nothing left held', async () => {
    const b = broker();
    await b.listen();
    await b.startLocal();
    try {
      const ws = workspaceOn(b.hooks);
      const { run } = await start(ws, true);
      expect(run.status).toBe('running');
      const waited = await ws.runs.wait(run.id, 10_000, run);
      expect(waited?.run.status).toBe('completed');
      expect(waited?.result).toEqual({ mimeType: 'application/json', value: { n: 3 } });
      // A settled run crosses the port as the domain's record: secret inputs already redacted.
      expect(JSON.stringify(waited)).not.toContain('tok-canary-4b1d');
      // (The run's NOTIFY echo may still arrive and be kept a few seconds: only waiters must be gone.)
      expect(b.pending().waiters).toBe(0);
    } finally {
      await b.stop();
    }
  });

  it('keeps a run that settled before its caller waited, and gives it once, as a SettledRun', async () => {
    const b = broker();
    await b.startLocal();
    try {
      const ws = workspaceOn(b.hooks);
      const { run } = await start(ws, true);
      await until(() => b.pending().early === 1);
      const settled = await b.hooks.settled?.(run.id, 1_000);
      expect(settled?.workspaceId).toBe(WS);
      expect(settled?.run).toMatchObject({ id: run.id, status: 'completed' });
      expect(settled?.run.input).toEqual({ n: 3, token: '[redacted]' });
      expect(settled?.result?.value).toEqual({ n: 3 });
      expect(b.pending().early).toBe(0);
    } finally {
      await b.stop();
    }
  });

  it('wakes a wait on another process ending the run (NOTIFY) with null, so the caller reads it', async () => {
    const b = broker();
    await b.listen();
    try {
      const waiting = b.hooks.settled?.('run_elsewhere00000000', 10_000);
      await until(() => b.pending().waiters === 1);
      await h.notify(ENDED_CHANNEL, 'run_elsewhere00000000');
      expect(await waiting).toBeNull();
      expect(b.pending().waiters).toBe(0);
    } finally {
      await b.stop();
    }
  });

  it('releases a wait on timeout and on abort', async () => {
    const b = broker();
    try {
      expect(await b.hooks.settled?.('run_timeout000000000', 20)).toBeNull();
      const controller = new AbortController();
      const waiting = b.hooks.settled?.('run_aborted000000000', 10_000, controller.signal);
      expect(b.pending().waiters).toBe(1);
      controller.abort();
      expect(await waiting).toBeNull();
      expect(b.pending()).toEqual({ waiters: 0, early: 0 });
    } finally {
      await b.stop();
    }
  });

  it('offers no handoff without a started in-process worker, and queues instead', async () => {
    const b = broker();
    try {
      expect(b.hooks.handoff?.()).toBeNull();
      const { run } = await start(workspaceOn(b.hooks), true);
      expect(run.status).toBe('queued');
      const row = await repos.getRun(h.db, WS, run.id);
      expect(row?.leaseOwner).toBeNull();
    } finally {
      await b.stop();
    }
  });

  it('starts the stored row a handoff is given as it is, and reads a run named only by its ids first', async () => {
    const { run } = await start(workspaceOn({ queued: () => {}, cancelRequested: () => {} }), false);
    const stored = await repos.getRun(h.db, WS, run.id);
    if (!stored) throw new Error('run not stored');
    const taken: repos.RunRow[] = [];
    const reservation = {
      owner: 'w',
      leaseMs: 1_000,
      take: (r: repos.RunRow) => taken.push(r),
      release: () => {},
    };

    handoffOf(h.db, reservation, silent)?.take(stored);
    // Synchronously and the very object: no read stood between the insert and the worker.
    expect(taken).toEqual([stored]);
    expect(taken[0]).toBe(stored);

    handoffOf(h.db, reservation, silent)?.take({ id: run.id, workspaceId: WS });
    expect(taken).toHaveLength(1);
    await until(() => taken.length === 2);
    expect(taken[1]).toEqual(stored);
    expect(taken[1]).not.toBe(stored);
  });
});

describe('run broker with polled wake-ups (no LISTEN: Workers)', () => {
  const polled = () =>
    createRunBroker({
      db: h,
      secretBox: testWorkspaceDeps(h.db).secretBox,
      log: silent,
      worker: { concurrency: 1 },
      wakeUps: { pollMs: 100 },
    });

  it('listens to nothing, and a settled round ends after the poll interval with null', async () => {
    const b = polled();
    await b.listen();
    try {
      const started = Date.now();
      expect(await b.hooks.settled?.('run_none', 5_000)).toBeNull();
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(90);
      expect(took).toBeLessThan(1_000);
      // An abort ends the round at once.
      const aborted = new AbortController();
      aborted.abort();
      expect(await b.hooks.settled?.('run_none', 5_000, aborted.signal)).toBeNull();
      expect(b.pending()).toEqual({ waiters: 0, early: 0 });
    } finally {
      await b.stop();
    }
  });

  it('a waited run started through it is picked up by another worker (NOTIFY) and its end found by polling', async () => {
    const b = polled();
    // Another process's worker: its fallback poll is a minute, so only the NOTIFY of `queued` starts the run soon.
    const other = createWorker({
      db: h,
      secretBox: testWorkspaceDeps(h.db).secretBox,
      concurrency: 1,
      pollMs: 60_000,
      log: silent,
    });
    await other.start();
    try {
      const ws = workspaceOn(b.hooks);
      const { run } = await start(ws, true);
      expect(run.status).toBe('queued');
      const started = Date.now();
      const waited = await ws.runs.wait(run.id, 10_000, run);
      expect(waited?.run.status).toBe('completed');
      expect(waited?.result).toEqual({ mimeType: 'application/json', value: { n: 3 } });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await other.stop();
      await b.stop();
    }
  });
});
