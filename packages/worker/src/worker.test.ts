import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DbHandle, repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { type EndedRunUsage, openWorkspace, type RunHandoff, type Workspace } from '@flowgate/workspace';
import {
  draftOf,
  seedConnection,
  seedFlow,
  seedWorkspace,
  testWorkspaceDeps,
} from '@flowgate/workspace/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handoffOf } from './broker.js';
import { createWorker, type Worker } from './worker.js';

const silentLog = { info: () => {}, warn: () => {}, error: () => {} };

// Runs on PGlite by default and on Postgres when DATABASE_URL is set.
let h: DbHandle;
let server: Server;
let base: string;
/** Requests the loopback API received, per path. */
const hits = new Map<string, number>();
const SECRET = 'canary-connection-secret-7c1e9b0a';

const FUNCTION_FLOW = `{:slug :double
 :invocations {:default {:inputs [{:name :n :type :integer :required true}]}}
 :interfaces {:mcp [{:tool-name "double_it" :invocation :default}]}
 :flow (flow/step :function :double {:code (fn [x] {:doubled (* 2 (:n x))}) :input (flow/input)})}`;

const HTTP_FLOW = `{:slug :fetch-two
 :requires [{:slot :api :type :http-api}]
 :invocations {:default {:inputs [{:name :id :type :string :required true}]}}
 :flow (let [a (flow/step :http :first {:connection :api :path "/first" :query {:id (:id (flow/input))}})
             _ (flow/step :sleep :pause {:duration-ms 300})
             b (flow/step :http :second {:connection :api :path "/second"})]
         {:first (:body a) :second (:body b)})}`;

const HOOK_FLOW = `{:slug :notify
 :requires [{:slot :hook :type :secret}]
 :invocations {:default {:inputs []}}
 :flow (let [r (flow/step :http :post {:connection :hook :method :post :json {:text "hi"}})] {:status (:status r)})}`;

const MIXED_FLOW = `{:slug :mixed
 :requires [{:slot :api :type :http-api}]
 :invocations {:default {:inputs []}}
 :flow (let [a (flow/step :function :prep {:code (fn [x] {:id "m1"}) :input (flow/input)})
             b (flow/step :http :probe {:connection :api :path "/probe" :query {:id (:id a)}})
             c (flow/step :function :after {:code (fn [x] {:seen (:path x)}) :input (:body b)})]
         c)}`;

/** A run that holds its worker slot until the test opens `/hold` (its HTTP step waits for the answer). */
const HOLD_FLOW = `{:slug :hold
 :requires [{:slot :api :type :http-api}]
 :invocations {:default {:inputs []}}
 :flow (flow/step :http :wait {:connection :api :path "/hold"})}`;
let openHold: () => void = () => {};
let held = Promise.resolve();

/** The journal as the /probe request found it (step id, status, attempts), by run. */
const journalAtProbe: Array<Array<[string, string, number]>> = [];

const SINGLETON_FLOW = `{:slug :one-at-a-time
 :concurrency {:type :singleton :on-new-version :drain}
 :invocations {:default {:inputs [{:name :tag :type :string :required true}]}}
 :flow (let [_ (flow/step :sleep :hold {:duration-ms 200})] {:tag (:tag (flow/input))})}`;

/** A start of `slug` with `input`, every other option at its default unless given. */
function startInput(
  slug: string,
  input: Record<string, unknown>,
  options: Partial<Parameters<Workspace['runs']['start']>[0]> = {},
): Parameters<Workspace['runs']['start']>[0] {
  return {
    slug,
    toolName: null,
    invocation: null,
    installationId: null,
    target: null,
    input,
    idempotencyKey: null,
    includeInstalled: false,
    allowDraft: false,
    ...options,
  };
}

function workspaceFor(worker: () => Worker | null, id: string): Workspace {
  return openWorkspace(
    testWorkspaceDeps(h.db, {
      now: () => new Date(),
      runs: { queued: () => worker()?.wake(), cancelRequested: () => {} },
    }),
    { workspaceId: id, actor: { kind: 'service_account', id: 'sa_test' } },
  );
}

