import type { DbHandle } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { generateEncryptionKey } from '@flowgate/secrets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { getRun, installFlow, type Loopback, startLoopback, startRun, waitForRun } from './support/runs.js';

/**
 * Runs outlive the process that started them: a durable sleep survives a full gateway restart on the same database,
 * a cancelled sleeping run never wakes, and `:concurrency` holds when many starts arrive at once. PGlite by default,
 * Postgres with DATABASE_URL.
 */

const WS = 'ws-durable';

const NAP = `{:slug :nap
 :requires [{:slot :api :type :http-api}]
 :invocations {:default {:inputs [{:name :id :type :string :required true}
                                  {:name :ms :type :integer :required true}]}}
 :flow (let [input (flow/input)
             a (flow/step :http :before {:connection :api :path "/before" :query {:key (:id input)}})
             _ (flow/step :sleep :nap {:duration-ms (:ms input)})
             b (flow/step :http :after {:connection :api :path "/after" :query {:key (:id input)}})]
         {:id (:id input) :before (get-in a [:body :path]) :after (get-in b [:body :path])})}`;

const SOLO = `{:slug :solo
 :requires [{:slot :api :type :http-api}]
 :concurrency {:type :singleton}
 :invocations {:default {:inputs [{:name :tag :type :string :required true}]}}
 :flow (let [r (flow/step :http :work {:connection :api :path "/work" :query {:key "solo" :tag (:tag (flow/input))}})]
         {:tag (:tag (flow/input)) :status (:status r)})}`;

const SOLO_NAP = `{:slug :solo-nap
 :concurrency {:type :singleton}
 :invocations {:default {:inputs [{:name :tag :type :string :required true}]}}
 :flow (let [_ (flow/step :sleep :nap {:duration-ms 60000})] {:tag (:tag (flow/input))})}`;

const PER_ACCOUNT = `{:slug :per-account
 :requires [{:slot :api :type :http-api}]
 :concurrency {:type :keyed :key :account}
 :invocations {:default {:inputs [{:name :account :type :string :required true}
                                  {:name :n :type :integer :required true}]}}
 :flow (let [input (flow/input)
             r (flow/step :http :work {:connection :api :path "/work" :query {:key (:account input)}})]
         {:account (:account input) :n (:n input) :status (:status r)})}`;

/** Requests in flight at the loopback API, now and at most, per `key` query value and overall. */
const inFlight = new Map<string, number>();
const maxInFlight = new Map<string, number>();
let overall = 0;
let maxOverall = 0;
/** How long `/work` takes: long enough that runs allowed to overlap do overlap. */
const WORK_MS = 250;

const ENV = {
  FLOWGATE_WORKER: 'true',
  FLOWGATE_WORKER_CONCURRENCY: '4',
  FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
  // The same key across restarts: the second gateway must decrypt the connection secret the first one stored.
  FLOWGATE_ENCRYPTION_KEY: generateEncryptionKey(),
};

let db: DbHandle;
let gw: TestGateway;
let api: Loopback;

const hits = (path: string, key: string) =>
  api.received.filter((r) => r.path === path && r.query.key === key).length;

beforeAll(async () => {
  api = await startLoopback(async (req) => {
    const key = req.query.key ?? '';
    if (req.path === '/work') {
      inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
      maxInFlight.set(key, Math.max(maxInFlight.get(key) ?? 0, inFlight.get(key) ?? 0));
      maxOverall = Math.max(maxOverall, ++overall);
      await new Promise((r) => setTimeout(r, WORK_MS));
      inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
      overall--;
    }
    return { status: 200, json: { path: req.path, key } };
  });
  db = await createTestDb();
  gw = await startTestGateway(ENV, { db });
  await gw.createWorkspace(WS);
  const conn = await gw.createConnection(WS, {
    name: 'api',
    type: 'http-api',
    baseUrl: api.url,
    auth: { type: 'bearer', secret: 'durable-secret-0f9e8d7c' },
  });
  await installFlow(gw, WS, 'nap', NAP, { api: conn.connectionId });
  await installFlow(gw, WS, 'solo', SOLO, { api: conn.connectionId });
  await installFlow(gw, WS, 'solo-nap', SOLO_NAP);
  await installFlow(gw, WS, 'per-account', PER_ACCOUNT, { api: conn.connectionId });
});

afterAll(async () => {
  await gw?.close();
  await db?.close();
  await api?.close();
});

