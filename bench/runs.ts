/**
 * Durable runs end to end: a one-`:function`-step flow started through the admin API of a real gateway (in this
 * process), executed by workers — the in-process worker on embedded PGlite; one, then two `flowgate worker`
 * processes on Postgres (a throwaway database, dropped afterwards) when one is reachable.
 *
 * Per setup: throughput — a backlog of runs queued through the admin API, then the workers started and timed from the
 * first claim to the last finish (database clock) — and latency — runs started one at a time, start request sent →
 * the worker's run-ended notification received, p50/p99. Baseline, measured on the same database in the same run:
 * bare `INSERT` + `UPDATE` round-trip pairs (what a run costs at the very least: queued, then finished).
 * Targets: start → completed p50 ≤ 10 ms; ≥ 500 runs/s with 2 workers on Postgres.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createDb, type DbHandle, repos } from '@flowgate/db';
import { validateFlow } from '@flowgate/flows';
import { createLogger, loadConfig, type RunningGateway, startGateway } from '@flowgate/gateway';
import { z } from 'zod';
import type { Benchmark } from './lib/bench.js';
import { BENCH_RATE_LIMITS } from './lib/gateway.js';
import { DEFAULT_PG_URL, postgresReachable, throwawayDatabase } from './lib/postgres.js';
import { ROOT } from './lib/proc.js';
import { type Check, fmt, heading, log } from './lib/report.js';

const WS = 'ws-bench-runs';
const SLUG = 'double';
const FLOW = `{:slug :${SLUG}
 :invocations {:default {:inputs [{:name :n :type :integer :required true}]}}
 :flow (flow/step :function :double {:code (fn [x] {:doubled (* 2 (:n x))}) :input (flow/input)})}`;
/** The worker's NOTIFY channel for a run that ended (`ENDED_CHANNEL` in @flowgate/worker). */
const ENDED_CHANNEL = 'flowgate_run_ended';
const WORKER_CONCURRENCY = 8;
interface Size {
  backlog: { pglite: number; postgres: number };
  latencyRuns: number;
  latencyWarmup: number;
  baselinePairs: number;
}
const FULL: Size = {
  backlog: { pglite: 600, postgres: 1500 },
  latencyRuns: 200,
  latencyWarmup: 20,
  baselinePairs: 1000,
};
/** --quick: proves the benchmark runs; its figures are too small a sample to compare. */
const QUICK: Size = {
  backlog: { pglite: 60, postgres: 150 },
  latencyRuns: 20,
  latencyWarmup: 5,
  baselinePairs: 100,
};
/** Admin API starts in flight at once while queueing the backlog. */
const START_PARALLELISM = 16;
const TARGET_P50_MS = 10;
const TARGET_RUNS_PER_S = 500;

const startAnswer = z.object({ runId: z.string(), status: z.string() });

interface Rig {
  h: DbHandle;
  gw: RunningGateway;
  adminToken: string;
  dataDir: string;
  /** Run ids by the time their end was notified (performance.now()). */
  ended: Map<string, number>;
  waiters: Map<string, () => void>;
  unlisten: () => Promise<void>;
}

async function openRig(h: DbHandle, databaseUrl: string | undefined): Promise<Rig> {
  const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-bench-runs-'));
  const adminToken = `bench-${randomBytes(24).toString('hex')}`;
  const gw = await startGateway({
    config: loadConfig({
      FLOWGATE_HOST: '127.0.0.1',
      FLOWGATE_PORT: '0',
      FLOWGATE_DATA_DIR: dataDir,
      FLOWGATE_ADMIN_TOKEN: adminToken,
      FLOWGATE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      FLOWGATE_LOG_LEVEL: 'silent',
      // Workers are started when the backlog is queued (the in-process one on PGlite, processes on Postgres).
      FLOWGATE_WORKER: 'false',
      FLOWGATE_WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
      FLOWGATE_RUN_MAX_LIVE_PER_WORKSPACE: '1000000',
      ...BENCH_RATE_LIMITS,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    }),
    db: h,
    logger: createLogger('silent'),
  });
  const ended = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const unlisten = await h.listen(ENDED_CHANNEL, (runId) => {
    ended.set(runId, performance.now());
    waiters.get(runId)?.();
  });
  const rig: Rig = { h, gw, adminToken, dataDir, ended, waiters, unlisten };
  await adminPost(rig, '/api/admin/workspaces', { id: WS, name: 'bench runs' }, 201);
  const checked = validateFlow(FLOW);
  if (!checked.valid || !checked.model) throw new Error('bench flow does not validate');
  await repos.saveDraft(h.db, WS, { literal: FLOW, model: checked.model });
  await repos.releaseFlow(h.db, WS, SLUG, { releaseNote: 'bench' });
  await h.db.execute(
    'create table if not exists bench_bare (id text primary key, status text not null, n int)',
  );
  return rig;
}

