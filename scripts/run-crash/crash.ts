/**
 * Crash test of the run queue with real processes on real Postgres (`.ci/checks.d/20-run-crash`).
 *
 * Several `flowgate worker` processes share one throwaway database; a flow of five `:http` steps (and a `:function`
 * step) calls a loopback server that counts every request per (run, step) and answers slowly enough that kills land
 * mid-step. Runs are started through the admin API of an in-process gateway that runs no worker. While they run, a
 * random worker that holds leases is killed with SIGKILL and a replacement started, many times over.
 *
 * Asserts, exiting 1 on any violation: every run started is completed with exactly the expected result (none lost,
 * none failed); every step executed at least once; a step executed more than once only on a run that was taken over,
 * at most once per lost attempt (steps are sequential, so a dead attempt has at most one step in flight), and in total
 * no more than kills × concurrency; the surviving workers stop gracefully (exit 0). Prints the duplicated (in-flight)
 * step executions and the lease takeover time (kill → `run_resumed` by another worker) p50/max.
 *
 * Env: CRASH_DATABASE_URL (required: a database this script may fill; the check script creates and drops it),
 * CRASH_RUNS (80), CRASH_WORKERS (3), CRASH_CONCURRENCY (2), CRASH_KILLS (12), CRASH_LEASE_MS (1500).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { createDb, type DbHandle, repos } from '@flowgate/db';
import { validateFlow } from '@flowgate/flows';
import { createLogger, loadConfig, startGateway } from '@flowgate/gateway';
import { z } from 'zod';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const env = z
  .object({
    CRASH_DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'a postgres:// URL'),
    CRASH_RUNS: z.coerce.number().int().min(1).max(1000).default(80),
    CRASH_WORKERS: z.coerce.number().int().min(2).max(8).default(3),
    CRASH_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
    CRASH_KILLS: z.coerce.number().int().min(1).max(100).default(12),
    CRASH_LEASE_MS: z.coerce.number().int().min(500).max(10_000).default(1500),
  })
  .parse(process.env);

const WS = 'ws-crash';
const SLUG = 'crash-steps';
const HTTP_STEPS = ['s1', 's2', 's3', 's4', 's5'] as const;
/** The whole test must end well inside CI's patience. */
const DEADLINE_MS = 180_000;

const started = Date.now();
const log = (line: string) =>
  process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);
const violations: string[] = [];
const violate = (what: string) => {
  violations.push(what);
  log(`VIOLATION: ${what}`);
};

// ---- the loopback API: counts every request per (run, step), answers after a delay --------------------------------

const hits = new Map<string, number>();
const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const step = url.pathname.slice(1);
  const run = url.searchParams.get('run') ?? '?';
  const prev = url.searchParams.get('prev') ?? '?';
  const key = `${run}|${step}`;
  hits.set(key, (hits.get(key) ?? 0) + 1);
  // Slow enough that a kill often lands while a request is in flight.
  setTimeout(
    () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ token: token(step, prev) }));
    },
    80 + Math.floor(Math.random() * 170),
  );
});
const token = (step: string, prev: string) => `${step}<${prev}>`;

/** What a run with input id must end with, computed the way the flow and the server compute it. */
function expectedResult(id: string) {
  const a = token('s1', `start-${id}`);
  const b = token('s2', a);
  const c = token('s3', b);
  const d = `${a}+${c}`;
  const e = token('s4', d);
  const f = token('s5', e);
  return { id, tokens: [a, b, c, e], final: f };
}