describe('durable sleep', () => {
  it('resumes after the whole gateway is stopped mid-sleep and a new one starts on the same database', async () => {
    const runId = await startRun(gw, WS, 'nap', { id: 'restart', ms: 1500 });
    const parked = await waitForRun(gw, WS, runId, (s) => s === 'waiting');
    expect(hits('/before', 'restart')).toBe(1);
    await gw.close();

    // Down for longer than the sleep: nothing runs meanwhile, and the run is still parked.
    await new Promise((r) => setTimeout(r, 1_700));
    expect(hits('/after', 'restart')).toBe(0);
    gw = await startTestGateway(ENV, { db });
    const run = await waitForRun(gw, WS, runId);
    expect(run.status).toBe('completed');
    expect(run.result).toEqual({
      mimeType: 'application/json',
      value: { id: 'restart', before: '/before', after: '/after' },
    });
    // Replay answered the first step from the journal: each request happened exactly once.
    expect([hits('/before', 'restart'), hits('/after', 'restart')]).toEqual([1, 1]);
    expect(Date.parse(run.finishedAt as string)).toBeGreaterThanOrEqual(Date.parse(parked.wakeAt as string));
    expect(run.attempts).toBe(2);
    expect(run.steps.map((s) => [s.stepId, s.status, s.attempts])).toEqual([
      ['before', 'completed', 1],
      ['nap', 'completed', 1],
      ['after', 'completed', 1],
    ]);
    expect(run.events.map((e) => e.type)).toEqual([
      'run_started',
      'step_started',
      'step_completed',
      'step_started',
      'step_waiting',
      'run_waiting',
      'run_resumed',
      'step_completed',
      'step_started',
      'step_completed',
      'run_completed',
    ]);
  });

  it('cancelled during a sleep, a run stays cancelled and never resumes', async () => {
    const runId = await startRun(gw, WS, 'nap', { id: 'cancel', ms: 600 });
    await waitForRun(gw, WS, runId, (s) => s === 'waiting');
    const res = await gw.admin('POST', `/api/workspaces/${WS}/runs/${runId}/cancel`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      runId,
      status: 'cancelled',
      error: { code: 'run_cancelled', message: 'the run was cancelled' },
    });
    // Well past the wake time, with the worker nudged: still cancelled, the second request never made.
    await new Promise((r) => setTimeout(r, 1_000));
    gw.running.deps.runWorkers.local?.wake();
    await new Promise((r) => setTimeout(r, 300));
    const run = await getRun(gw, WS, runId);
    expect(run.status).toBe('cancelled');
    expect(run.attempts).toBe(1);
    expect(hits('/after', 'cancel')).toBe(0);
    expect(run.events.map((e) => e.type).slice(-2)).toEqual(['run_waiting', 'run_cancelled']);
    // A second cancel changes nothing.
    const again = await gw.admin('POST', `/api/workspaces/${WS}/runs/${runId}/cancel`);
    expect((again.json as { status: string }).status).toBe('cancelled');
  });

  it('cancelling a sleeping singleton run frees its slot for the next run', async () => {
    const first = await startRun(gw, WS, 'solo-nap', { tag: 'one' });
    await waitForRun(gw, WS, first, (s) => s === 'waiting');
    const second = await startRun(gw, WS, 'solo-nap', { tag: 'two' });
    // The sleeping run holds the singleton: the next one waits its turn in the queue.
    await new Promise((r) => setTimeout(r, 400));
    expect((await getRun(gw, WS, second)).status).toBe('queued');
    await gw.admin('POST', `/api/workspaces/${WS}/runs/${first}/cancel`);
    expect((await waitForRun(gw, WS, second, (s) => s === 'waiting')).status).toBe('waiting');
    await gw.admin('POST', `/api/workspaces/${WS}/runs/${second}/cancel`);
    expect((await getRun(gw, WS, second)).status).toBe('cancelled');
  });
});

describe(':concurrency under parallel starts', () => {
  it('singleton: four runs started at once run one at a time, and all complete', async () => {
    maxInFlight.clear();
    const tags = ['a', 'b', 'c', 'd'];
    const ids = await Promise.all(tags.map((tag) => startRun(gw, WS, 'solo', { tag })));
    const runs = await Promise.all(ids.map((id) => waitForRun(gw, WS, id)));
    expect(runs.map((r) => [r.status, r.result?.value])).toEqual(
      tags.map((tag) => ['completed', { tag, status: 200 }]),
    );
    expect(maxInFlight.get('solo')).toBe(1);
    const spans = runs
      .map((r) => [Date.parse(r.startedAt as string), Date.parse(r.finishedAt as string)] as const)
      .sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < spans.length; i++)
      expect(spans[i]?.[0]).toBeGreaterThanOrEqual(spans[i - 1]?.[1] ?? 0);
  });

  it('keyed: runs of one account never overlap, runs of different accounts do', async () => {
    maxInFlight.clear();
    maxOverall = 0;
    const starts = ['acct-1', 'acct-2', 'acct-1', 'acct-2', 'acct-1', 'acct-2'].map((account, n) => ({
      account,
      n,
    }));
    const ids = await Promise.all(starts.map((input) => startRun(gw, WS, 'per-account', input)));
    const runs = await Promise.all(ids.map((id) => waitForRun(gw, WS, id)));
    expect(runs.map((r) => [r.status, r.result?.value])).toEqual(
      starts.map((s) => ['completed', { ...s, status: 200 }]),
    );
    expect([maxInFlight.get('acct-1'), maxInFlight.get('acct-2')]).toEqual([1, 1]);
    expect(maxOverall).toBe(2);
  });
});
