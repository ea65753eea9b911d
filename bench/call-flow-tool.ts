/**
 * `call_flow_tool` with `wait_ms` on a one-`:function`-step flow, over HTTP with an API key, through the real gateway
 * and its in-process worker — on embedded PGlite, then on Postgres when `DATABASE_URL` or the local server answers
 * (a throwaway database, dropped afterwards). Beside it, in the same interleaved rounds, authenticated `tools/list`
 * on the same gateway: the baseline ratio says what running a flow costs over the cheapest authenticated call.
 * Measured at one connection (latency: the target) and at `--connections` (throughput under contention).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DbHandle, schema } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { createLogger, loadConfig, startGateway } from '@flowgate/gateway';
import type { Benchmark, BenchOptions } from './lib/bench.js';
import { BENCH_RATE_LIMITS, mcpCall, mcpHeaders } from './lib/gateway.js';
import {
  type Contender,
  interleave,
  median,
  roundRatios,
  type Summary,
  summaryOf,
} from './lib/interleave.js';
import { type LoadSpec, runLoad } from './lib/load.js';
import { DEFAULT_PG_URL, postgresReachable } from './lib/postgres.js';
import { printProfile, profileThisProcess } from './lib/profile.js';
import { type Check, fmt, heading, log, printSummaries } from './lib/report.js';

const WS = 'ws-bench-run';
const TARGET_P50_MS = 10;

const FLOW = `{:slug :echo
 :invocations {:default {:inputs [{:name :word :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "echo_word" :invocation :default}]}
 :flow (flow/step :function :echo {:code (fn [x] {:echoed (:word x)}) :input (flow/input)})}`;

const CALL_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'call_flow_tool',
    arguments: { flow_slug: 'echo', tool_name: 'echo_word', input: { word: 'bench' }, wait_ms: 5_000 },
  },
});
const LIST_BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

interface DriverFigures {
  driver: string;
  summaries: Summary[];
  latency: { list: Summary; call: Summary };
  loaded: { list: Summary; call: Summary };
  runs: { total: number; completed: number };
  /** SQL statements one call sends (request path, worker, audit), counted on a warm gateway. */
  statementsPerCall: number;
}

/** One real call before the load: the load must measure completed runs answered inline, nothing else. */
async function probeCall(url: string, headers: Record<string, string>): Promise<void> {
  const answer = await mcpCall(url, headers, CALL_BODY);
  const result = (
    answer.json as
      | {
          result?: { isError?: boolean; structuredContent?: { run?: { status?: string }; result?: unknown } };
        }
      | undefined
  )?.result;
  if (answer.status !== 200 || result?.isError || result?.structuredContent?.run?.status !== 'completed') {
    throw new Error(`call_flow_tool did not complete inline: ${answer.status} ${answer.text.slice(0, 400)}`);
  }
}