async function waitFor(ws: Workspace, runId: string, done: (status: string) => boolean, ms = 15_000) {
  const until = Date.now() + ms;
  for (;;) {
    const run = await ws.runs.get(runId);
    if (run && done(run.status)) return run;
    if (Date.now() > until) throw new Error(`run ${runId} stayed ${run?.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Polls `probe` until it answers non-null (a reservation is given back at once). */
async function expectEventually(probe: () => { release(): void } | null, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const got = probe();
    if (got) {
      got.release();
      return;
    }
    if (Date.now() > until) throw new Error('still null');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const finished = (s: string) => ['completed', 'failed', 'cancelled', 'timed-out'].includes(s);

beforeAll(async () => {
  h = await createTestDb();
  server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/hold') await held;
    if (path === '/probe') {
      const [run] = await repos.listRuns(h.db, 'ws-run', { limit: 1, flowSlug: 'mixed' });
      const steps = run ? await repos.listRunSteps(h.db, 'ws-run', run.id, { limit: 10 }) : [];
      journalAtProbe.push(steps.map((s) => [s.stepId, s.status, s.attempts]));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    // Echoes the credential it was sent: the run must never store or show it.
    res.end(JSON.stringify({ path, auth: req.headers.authorization ?? null }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await seedWorkspace(h.db, 'ws-run', 'runs');
  await seedFlow(h.db, 'ws-run', FUNCTION_FLOW, { release: 'v1' });
  await seedFlow(h.db, 'ws-run', HTTP_FLOW, { release: 'v1' });
  await seedFlow(h.db, 'ws-run', SINGLETON_FLOW, { release: 'v1' });
  await seedFlow(h.db, 'ws-run', MIXED_FLOW, { release: 'v1' });
  const deps = testWorkspaceDeps(h.db);
  const conn = await seedConnection(deps, 'ws-run', 1, { baseUrl: base, secret: SECRET, authType: 'bearer' });
  await repos.setFlowBindings(h.db, 'ws-run', 'fetch-two', 'live', { api: conn });
  await repos.setFlowBindings(h.db, 'ws-run', 'mixed', 'live', { api: conn });
  await seedFlow(h.db, 'ws-run', HOLD_FLOW, { release: 'v1' });
  await repos.setFlowBindings(h.db, 'ws-run', 'hold', 'live', { api: conn });
  await seedFlow(h.db, 'ws-run', HOOK_FLOW, { release: 'v1' });
  const hook = await seedConnection(deps, 'ws-run', 2, { type: 'secret', baseUrl: null, secret: HOOK_URL() });
  await repos.setFlowBindings(h.db, 'ws-run', 'notify', 'live', { hook });
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await h?.close();
});

const HOOK_PATH = '/services/T0000AAAA/B0000BBBB/hooktoken0hooktoken0hook';
const HOOK_URL = () => `${base}${HOOK_PATH}`;

function worker(id: string, leaseMs = 5_000): Worker {
  return createWorker({
    db: h,
    secretBox: testWorkspaceDeps(h.db).secretBox,
    concurrency: 4,
    leaseMs,
    allowPrivateNetwork: true,
    id,
  });
}

describe('the worker', () => {
  it('runs a queued flow to completion with its result, steps and events', async () => {
    const w = worker('w-basic');
    await w.start();
    try {
      const ws = workspaceFor(() => w, 'ws-run');
      const { run, created } = await ws.runs.start(
        startInput('double', { n: 21 }, { toolName: 'double_it' }),
      );
      expect(created).toBe(true);
      expect(run.status).toBe('queued');
      expect(run.id).toMatch(/^run_[A-Za-z0-9]{20}$/);
      const done = await waitFor(ws, run.id, finished);
      expect(done).toMatchObject({ status: 'completed', error: null, resultMimeType: 'application/json' });
      expect(await ws.runs.result(run.id)).toEqual({ mimeType: 'application/json', value: { doubled: 42 } });
      const steps = await ws.runs.steps(run.id, { limit: 10, includeResults: true });
      expect(steps?.map((s) => [s.stepId, s.status, s.result])).toEqual([
        ['double', 'completed', { doubled: 42 }],
      ]);
      const events = await ws.runs.events(run.id, { limit: 50, afterId: null, stepId: null });
      expect(events?.map((e) => e.type)).toEqual([
        'run_started',
        'step_started',
        'step_completed',
        'run_completed',
      ]);
      // What a progress stream reads: the step's end, ids and status only; nothing from another workspace.
      const ended = events?.find((e) => e.type === 'step_completed');
      expect(await ws.runs.stepEnds(run.id, { limit: 10, afterId: null })).toEqual([
        { eventId: ended?.id, stepId: 'double', status: 'completed' },
      ]);
      expect(await ws.runs.stepEnds(run.id, { limit: 10, afterId: ended?.id ?? 0 })).toEqual([]);
      const other = workspaceFor(() => w, 'ws-elsewhere');
      expect(await other.runs.stepEnds(run.id, { limit: 10, afterId: null })).toEqual([]);
    } finally {
      await w.stop();
    }
  });

  it('logs one info line per run it finishes: id, flow, status and milliseconds', async () => {
    const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const record = (fields: Record<string, unknown>, message: string) => lines.push({ fields, message });
    const w = createWorker({
      db: h,
      secretBox: testWorkspaceDeps(h.db).secretBox,
      concurrency: 4,
      allowPrivateNetwork: true,
      id: 'w-log',
      log: { info: record, warn: record, error: record },
    });
    await w.start();
    try {
      const ws = workspaceFor(() => w, 'ws-run');
      const { run } = await ws.runs.start(startInput('double', { n: 2 }, { toolName: 'double_it' }));
      const done = await waitFor(ws, run.id, finished);
      await w.stop();
      const ended = lines.filter((l) => l.message === 'run finished');
      expect(ended).toEqual([
        {
          message: 'run finished',
          fields: { runId: run.id, flow: 'double', status: done.status, ms: expect.any(Number) },
        },
      ]);
      expect(done.status).toBe('completed');
      expect(ended[0]?.fields.ms).toBeGreaterThanOrEqual(0);
    } finally {
      await w.stop();
    }
  });

  it('journals a pure step before a step with side effects starts, and the last one with the end', async () => {
    const w = worker('w-mixed');
    await w.start();
    try {
      const ws = workspaceFor(() => w, 'ws-run');
      const { run } = await ws.runs.start(startInput('mixed', {}));
      const done = await waitFor(ws, run.id, finished);
      expect(done.status, JSON.stringify(done.error)).toBe('completed');
      expect(await ws.runs.result(run.id)).toEqual({
        mimeType: 'application/json',
        value: { seen: '/probe' },
      });
      expect(journalAtProbe).toEqual([
        [
          ['prep', 'completed', 1],
          ['probe', 'running', 1],
        ],
      ]);
      const steps = await ws.runs.steps(run.id, { limit: 10, includeResults: false });
      expect(steps?.map((s) => [s.stepId, s.status, s.attempts])).toEqual([
        ['prep', 'completed', 1],
        ['probe', 'completed', 1],
        ['after', 'completed', 1],
      ]);
    } finally {
      await w.stop();
    }
  });

  it('posts to a webhook stored whole as the secret of a secret connection', async () => {
    const w = worker('w-hook');
    await w.start();
    try {
      const ws = workspaceFor(() => w, 'ws-run');
      const { run } = await ws.runs.start(startInput('notify', {}));
      const done = await waitFor(ws, run.id, finished);
      expect(done.status, JSON.stringify(done.error)).toBe('completed');
      expect(hits.get(HOOK_PATH)).toBe(1);
    } finally {
      await w.stop();
    }
  });

  it('refuses input that does not match the invocation, and stores nothing', async () => {
    const ws = workspaceFor(() => null, 'ws-run');
    const before = (await repos.listRuns(h.db, 'ws-run', { limit: 500 })).length;
    await expect(
      ws.runs.start(startInput('double', { n: 'two', extra: true }, { toolName: 'double_it' })),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      issues: [
        { path: 'extra', message: 'is not an input of this invocation' },
        { path: 'n', message: 'must be integer' },
      ],
    });
    expect((await repos.listRuns(h.db, 'ws-run', { limit: 500 })).length).toBe(before);
  });

  it('returns the same run for a retried start with the same idempotency key', async () => {
    const ws = workspaceFor(() => null, 'ws-run');
    const start = () => ws.runs.start(startInput('double', { n: 1 }, { idempotencyKey: 'retry-me' }));
    const a = await start();
    const b = await start();
    expect(a.created).toBe(true);
    expect(b.created).toBe(false);
    expect(b.run.id).toBe(a.run.id);
  });

  it('takes a run whose caller waits at its insert, leased already, and a run handed to a dead worker is taken over', async () => {
    const w = worker('w-handoff');
    await w.start();
    const woken: string[] = [];
    const handoffWs = (reserve: () => RunHandoff | null) =>
      openWorkspace(
        testWorkspaceDeps(h.db, {
          now: () => new Date(),
          runs: {
            queued: () => {
              woken.push('queued');
              w.wake();
            },
            cancelRequested: () => {},
            handoff: reserve,
          },
        }),
        { workspaceId: 'ws-run', actor: { kind: 'service_account', id: 'sa_test' } },
      );
    const start = (ws: Workspace, waits: boolean) =>
      ws.runs.start(startInput('double', { n: 4 }, { toolName: 'double_it', waits }));
    try {
      const ws = handoffWs(() => handoffOf(h.db, w.reserve(), silentLog));
      const { run } = await start(ws, true);
      // No queue round: inserted running under the worker's lease, nobody woken.
      expect([run.status, run.attempts]).toEqual(['running', 1]);
      expect(woken).toEqual([]);
      const done = await waitFor(ws, run.id, finished);
      expect([done.status, done.attempts]).toEqual(['completed', 1]);
      expect(await ws.runs.result(run.id)).toEqual({ mimeType: 'application/json', value: { doubled: 8 } });
      // A caller that does not wait queues as before.
      const queued = await start(ws, false);
      expect(queued.run.status).toBe('queued');
      expect(woken).toEqual(['queued']);
      await waitFor(ws, queued.run.id, finished);
    } finally {
      await w.stop();
    }
    // Every slot reserved: no handoff.
    const busy = worker('w-busy');
    await busy.start();
    const slots = [1, 2, 3, 4].map(() => busy.reserve());
    expect(slots.every((r) => r !== null)).toBe(true);
    expect(busy.reserve()).toBeNull();
    for (const r of slots) r?.release();
    expect(busy.reserve()).not.toBeNull();
    await busy.stop();
    // Runs queued while every slot was busy go first: a slot freed meanwhile is not handed to a newer caller.
    const fifo = worker('w-fifo');
    await fifo.start();
    // Its first pump (sent at start, for up to 4 runs) must be over, or it could take the run queued below.
    await new Promise((r) => setTimeout(r, 300));
    const busySlots = [1, 2, 3, 4].map(() => fifo.reserve());
    const fifoWs = openWorkspace(
      testWorkspaceDeps(h.db, {
        now: () => new Date(),
        runs: {
          queued: () => fifo.wake(),
          cancelRequested: () => {},
          handoff: () => handoffOf(h.db, fifo.reserve(), silentLog),
        },
      }),
      { workspaceId: 'ws-run', actor: { kind: 'service_account', id: 'sa_test' } },
    );
    try {
      // The older run holds its slot (its step waits on /hold): a newer caller cannot find it free by the older
      // having finished already.
      held = new Promise<void>((resolve) => {
        openHold = resolve;
      });
      const older = await fifoWs.runs.start(startInput('hold', {}, { waits: false }));
      expect(older.run.status).toBe('queued');
      expect((await fifoWs.runs.get(older.run.id))?.status).toBe('queued');
      busySlots[0]?.release();
      // The freed slot belongs to the queued run: the next waiting caller queues behind it.
      expect(fifo.reserve()).toBeNull();
      const newer = await start(fifoWs, true);
      expect(newer.run.status).toBe('queued');
      openHold();
      for (const r of busySlots.slice(1)) r?.release();
      const [a, b] = await Promise.all([
        waitFor(fifoWs, older.run.id, finished),
        waitFor(fifoWs, newer.run.id, finished),
      ]);
      expect([a.status, b.status]).toEqual(['completed', 'completed']);
      expect(new Date(a.startedAt ?? 0).getTime()).toBeLessThanOrEqual(new Date(b.startedAt ?? 0).getTime());
      // The queue drained: a waiting caller is handed a slot again.
      await expectEventually(() => fifo.reserve());
    } finally {
      openHold();
      await fifo.stop();
    }
    // A worker that took a run at its insert and died: its lease expires and another worker runs it.
    const dead = { owner: 'w-dead', leaseMs: 300, take: () => {}, release: () => {} };
    const { run } = await start(
      handoffWs(() => dead),
      true,
    );
    expect(run.status).toBe('running');
    const heir = worker('w-heir');
    await heir.start();
    try {
      const ws = workspaceFor(() => heir, 'ws-run');
      const done = await waitFor(ws, run.id, finished);
      expect([done.status, done.attempts]).toEqual(['completed', 2]);
      const events = await ws.runs.events(run.id, { limit: 50, afterId: null, stepId: null });
      expect(events?.map((e) => e.type)).toEqual([
        'run_resumed',
        'step_started',
        'step_completed',
        'run_completed',
      ]);
    } finally {
      await heir.stop();
    }
  });

  it('sleeps durably, resumes on another worker after a restart, and never repeats a finished step', async () => {
    hits.clear();
    const first = worker('w-first');
    await first.start();
    const ws = workspaceFor(() => first, 'ws-run');
    const { run } = await ws.runs.start(startInput('fetch-two', { id: 'x1' }));
    await waitFor(ws, run.id, (s) => s === 'waiting');
    // The process stops while the run sleeps; a new worker picks it up when the timer is due.
    await first.stop();
    const second = worker('w-second');
    await second.start();
    try {
      const done = await waitFor(ws, run.id, finished);
      expect(done.status).toBe('completed');
      expect(hits.get('/first')).toBe(1);
      expect(hits.get('/second')).toBe(1);
      const result = await ws.runs.result(run.id);
      expect(result?.value).toEqual({
        first: { path: '/first', auth: 'Bearer [redacted]' },
        second: { path: '/second', auth: 'Bearer [redacted]' },
      });
      // The canary secret is nowhere: not in the journal, the events, the result or the run row.
      const stored = JSON.stringify([
        await repos.listRunSteps(h.db, 'ws-run', run.id, { limit: 50 }),
        await repos.listRunEvents(h.db, 'ws-run', run.id, { limit: 500 }),
        await repos.getRun(h.db, 'ws-run', run.id),
      ]);
      expect(stored).not.toContain(SECRET);
    } finally {
      await second.stop();
    }
  });

  it('cancels a sleeping run, which then stays cancelled', async () => {
    const w = worker('w-cancel');
    await w.start();
    try {
      const ws = workspaceFor(() => w, 'ws-run');
      const { run } = await ws.runs.start(startInput('fetch-two', { id: 'x2' }));
      await waitFor(ws, run.id, (s) => s === 'waiting');
      expect((await ws.runs.cancel(run.id))?.status).toBe('cancelled');
      await new Promise((r) => setTimeout(r, 600));
      expect((await ws.runs.get(run.id))?.status).toBe('cancelled');
    } finally {
      await w.stop();
    }
  });

  it('runs a singleton flow one run at a time, even across two workers', async () => {
    const a = worker('w-a');
    const b = worker('w-b');
    await a.start();
    await b.start();
    try {
      const ws = workspaceFor(() => a, 'ws-run');
      const started = await Promise.all(
        ['t1', 't2', 't3'].map((tag) => ws.runs.start(startInput('one-at-a-time', { tag }))),
      );
      b.wake();
      const done = await Promise.all(started.map((s) => waitFor(ws, s.run.id, finished)));
      expect(done.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
      // Each run's life (start → finish) never overlaps another's.
      const spans = done
        .map((r) => [Date.parse(r.startedAt as string), Date.parse(r.finishedAt as string)] as const)
        .sort((x, y) => x[0] - y[0]);
      for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});

/** A released flow whose draft edits the path it calls; its slot is bound for live only until a test binds the draft. */
const editedFlow = (path: string) => `{:slug :edited
 :requires [{:slot :api :type :http-api}]
 :invocations {:default {:inputs []}}
 :flow (let [r (flow/step :http :call {:connection :api :path "${path}"})] {:path (:path (:body r))})}`;

describe('draft runs', () => {
  it("use the draft's own binding for a slot, else the live one, and never change what live runs use", async () => {
    const deps = testWorkspaceDeps(h.db);
    const wsId = 'ws-draft-run';
    await seedWorkspace(h.db, wsId, 'draft runs');
    await seedFlow(h.db, wsId, editedFlow('/v1'), { release: 'v1' });
    const live = await seedConnection(deps, wsId, 1, { baseUrl: `${base}/live` });
    const own = await seedConnection(deps, wsId, 2, { baseUrl: `${base}/draft` });
    await repos.setFlowBindings(h.db, wsId, 'edited', 'live', { api: live });
    await repos.saveDraft(h.db, wsId, draftOf(editedFlow('/v2')));
    const w = worker('w-draft');
    await w.start();
    try {
      const ws = workspaceFor(() => w, wsId);
      const runOf = async (target: 'live' | 'draft') => {
        const { run } = await ws.runs.start(startInput('edited', {}, { target, allowDraft: true }));
        const done = await waitFor(ws, run.id, finished);
        expect(done.status, JSON.stringify(done.error)).toBe('completed');
        return (await ws.runs.result(run.id))?.value;
      };
      const open = await ws.flows.open({ slug: 'edited', installationId: null, includeInstalled: false });
      const draftReadiness = await open?.readiness('draft');
      expect(draftReadiness?.ready).toBe(true);
      expect(draftReadiness?.slots).toMatchObject([{ slot: 'api', boundFor: 'live', connectionId: live }]);
      expect(await runOf('draft')).toEqual({ path: '/live/v2' });

      await repos.setFlowBindings(h.db, wsId, 'edited', 'draft', { api: own });
      expect((await open?.readiness('draft'))?.slots).toMatchObject([
        { slot: 'api', boundFor: 'draft', connectionId: own },
      ]);
      expect((await open?.readiness('live'))?.slots).toMatchObject([
        { slot: 'api', boundFor: 'live', connectionId: live },
      ]);
      expect(await runOf('draft')).toEqual({ path: '/draft/v2' });
      expect(await runOf('live')).toEqual({ path: '/live/v1' });
    } finally {
      await w.stop();
    }
  });

  it('hands an :mcp step the mcp-server connection with its credentials and fixed headers, and redacts its secret', async () => {
    const deps = testWorkspaceDeps(h.db);
    const wsId = 'ws-mcp-run';
    const token = 'mcp-canary-token-5d2f8a1c';
    await seedWorkspace(h.db, wsId, 'mcp runs');
    await seedFlow(
      h.db,
      wsId,
      `{:slug :ask-docs
 :requires [{:slot :docs :type :mcp-server}]
 :invocations {:default {:inputs []}}
 :flow (flow/step :mcp :search {:connection :docs :tool "search" :arguments {:q "refunds"}})}`,
      { release: 'v1' },
    );
    const conn = await seedConnection(deps, wsId, 1, {
      type: 'mcp-server',
      baseUrl: `${base}/mcp`,
      secret: token,
      authType: 'bearer',
      config: { 'header:X-Tenant': 'acme' },
    });
    await repos.setFlowBindings(h.db, wsId, 'ask-docs', 'live', { docs: conn });
    const seen: { url: string; headers: Record<string, string>; calls: unknown[] }[] = [];
    const w = createWorker({
      db: h,
      secretBox: deps.secretBox,
      concurrency: 1,
      allowPrivateNetwork: true,
      id: 'w-mcp',
      mcp: async (options) => {
        const record = { url: options.url.href, headers: options.headers, calls: [] as unknown[] };
        seen.push(record);
        return {
          server: { protocolVersion: '2025-06-18', name: 'fake' },
          listTools: async () => [],
          callTool: async (name, args) => {
            record.calls.push([name, args]);
            return { content: [{ type: 'text', text: `hit for ${token}` }], isError: false };
          },
          close: async () => {},
        };
      },
    });
    await w.start();
    try {
      const ws = workspaceFor(() => w, wsId);
      const { run } = await ws.runs.start(startInput('ask-docs', {}));
      const done = await waitFor(ws, run.id, finished);
      expect(done.status, JSON.stringify(done.error)).toBe('completed');
      expect(seen).toEqual([
        {
          url: `${base}/mcp`,
          headers: { 'X-Tenant': 'acme', authorization: `Bearer ${token}` },
          calls: [['search', { q: 'refunds' }]],
        },
      ]);
      expect((await ws.runs.result(run.id))?.value).toEqual({
        content: [{ type: 'text', text: 'hit for [redacted]' }],
        structured: null,
        'is-error': false,
      });
    } finally {
      await w.stop();
    }
  });
});

describe('usage', () => {
  it('is told of a run started, and ended once by the worker that ended it, with the usage of all its attempts', async () => {
    const ended: EndedRunUsage[] = [];
    const started: string[] = [];
    const usage = {
      runStarted: (r: { flowSlug: string }) => started.push(r.flowSlug),
      runEnded: (r: EndedRunUsage) => ended.push(r),
    };
    const metered = (id: string) =>
      createWorker({
        db: h,
        secretBox: testWorkspaceDeps(h.db).secretBox,
        concurrency: 4,
        leaseMs: 5_000,
        allowPrivateNetwork: true,
        id,
        usage,
      });
    let current: Worker | null = metered('w-usage-1');
    await current.start();
    const ws = openWorkspace(
      testWorkspaceDeps(h.db, {
        now: () => new Date(),
        runs: { queued: () => current?.wake(), cancelRequested: () => {} },
        usage,
      }),
      { workspaceId: 'ws-run', actor: { kind: 'service_account', id: 'sa_test' } },
    );
    const { run } = await ws.runs.start(startInput('fetch-two', { id: 'u1' }));
    await waitFor(ws, run.id, (s) => s === 'waiting');
    // Asleep is not an end: nothing reported yet. The next attempt runs on another worker.
    expect(ended).toEqual([]);
    await current.stop();
    current = metered('w-usage-2');
    await current.start();
    try {
      await waitFor(ws, run.id, finished);
      // A sleeping run cancelled by the domain is reported by the domain, with what it used so far.
      const { run: second } = await ws.runs.start(startInput('fetch-two', { id: 'u2' }));
      await waitFor(ws, second.id, (s) => s === 'waiting');
      await ws.runs.cancel(second.id);
      await ws.runs.cancel(second.id); // already cancelled: not reported again
      expect(started).toEqual(['fetch-two', 'fetch-two']);
      expect(ended).toEqual([
        {
          workspaceId: 'ws-run',
          flowSlug: 'fetch-two',
          status: 'completed',
          steps: 3,
          httpCalls: 2,
          llmTokens: 0,
        },
        {
          workspaceId: 'ws-run',
          flowSlug: 'fetch-two',
          status: 'cancelled',
          steps: 2,
          httpCalls: 1,
          llmTokens: 0,
        },
      ]);
    } finally {
      await current.stop();
    }
  });
});
