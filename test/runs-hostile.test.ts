import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import {
  installFlow,
  type Loopback,
  type RunView,
  startLoopback,
  startRun,
  waitForRun,
} from './support/runs.js';

/**
 * Hostile bodies end as clear failures within their limits, with a stable error code, and the in-process worker keeps
 * serving other runs. Small limits come from the gateway's configuration. PGlite by default, Postgres with DATABASE_URL.
 */

const WS = 'ws-hostile';
const WALL_TIME_MS = 3_000;
const MAX_RESULT_BYTES = 2_048;

const flow = (slug: string, body: string, requires = '') => `{:slug :${slug}
 ${requires}
 :invocations {:default {:inputs []}}
 :flow ${body}}`;

/** slug → [definition, expected status, expected error code]. */
const HOSTILE: Record<string, [string, string, string]> = {
  'busy-loop': [
    flow(
      'busy-loop',
      '(flow/step :function :spin {:code (fn [_] (reduce (fn [a x] (reduce + a (range 1000))) 0 (range 100000))) :input nil})',
    ),
    'failed',
    'eval_fuel_exhausted',
  ],
  'deep-recursion': [
    flow(
      'deep-recursion',
      '(flow/step :function :dive {:code (fn [_] ((fn f [n] (f (inc n))) 0)) :input nil})',
    ),
    'failed',
    'recursion_too_deep',
  ],
  'mutual-recursion': [
    flow(
      'mutual-recursion',
      '(flow/step :function :dive {:code (fn [_] (let [g (fn [h n] (h h (inc n)))] (g g 0))) :input nil})',
    ),
    'failed',
    'recursion_too_deep',
  ],
  'huge-collection': [
    flow(
      'huge-collection',
      '(flow/step :function :grow {:code (fn [_] (count (range 1000000000))) :input nil})',
    ),
    'failed',
    'collection_too_large',
  ],
  'exploding-for': [
    flow('exploding-for', '(count (for [a (range 1000) b (range 1000)] [a b]))'),
    'failed',
    'collection_too_large',
  ],
  'huge-result': [
    flow('huge-result', '(flow/step :function :big {:code (fn [_] (vec (range 5000))) :input nil})'),
    'failed',
    'result_too_large',
  ],
  'hanging-call': [
    flow(
      'hanging-call',
      '(flow/step :http :wait-forever {:connection :api :path "/hang" :timeout-ms 60000})',
      ':requires [{:slot :api :type :http-api}]',
    ),
    'timed-out',
    'run_timed_out',
  ],
};

const NORMAL = flow(
  'normal',
  '(flow/step :function :sum {:code (fn [_] {:sum (reduce + 0 (range 101))}) :input nil})',
);

let gw: TestGateway;
let api: Loopback;
const hung: Array<() => void> = [];

const elapsed = (r: RunView) => Date.parse(r.finishedAt as string) - Date.parse(r.startedAt as string);

beforeAll(async () => {
  // `/hang` answers only when the test ends: the run must give up on its own.
  api = await startLoopback(
    () =>
      new Promise((resolve) => {
        hung.push(() => resolve({ status: 200, json: {} }));
      }),
  );
  gw = await startTestGateway({
    FLOWGATE_WORKER: 'true',
    FLOWGATE_WORKER_CONCURRENCY: '2',
    FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
    FLOWGATE_RUN_WALL_TIME_MS: String(WALL_TIME_MS),
    FLOWGATE_RUN_MAX_RESULT_BYTES: String(MAX_RESULT_BYTES),
  });
  await gw.createWorkspace(WS);
  const conn = await gw.createConnection(WS, {
    name: 'api',
    type: 'http-api',
    baseUrl: api.url,
    auth: { type: 'none' },
  });
  for (const [slug, [edn]] of Object.entries(HOSTILE))
    await installFlow(gw, WS, slug, edn, slug === 'hanging-call' ? { api: conn.connectionId } : {});
  await installFlow(gw, WS, 'normal', NORMAL);
});

afterAll(async () => {
  for (const release of hung) release();
  await gw?.close();
  await api?.close();
});

describe('hostile bodies', () => {
  it('each ends with its stable code within its limits, and a run started after them completes', async () => {
    const slugs = Object.keys(HOSTILE);
    const ids = await Promise.all(slugs.map((slug) => startRun(gw, WS, slug, {})));
    const normalId = await startRun(gw, WS, 'normal', {});
    const ended = await Promise.all(ids.map((id) => waitForRun(gw, WS, id, undefined, 20_000)));

    expect(Object.fromEntries(ended.map((r) => [r.flowSlug, [r.status, r.error?.code]]))).toEqual(
      Object.fromEntries(slugs.map((slug) => [slug, [HOSTILE[slug]?.[1], HOSTILE[slug]?.[2]]])),
    );
    for (const run of ended) {
      // Each is one attempt, reported by a final event that carries the same code.
      expect(run.attempts, run.flowSlug).toBe(1);
      const last = run.events.at(-1);
      expect(last?.type, run.flowSlug).toBe(run.status === 'timed-out' ? 'run_timed_out' : 'run_failed');
      expect(last?.detail, run.flowSlug).toMatchObject({ error: { code: run.error?.code } });
      expect(run.result, run.flowSlug).toBeNull();
      // Evaluation limits stop a body well before the wall time; the wall time stops what waits.
      if (run.status === 'timed-out') {
        expect(elapsed(run)).toBeGreaterThanOrEqual(WALL_TIME_MS - 50);
        expect(elapsed(run)).toBeLessThan(WALL_TIME_MS + 3_000);
      } else expect(elapsed(run), run.flowSlug).toBeLessThan(WALL_TIME_MS);
    }
    const tooLarge = ended.find((r) => r.flowSlug === 'huge-result');
    expect(tooLarge?.error?.message).toContain(String(MAX_RESULT_BYTES));

    const normal = await waitForRun(gw, WS, normalId);
    expect([normal.status, normal.result]).toEqual([
      'completed',
      { mimeType: 'application/json', value: { sum: 5050 } },
    ]);
    // And the worker is still there for the next one.
    const after = await waitForRun(gw, WS, await startRun(gw, WS, 'normal', {}));
    expect(after.result?.value).toEqual({ sum: 5050 });
  });
});