function flowLiteral(base: string): string {
  return `{:slug :${SLUG}
 :invocations {:default {:inputs [{:name :id :type :string :required true}]}}
 :flow (let [id (:id (flow/input))
             a (flow/step :http :s1 {:url "${base}/s1" :query {:run id :prev (str "start-" id)}})
             b (flow/step :http :s2 {:url "${base}/s2" :query {:run id :prev (:token (:body a))}})
             c (flow/step :http :s3 {:url "${base}/s3" :query {:run id :prev (:token (:body b))}})
             d (flow/step :function :mix {:code (fn [x] (str (:a x) "+" (:c x)))
                                          :input {:a (:token (:body a)) :c (:token (:body c))}})
             e (flow/step :http :s4 {:url "${base}/s4" :query {:run id :prev d}})
             f (flow/step :http :s5 {:url "${base}/s5" :query {:run id :prev (:token (:body e))}})]
         {:id id
          :tokens [(:token (:body a)) (:token (:body b)) (:token (:body c)) (:token (:body e))]
          :final (:token (:body f))})}`;
}

// ---- worker processes -----------------------------------------------------------------------------------------------

interface WorkerProc {
  n: number;
  child: ChildProcess;
  pid: number;
  ready: Promise<void>;
  exited: Promise<number | null>;
  /** Last lines of output, shown when something goes wrong. */
  tail: string[];
  killed: boolean;
}

const encryptionKey = randomBytes(32).toString('base64');
const workers: WorkerProc[] = [];
let workerCount = 0;

function spawnWorker(): WorkerProc {
  const n = ++workerCount;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'apps/cli/src/main.ts', 'worker', '--concurrency', String(env.CRASH_CONCURRENCY)],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: env.CRASH_DATABASE_URL,
        FLOWGATE_ENCRYPTION_KEY: encryptionKey,
        FLOWGATE_ALLOW_PRIVATE_NETWORK: 'true',
        FLOWGATE_RUN_LEASE_MS: String(env.CRASH_LEASE_MS),
        FLOWGATE_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (child.pid === undefined) throw new Error('could not start a worker process');
  const tail: string[] = [];
  let onReady: () => void = () => {};
  const ready = new Promise<void>((r) => {
    onReady = r;
  });
  const take = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      if (line.includes('worker started')) onReady();
      tail.push(line.slice(0, 400));
      if (tail.length > 20) tail.shift();
    }
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const w: WorkerProc = { n, child, pid: child.pid, ready, exited, tail, killed: false };
  workers.push(w);
  return w;
}

const alive = () => workers.filter((w) => !w.killed && w.child.exitCode === null);

// ---- helpers ----------------------------------------------------------------------------------------------------

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** Runs held under a live lease, by the pid in the lease owner (`host-pid-random`). */
async function leasesByPid(h: DbHandle): Promise<Map<number, string[]>> {
  const running = await repos.listRuns(h.db, WS, { limit: 1000, status: 'running' });
  const byPid = new Map<number, string[]>();
  const now = Date.now();
  for (const r of running) {
    const pid = Number(/-(\d+)-[0-9a-f]+$/.exec(r.leaseOwner ?? '')?.[1]);
    if (!pid || !r.leaseExpiresAt || r.leaseExpiresAt.getTime() <= now) continue;
    byPid.set(pid, [...(byPid.get(pid) ?? []), r.id]);
  }
  return byPid;
}