async function closeRig(rig: Rig): Promise<void> {
  await rig.unlisten().catch(() => {});
  await rig.gw.close().catch(() => {});
  rmSync(rig.dataDir, { recursive: true, force: true });
}

async function adminPost(rig: Rig, path: string, body: unknown, expect: number): Promise<unknown> {
  const res = await fetch(`${rig.gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${rig.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`POST ${path}: expected ${expect}, got ${res.status}: ${text}`);
  return JSON.parse(text);
}

const startRun = async (rig: Rig, n: number) =>
  startAnswer.parse(await adminPost(rig, `/api/workspaces/${WS}/flows/${SLUG}/runs`, { input: { n } }, 202))
    .runId;

function pct(sorted: number[], p: number): number {
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
}

// ---- baseline: bare INSERT + UPDATE round trips ---------------------------------------------------------------------

interface Baseline {
  pairsPerS: number;
  p50: number;
}

async function baseline(h: DbHandle, pairs: number): Promise<Baseline> {
  await h.db.execute('truncate bench_bare');
  const times: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < pairs; i++) {
    const s = performance.now();
    await h.db.execute(`insert into bench_bare (id, status, n) values ('b${i}', 'queued', ${i})`);
    await h.db.execute(`update bench_bare set status = 'completed', n = n * 2 where id = 'b${i}'`);
    times.push(performance.now() - s);
  }
  const elapsed = (performance.now() - t0) / 1000;
  times.sort((a, b) => a - b);
  return { pairsPerS: pairs / elapsed, p50: pct(times, 50) };
}

// ---- workers --------------------------------------------------------------------------------------------------------

interface Workers {
  stop(): Promise<void>;
}

async function workerProcesses(url: string, count: number): Promise<Workers> {
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'apps/cli/src/main.ts', 'worker', '--concurrency', String(WORKER_CONCURRENCY)],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: url,
          FLOWGATE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
          FLOWGATE_LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    children.push(child);
    ready.push(
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error('a worker process did not start within 60 s')),
          60_000,
        );
        child.once('exit', (code) => reject(new Error(`a worker process exited early (${code})`)));
        child.stdout?.on('data', (chunk: Buffer) => {
          if (chunk.toString('utf8').includes('worker started')) {
            clearTimeout(timer);
            resolve();
          }
        });
      }),
    );
  }
  const stop = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null) return resolve();
            const kill = setTimeout(() => c.kill('SIGKILL'), 15_000);
            c.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
  };
  process.once('exit', () => {
    for (const c of children) c.kill('SIGKILL');
  });
  try {
    await Promise.all(ready);
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}

// ---- measurements ---------------------------------------------------------------------------------------------------

interface Figures {
  label: string;
  startsPerS: number;
  runsPerS: number;
  p50: number;
  p99: number;
  baseline: Baseline;
}

/** Queues `count` runs through the admin API; returns their ids and the start rate. */
async function queueBacklog(rig: Rig, count: number): Promise<{ ids: string[]; startsPerS: number }> {
  const ids: string[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: START_PARALLELISM }, async () => {
      while (next < count) {
        const n = next++;
        ids.push(await startRun(rig, n));
      }
    }),
  );
  return { ids, startsPerS: count / ((performance.now() - t0) / 1000) };
}

/** Waits until every run of `ids` completed; runs/s from the first claim to the last finish (database clock). */
async function drain(rig: Rig, ids: string[]): Promise<number> {
  const until = Date.now() + 180_000;
  while ((await repos.countLiveRuns(rig.h.db, WS)) > 0) {
    if (Date.now() > until) throw new Error('the backlog did not drain within 180 s');
    await new Promise((r) => setTimeout(r, 25));
  }
  const wanted = new Set(ids);
  const rows = (await repos.listRuns(rig.h.db, WS, { limit: ids.length + 1000 })).filter((r) =>
    wanted.has(r.id),
  );
  const bad = rows.filter((r) => r.status !== 'completed');
  if (rows.length !== ids.length || bad.length)
    throw new Error(
      `${rows.length}/${ids.length} runs found, ${bad.length} not completed (${bad[0]?.status})`,
    );
  const first = Math.min(...rows.map((r) => r.startedAt!.getTime()));
  const last = Math.max(...rows.map((r) => r.finishedAt!.getTime()));
  return ids.length / (Math.max(1, last - first) / 1000);
}

/** Runs started one at a time: start request sent → run-ended notification. */
async function latency(rig: Rig, size: Size): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < size.latencyWarmup + size.latencyRuns; i++) {
    const t0 = performance.now();
    const runId = await startRun(rig, i);
    if (!rig.ended.has(runId)) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`run ${runId} did not end within 10 s`)), 10_000);
        rig.waiters.set(runId, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      rig.waiters.delete(runId);
    }
    if (i >= size.latencyWarmup) times.push(rig.ended.get(runId)! - t0);
  }
  times.sort((a, b) => a - b);
  return { p50: pct(times, 50), p99: pct(times, 99) };
}

async function measure(
  rig: Rig,
  label: string,
  backlog: number,
  size: Size,
  startWorkers: () => Promise<Workers>,
): Promise<Figures> {
  const base = await baseline(rig.h, size.baselinePairs);
  const { ids, startsPerS } = await queueBacklog(rig, backlog);
  const workers = await startWorkers();
  try {
    const runsPerS = await drain(rig, ids);
    const { p50, p99 } = await latency(rig, size);
    const f = { label, startsPerS, runsPerS, p50, p99, baseline: base };
    log(
      `  ${label.padEnd(24)} ${fmt(runsPerS).padStart(7)} runs/s  p50 ${fmt(p50, 2).padStart(6)} ms  p99 ${fmt(p99, 2).padStart(6)} ms  | bare INSERT+UPDATE ${fmt(base.pairsPerS).padStart(6)} pairs/s, p50 ${fmt(base.p50, 2)} ms  | runs/s ÷ pairs/s ${fmt(runsPerS / base.pairsPerS, 3)}  | admin starts ${fmt(startsPerS)}/s`,
    );
    return f;
  } finally {
    await workers.stop();
  }
}

export const runsBench: Benchmark = {
  name: 'runs',
  description:
    'one-:function-step runs via the admin API: start→completed p50/p99, runs/s (PGlite in-process; Postgres 1 and 2 worker processes)',
  async run(options) {
    const size = options.quick ? QUICK : FULL;
    heading('runs');
    log(
      `  backlog drained by the workers (runs/s, database clock), then ${size.latencyRuns} runs one at a time (start → ended); worker concurrency ${WORKER_CONCURRENCY}`,
    );
    const figures: Figures[] = [];

    const lite = await createDb();
    await lite.migrate();
    const liteRig = await openRig(lite, undefined);
    try {
      figures.push(
        await measure(liteRig, 'PGlite, in-process', size.backlog.pglite, size, async () => {
          const w = await liteRig.gw.deps.runWorkers.startLocal();
          return { stop: () => w.stop() };
        }),
      );
    } finally {
      await closeRig(liteRig);
      await lite.close();
    }

    const baseUrl = process.env.DATABASE_URL ?? DEFAULT_PG_URL;
    if (!(await postgresReachable(baseUrl))) {
      log(`  Postgres not reachable at ${baseUrl}: Postgres figures skipped`);
    } else {
      const db = await throwawayDatabase(baseUrl, 'fg_bench_runs');
      const pg = await createDb({ url: db.url, maxConnections: 8 });
      try {
        await pg.migrate();
        const rig = await openRig(pg, db.url);
        try {
          for (const count of [1, 2]) {
            figures.push(
              await measure(
                rig,
                `Postgres, ${count} worker${count > 1 ? 's' : ''}`,
                size.backlog.postgres,
                size,
                () => workerProcesses(db.url, count),
              ),
            );
          }
        } finally {
          await closeRig(rig);
        }
      } finally {
        await pg.close().catch(() => {});
        await db.drop();
      }
    }

    const checks: Check[] = figures.map((f) => ({
      benchmark: 'runs',
      name: `start→completed p50 (${f.label})`,
      value: `${fmt(f.p50, 2)} ms`,
      target: `≤ ${TARGET_P50_MS} ms`,
      pass: f.p50 <= TARGET_P50_MS,
    }));
    const two = figures.find((f) => f.label === 'Postgres, 2 workers');
    if (two) {
      checks.push({
        benchmark: 'runs',
        name: 'runs/s (Postgres, 2 workers)',
        value: fmt(two.runsPerS),
        target: `≥ ${TARGET_RUNS_PER_S}`,
        pass: two.runsPerS >= TARGET_RUNS_PER_S,
      });
    }
    return checks;
  },
};