async function runDriver(driver: 'pglite' | 'postgres', options: BenchOptions): Promise<DriverFigures> {
  const previous = process.env.DATABASE_URL;
  if (driver === 'pglite') delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = previous ?? DEFAULT_PG_URL;
  const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-bench-run-'));
  let h: DbHandle | undefined;
  let gw: Awaited<ReturnType<typeof startGateway>> | undefined;
  try {
    let counting = false;
    const statements: string[] = [];
    h = await createTestDb({
      onStatement: (text) => {
        if (counting) statements.push(text);
      },
    });
    const adminToken = `bench-${randomBytes(24).toString('hex')}`;
    // The gateway runs in this process (on the handle): its CPU is what readCpuMs(process.pid) measures, since
    // this process only waits while the load generator (its own process) runs.
    gw = await startGateway({
      config: loadConfig({
        FLOWGATE_HOST: '127.0.0.1',
        FLOWGATE_PORT: '0',
        FLOWGATE_DATA_DIR: dataDir,
        FLOWGATE_ADMIN_TOKEN: adminToken,
        FLOWGATE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        FLOWGATE_LOG_LEVEL: 'silent',
        FLOWGATE_WORKER: 'true',
        ...BENCH_RATE_LIMITS,
      }),
      db: h,
      logger: createLogger('silent'),
    });
    const base = gw.url;
    const admin = async (
      method: string,
      path: string,
      body: unknown,
      expect: number,
      type = 'application/json',
    ) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': type },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    };
    await admin('POST', '/api/admin/workspaces', { id: WS, name: WS }, 201);
    await admin('PUT', `/api/workspaces/${WS}/flows/echo/draft`, FLOW, 200, 'application/edn');
    await admin('POST', `/api/workspaces/${WS}/flows/echo/release`, {}, 200);
    const sa = await admin(
      'POST',
      `/api/workspaces/${WS}/service-accounts`,
      { name: 'bench-runner', capabilities: ['flows.read', 'flows.run', 'runs.read'] },
      201,
    );
    const key = (
      await admin(
        'POST',
        `/api/workspaces/${WS}/service-accounts/${String(sa.serviceAccountId)}/keys`,
        {},
        201,
      )
    ).key as { apiKey: string };
    const url = `${base}/api/workspaces/${WS}/mcp`;
    const headers = mcpHeaders(key.apiKey);
    await probeCall(url, headers);
    // A second call on the warm gateway, its statements counted (the audit queue and the worker's last writes
    // settle within the pause).
    counting = true;
    await probeCall(url, headers);
    await new Promise((r) => setTimeout(r, 1500));
    counting = false;
    const statementsPerCall = statements.length;
    if (options.verbose) {
      log(`  ${driver}: the statements of one warm call_flow_tool`);
      for (const text of statements) log(`    ${text.replace(/\s+/g, ' ').slice(0, 160)}`);
    }

    const spec = (body: string, connections: number, durationS = options.durationS): LoadSpec => ({
      url,
      method: 'POST',
      headers,
      body,
      connections,
      pipelining: 1,
      durationS,
    });
    const n = options.connections;
    const targets = [
      { name: 'tools/list, 1 conn', spec: spec(LIST_BODY, 1) },
      { name: 'call_flow_tool, 1 conn', spec: spec(CALL_BODY, 1) },
      { name: `tools/list, ${n} conn`, spec: spec(LIST_BODY, n) },
      { name: `call_flow_tool, ${n} conn`, spec: spec(CALL_BODY, n) },
    ];
    for (const t of targets) await runLoad({ ...t.spec, durationS: options.warmupS });
    const contenders: Contender[] = targets.map((t) => ({
      name: t.name,
      run: () => runLoad(t.spec, process.pid),
    }));
    const summaries = await interleave(contenders, options.rounds, (round, name, s) =>
      log(
        `  ${driver.padEnd(8)} round ${round}  ${name.padEnd(26)} ${fmt(s.rps).padStart(7)} req/s  p50 ${fmt(s.latencyMs.p50, 2)} ms  p99 ${fmt(s.latencyMs.p99, 2)} ms`,
      ),
    );
    if (options.profile) {
      const { file } = await profileThisProcess(`call-flow-tool-${driver}`, () =>
        runLoad(spec(CALL_BODY, 1, options.profileDurationS)),
      );
      printProfile(`call-flow-tool: CPU profile of call_flow_tool at 1 connection, ${driver}`, file);
    }
    // Every call must have finished its run inline: a run still queued or failed would mean the figures measured
    // something else (a timeout answer, an error result) than a completed call.
    // Runs of calls the load generator abandoned at the end of the last window may still be executing: let them end.
    const db = h.db;
    const statuses = async () =>
      (await db.select({ status: schema.runs.status }).from(schema.runs)).map((r) => r.status);
    let rows = await statuses();
    for (let i = 0; i < 150 && rows.some((s) => s === 'queued' || s === 'running'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      rows = await statuses();
    }
    const [list1, call1, listN, callN] = contenders.map((c) => summaryOf(summaries, c.name)) as [
      Summary,
      Summary,
      Summary,
      Summary,
    ];
    return {
      driver,
      summaries: [list1, call1, listN, callN],
      latency: { list: list1, call: call1 },
      loaded: { list: listN, call: callN },
      runs: { total: rows.length, completed: rows.filter((s) => s === 'completed').length },
      statementsPerCall,
    };
  } finally {
    await gw?.close();
    await h?.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (previous === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = previous;
  }
}

function report(f: DriverFigures): Check[] {
  log();
  log(`  ${f.driver}:`);
  printSummaries(f.summaries, f.summaries[0]?.name ?? '');
  log(`  SQL statements per call_flow_tool (warm, one :function step): ${f.statementsPerCall}`);
  const ratio = (cand: Summary, base: Summary) => {
    const r = roundRatios(cand, base);
    return `${fmt(median(r), 3)} (rounds ${fmt(Math.min(...r), 3)}–${fmt(Math.max(...r), 3)})`;
  };
  log(
    `  call_flow_tool ÷ tools/list throughput: 1 conn ${ratio(f.latency.call, f.latency.list)}, ` +
      `${f.loaded.call.name.split(', ')[1]} ${ratio(f.loaded.call, f.loaded.list)}`,
  );
  log(
    `  runs stored: ${f.runs.total.toLocaleString('en-US')}, completed ${f.runs.completed.toLocaleString('en-US')}`,
  );
  if (f.runs.completed !== f.runs.total) {
    throw new Error(`${f.driver}: ${f.runs.total - f.runs.completed} runs did not complete under load`);
  }
  return [
    {
      benchmark: 'call-flow-tool',
      name: `${f.driver}: p50 at 1 connection`,
      value: `${fmt(f.latency.call.p50, 2)} ms`,
      target: `≤ ${TARGET_P50_MS} ms`,
      pass: f.latency.call.p50 <= TARGET_P50_MS,
    },
  ];
}

async function run(options: BenchOptions): Promise<Check[]> {
  heading('call-flow-tool: call_flow_tool with wait_ms (one :function step) beside tools/list');
  log(
    `  API key over HTTP, in-process worker; ${options.rounds} rounds × ${options.durationS} s per contender, interleaved`,
  );
  const checks = report(await runDriver('pglite', options));
  if (await postgresReachable()) checks.push(...report(await runDriver('postgres', options)));
  else log('\n  Postgres not reachable (DATABASE_URL or the local server): measured on PGlite only');
  return checks;
}

export const callFlowToolBench: Benchmark = {
  name: 'call-flow-tool',
  description:
    'call_flow_tool with wait_ms on a one-step flow over HTTP, beside tools/list; PGlite and Postgres',
  run,
};