// ---- the test ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const h = await createDb({ url: env.CRASH_DATABASE_URL, maxConnections: 4 });
  await h.migrate();
  const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-crash-'));
  const adminToken = randomBytes(24).toString('hex');
  const gw = await startGateway({
    config: loadConfig({
      FLOWGATE_HOST: '127.0.0.1',
      FLOWGATE_PORT: '0',
      FLOWGATE_DATA_DIR: dataDir,
      FLOWGATE_ADMIN_TOKEN: adminToken,
      FLOWGATE_ENCRYPTION_KEY: encryptionKey,
      FLOWGATE_LOG_LEVEL: 'silent',
      // Only the worker processes execute runs.
      FLOWGATE_WORKER: 'false',
      DATABASE_URL: env.CRASH_DATABASE_URL,
    }),
    db: h,
    logger: createLogger('silent'),
  });
  const admin = async (path: string, body: unknown, expect: number) => {
    const res = await fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== expect)
      throw new Error(`POST ${path}: expected ${expect}, got ${res.status}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };

  try {
    await admin('/api/admin/workspaces', { id: WS, name: 'crash' }, 201);
    const checked = validateFlow(flowLiteral(base));
    if (!checked.valid || !checked.model)
      throw new Error(`flow invalid: ${JSON.stringify(checked.diagnostics)}`);
    await repos.saveDraft(h.db, WS, { literal: flowLiteral(base), model: checked.model });
    await repos.releaseFlow(h.db, WS, SLUG, { releaseNote: 'crash test' });

    for (let i = 0; i < env.CRASH_WORKERS; i++) spawnWorker();
    await withTimeout(Promise.all(workers.map((w) => w.ready)), 60_000, 'starting the workers');
    log(
      `${env.CRASH_WORKERS} workers up (concurrency ${env.CRASH_CONCURRENCY}, lease ${env.CRASH_LEASE_MS} ms)`,
    );

    const runIds: string[] = [];
    const inputs = new Map<string, string>();
    for (let i = 0; i < env.CRASH_RUNS; i++) {
      const id = `r${String(i).padStart(3, '0')}`;
      const out = await admin(`/api/workspaces/${WS}/flows/${SLUG}/runs`, { input: { id } }, 202);
      const runId = z.string().parse(out.runId);
      runIds.push(runId);
      inputs.set(runId, id);
    }
    log(`${runIds.length} runs started through the admin API`);

    // Chaos: kill a worker that holds leases, start a replacement, repeat.
    const kills: Array<{ at: number; pid: number; held: string[] }> = [];
    const isDone = async () =>
      (await repos.countLiveRuns(h.db, WS)) === 0 &&
      (await repos.listRuns(h.db, WS, { limit: 1 })).length > 0;
    while (kills.length < env.CRASH_KILLS && Date.now() - started < DEADLINE_MS / 2) {
      await sleep(500 + Math.floor(Math.random() * 700));
      if (await isDone()) break;
      const byPid = await leasesByPid(h);
      const victims = alive().filter((w) => byPid.has(w.pid));
      if (victims.length === 0) continue;
      const victim = victims[Math.floor(Math.random() * victims.length)]!;
      victim.killed = true;
      victim.child.kill('SIGKILL');
      kills.push({ at: Date.now(), pid: victim.pid, held: byPid.get(victim.pid) ?? [] });
      log(`kill -9 worker #${victim.n} (pid ${victim.pid}) holding ${byPid.get(victim.pid)?.length} run(s)`);
      spawnWorker();
    }
    log(`${kills.length} kills; waiting for every run to end`);
    for (;;) {
      if (await isDone()) break;
      if (Date.now() - started > DEADLINE_MS) {
        violate(`runs still live after ${DEADLINE_MS / 1000} s`);
        break;
      }
      await sleep(200);
    }

    // ---- assertions ----
    const rows = await repos.listRuns(h.db, WS, { limit: 1000 });
    if (rows.length !== runIds.length) violate(`${rows.length} runs stored, ${runIds.length} started`);
    const byId = new Map(rows.map((r) => [r.id, r]));
    let completed = 0;
    for (const runId of runIds) {
      const row = byId.get(runId);
      if (!row) {
        violate(`run ${runId} is lost`);
        continue;
      }
      if (row.status !== 'completed') {
        violate(`run ${runId} ended ${row.status}: ${JSON.stringify(row.error)}`);
        continue;
      }
      const want = expectedResult(inputs.get(runId)!);
      if (!isDeepStrictEqual(row.result, want)) {
        violate(`run ${runId} result ${JSON.stringify(row.result)} ≠ ${JSON.stringify(want)}`);
        continue;
      }
      completed++;
    }

    // Side effects: each (run, step) once, except a step in flight when its attempt died.
    const known = new Set(runIds.flatMap((r) => HTTP_STEPS.map((s) => `${inputs.get(r)}|${s}`)));
    for (const key of hits.keys()) if (!known.has(key)) violate(`unexpected request ${key}`);
    let duplicates = 0;
    const dupLines: string[] = [];
    for (const runId of runIds) {
      const row = byId.get(runId);
      let extra = 0;
      for (const s of HTTP_STEPS) {
        const n = hits.get(`${inputs.get(runId)}|${s}`) ?? 0;
        if (n === 0) violate(`step ${s} of ${runId} never executed`);
        if (n > 1) {
          extra += n - 1;
          dupLines.push(`${runId} ${s} ×${n} (attempts ${row?.attempts})`);
        }
      }
      duplicates += extra;
      // A lost attempt had at most one step in flight: more repeats than lost attempts means a finished step re-ran.
      const lostAttempts = Math.max(0, (row?.attempts ?? 1) - 1);
      if (extra > lostAttempts)
        violate(`${runId}: ${extra} repeated step(s) but only ${lostAttempts} lost attempt(s)`);
    }
    const allowed = kills.length * env.CRASH_CONCURRENCY;
    if (duplicates > allowed)
      violate(`${duplicates} repeated step executions > kills × concurrency = ${allowed}`);
    const takenOver = rows.filter((r) => r.attempts > 1).length;

    // Takeover time: from a kill to the first `run_resumed` after it, for each run the killed worker held.
    const takeovers: number[] = [];
    for (const k of kills) {
      for (const runId of k.held) {
        const events = await repos.listRunEvents(h.db, WS, runId, { limit: 500 });
        const resumed = events.find((e) => e.type === 'run_resumed' && e.at.getTime() >= k.at);
        const ended = events.find((e) => e.type === 'run_completed');
        if (resumed) takeovers.push(resumed.at.getTime() - k.at);
        else if (!ended || ended.at.getTime() >= k.at)
          violate(`run ${runId}, held by killed pid ${k.pid}, was never resumed`);
      }
    }
    takeovers.sort((a, b) => a - b);

    // The survivors stop gracefully.
    const survivors = alive();
    for (const w of survivors) w.child.kill('SIGTERM');
    const codes = await withTimeout(
      Promise.all(survivors.map((w) => w.exited)),
      30_000,
      'stopping the surviving workers',
    );
    codes.forEach((code, i) => {
      if (code !== 0) violate(`worker #${survivors[i]!.n} exited ${code} on SIGTERM`);
    });

    log('');
    log(
      `runs: ${runIds.length} started, ${completed} completed with the exact expected result, ${takenOver} taken over`,
    );
    log(
      `workers: ${workerCount} started, ${kills.length} killed with SIGKILL, ${survivors.length} stopped with SIGTERM`,
    );
    log(
      `repeated step executions (in flight at a kill): ${duplicates} (allowed ≤ ${kills.length} kills × ${env.CRASH_CONCURRENCY} = ${allowed})`,
    );
    for (const d of dupLines) log(`  ${d}`);
    log(
      `lease takeover (kill → resumed elsewhere, lease ${env.CRASH_LEASE_MS} ms): n=${takeovers.length} p50 ${percentile(takeovers, 50)} ms, max ${takeovers.at(-1) ?? Number.NaN} ms`,
    );
    if (kills.length < Math.min(3, env.CRASH_KILLS)) violate(`only ${kills.length} kills landed mid-run`);
    if (takeovers.length === 0) violate('no takeover was observed');
  } finally {
    for (const w of alive()) w.child.kill('SIGKILL');
    await gw.close().catch(() => {});
    await h.close().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

try {
  await main();
} catch (err) {
  violate(err instanceof Error ? (err.stack ?? err.message) : String(err));
}
if (violations.length) {
  for (const w of workers.slice(0, 3)) {
    log(`--- worker #${w.n} (pid ${w.pid}) last output:`);
    for (const line of w.tail) log(`    ${line}`);
  }
  log(`FAILED: ${violations.length} violation(s), ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(1);
}
log(`PASSED in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(0);
