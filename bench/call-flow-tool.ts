/**
 * `call_flow_tool` with `wait_ms` on a one-`:function`-step flow, over HTTP with an API key, through the real gateway
 * (the production bundle in its own process) and its in-process worker — on embedded PGlite, then on Postgres when
 * `DATABASE_URL` or the local server answers (a throwaway database, dropped afterwards). Beside it, in the same
 * interleaved rounds, authenticated `tools/list` on the same gateway: the baseline ratio says what running a flow
 * costs over the cheapest authenticated call. Measured at one connection (latency: the target) and at `--connections`
 * (throughput under contention), with a light load of other methods timed while the heavy one runs.
 */
import { randomBytes } from 'node:crypto';
import type { Benchmark, BenchOptions } from './lib/bench.js';
import { type GatewayChild, mcpCall, mcpHeaders, mcpUrl, startGatewayChild } from './lib/gateway.js';
import {
  type Contender,
  interleave,
  median,
  roundRatios,
  type Summary,
  summaryOf,
} from './lib/interleave.js';
import { type LoadSpec, type MeasuredLoad, runLoad } from './lib/load.js';
import { benchPostgresUrl, postgresReachable, throwawayDatabase } from './lib/postgres.js';
import { type ProbeResult, type ProbeStreamResult, runProbe } from './lib/probe.js';
import { printProfile, profileChild } from './lib/profile.js';
import { type Check, fmt, heading, log, printSummaries } from './lib/report.js';

const WS = 'ws-bench-run';
const TARGET_P50_MS = 10;
/** Under load: call_flow_tool p99 ≤ 4× its p50 on Postgres, ≤ 1 s on the embedded database (issue 26). */
const TARGET_TAIL_RATIO_PG = 4;
const TARGET_TAIL_MS_PGLITE = 1_000;
/** Other methods while call_flow_tool load runs: p99 ≤ 50 ms on both databases. */
const TARGET_OTHERS_P99_MS = 50;
/** The light load beside it: connections per method, each sending one request per interval. */
const PROBE_CONNECTIONS = 2;
const PROBE_INTERVAL_MS = 20;

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
const statusBody = (runId: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'get_run_status', arguments: { run_id: runId } },
  });
/** A call answered with its completed run inline: no tool error (e.g. too_many_waits), the flow's output. */
const CALL_EXPECT = {
  expectIncludes: ['"status":"completed"', '"echoed":"bench"'],
  expectExcludes: ['"isError":true'],
};

/** tools/list and get_run_status timed by a separate light load while call_flow_tool runs at `--connections`. */
interface Beside {
  list: ProbeStreamResult[];
  status: ProbeStreamResult[];
}

interface DriverFigures {
  driver: string;
  summaries: Summary[];
  latency: { list: Summary; call: Summary };
  loaded: { list: Summary; call: Summary };
  beside: Beside;
  /** Per run of the loaded windows, ms: insert → claim, claim → end (database timestamps). */
  phases: { queued: number[]; executing: number[] };
  runs: { total: number; completed: number };
  /** SQL statements one call sends (request path, worker, audit), counted on a warm gateway. */
  statementsPerCall: number;
}

/** One real call before the load: the load must measure completed runs answered inline, nothing else. */
async function probeCall(url: string, headers: Record<string, string>): Promise<string> {
  const answer = await mcpCall(url, headers, CALL_BODY);
  const result = (
    answer.json as
      | {
          result?: {
            isError?: boolean;
            structuredContent?: { run?: { runId?: string; status?: string }; result?: unknown };
          };
        }
      | undefined
  )?.result;
  if (answer.status !== 200 || result?.isError || result?.structuredContent?.run?.status !== 'completed') {
    throw new Error(`call_flow_tool did not complete inline: ${answer.status} ${answer.text.slice(0, 400)}`);
  }
  return String(result.structuredContent.run.runId);
}

/** Usage metering as this process's environment says (on unless `FLOWGATE_USAGE_METERING` turns it off). */
function usageMetering(): string {
  return process.env.FLOWGATE_USAGE_METERING ?? 'on';
}

async function runDriver(driver: 'pglite' | 'postgres', options: BenchOptions): Promise<DriverFigures> {
  const pg = driver === 'postgres' ? await throwawayDatabase(benchPostgresUrl(), 'fg_bench_cft') : null;
  let gw: GatewayChild | undefined;
  try {
    // The production bundle in a process of its own, as `flowgate serve` runs it, with its in-process worker; the
    // embedded database's thread is part of that process (its CPU is counted with the gateway's).
    gw = await startGatewayChild({
      label: `gateway-${driver}`,
      env: {
        FLOWGATE_WORKER: 'true',
        FLOWGATE_LOG_LEVEL: 'silent',
        FLOWGATE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        // One key stands for `--connections` agents here: past its default bound of parked waits (32) calls would be
        // answered too_many_waits at once, with no run, and the figures would mix those answers in.
        FLOWGATE_MCP_MAX_WAITS_PER_KEY: String(Math.max(64, options.connections * 2)),
        // `FLOWGATE_USAGE_METERING=off pnpm bench --only call-flow-tool` measures without usage metering.
        FLOWGATE_USAGE_METERING: usageMetering(),
        ...(pg ? { DATABASE_URL: pg.url } : {}),
      },
    });
    const child = gw.child;
    await gw.admin('POST', '/api/admin/workspaces', { id: WS, name: WS }, 201);
    const draft = await fetch(`${gw.url}/api/workspaces/${WS}/flows/echo/draft`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/edn' },
      body: FLOW,
    });
    if (draft.status !== 200) throw new Error(`saving the flow: ${draft.status} ${await draft.text()}`);
    await gw.admin('POST', `/api/workspaces/${WS}/flows/echo/release`, {}, 200);
    const sa = await gw.admin(
      'POST',
      `/api/workspaces/${WS}/service-accounts`,
      { name: 'bench-runner', capabilities: ['flows.read', 'flows.run', 'runs.read'] },
      201,
    );
    const key = (
      await gw.admin(
        'POST',
        `/api/workspaces/${WS}/service-accounts/${String(sa.serviceAccountId)}/keys`,
        {},
        201,
      )
    ).key as { apiKey: string };
    const url = mcpUrl(gw, WS);
    const headers = mcpHeaders(key.apiKey);
    const finishedRun = await probeCall(url, headers);
    // A second call on the warm gateway, its statements counted (the audit queue and the worker's last writes
    // settle within the pause).
    await child.call('statements-start');
    await probeCall(url, headers);
    await new Promise((r) => setTimeout(r, 1500));
    const { statements } = await child.call<{ statements: string[] }>('statements-stop');
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
      ...(body === CALL_BODY ? CALL_EXPECT : {}),
    });
    const beside: Beside = { list: [], status: [] };
    const windows: Array<{ from: number; to: number }> = [];
    // The light load starts with the heavy one and measures its middle: both child processes take a moment to start,
    // and the heavy load's last requests are cut off.
    const besideLoad = async (heavy: LoadSpec): Promise<MeasuredLoad> => {
      const durationS = heavy.durationS ?? options.durationS;
      const lead = Math.min(1, durationS * 0.2);
      const from = Date.now();
      const [load, probe] = await Promise.all([
        runLoad(heavy, child.pid),
        new Promise((r) => setTimeout(r, lead * 1000)).then(
          (): Promise<ProbeResult> =>
            runProbe({
              url,
              headers,
              durationS: durationS - 2 * lead,
              streams: [
                {
                  name: 'tools/list',
                  body: LIST_BODY,
                  connections: PROBE_CONNECTIONS,
                  intervalMs: PROBE_INTERVAL_MS,
                  includes: ['"result":{"tools":['],
                },
                {
                  name: 'get_run_status',
                  body: statusBody(finishedRun),
                  connections: PROBE_CONNECTIONS,
                  intervalMs: PROBE_INTERVAL_MS,
                  includes: ['"status":"completed"'],
                  excludes: ['"isError":true'],
                },
              ],
            }),
        ),
      ]);
      windows.push({ from, to: Date.now() });
      const [list, status] = probe.streams as [ProbeStreamResult, ProbeStreamResult];
      beside.list.push(list);
      beside.status.push(status);
      return load;
    };
    const n = options.connections;
    const targets = [
      { name: 'tools/list, 1 conn', spec: spec(LIST_BODY, 1) },
      { name: 'call_flow_tool, 1 conn', spec: spec(CALL_BODY, 1) },
      { name: `tools/list, ${n} conn`, spec: spec(LIST_BODY, n) },
      { name: `call_flow_tool, ${n} conn`, spec: spec(CALL_BODY, n) },
    ];
    for (const t of targets) await runLoad({ ...t.spec, durationS: options.warmupS });
    const loaded = targets[3]!.name;
    const contenders: Contender[] = targets.map((t) => ({
      name: t.name,
      run: () => (t.name === loaded ? besideLoad(t.spec) : runLoad(t.spec, child.pid)),
    }));
    const summaries = await interleave(contenders, options.rounds, (round, name, s) => {
      log(
        `  ${driver.padEnd(8)} round ${round}  ${name.padEnd(26)} ${fmt(s.rps).padStart(7)} req/s  p50 ${fmt(s.latencyMs.p50, 2)} ms  p99 ${fmt(s.latencyMs.p99, 2)} ms`,
      );
      if (name !== loaded) return;
      for (const p of [beside.list.at(-1), beside.status.at(-1)]) {
        if (!p) continue;
        log(
          `  ${driver.padEnd(8)} round ${round}    beside it: ${p.name.padEnd(15)} ${String(p.requests).padStart(5)} req  p50 ${fmt(p.latencyMs.p50, 2)} ms  p99 ${fmt(p.latencyMs.p99, 2)} ms  max ${fmt(p.latencyMs.max, 1)} ms`,
        );
      }
    });
    if (options.profile) {
      const { file } = await profileChild(child, () => runLoad(spec(CALL_BODY, 1, options.profileDurationS)));
      printProfile(`call-flow-tool: CPU profile of call_flow_tool at 1 connection, ${driver}`, file);
      const loadedProfile = await profileChild(child, () =>
        runLoad(spec(CALL_BODY, n, options.profileDurationS)),
      );
      printProfile(
        `call-flow-tool: CPU profile of call_flow_tool at ${n} connections, ${driver}`,
        loadedProfile.file,
      );
    }
    // Every call must have finished its run inline: a run still queued or failed would mean the figures measured
    // something else (a timeout answer, an error result) than a completed call.
    // Runs of calls the load generator abandoned at the end of the last window may still be executing: let them end.
    type RunTimes = { status: string; created: string; started: string | null; finished: string | null };
    let rows = await child.call<RunTimes[]>('runs');
    for (let i = 0; i < 150 && rows.some((r) => r.status === 'queued' || r.status === 'running'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      rows = await child.call<RunTimes[]>('runs');
    }
    // Where a loaded call's time went: queued (insert → claim) and executing (claim → end), per run.
    const inWindow = rows.filter((r) => {
      const t = new Date(r.created).getTime();
      return windows.some((w) => t >= w.from && t <= w.to);
    });
    const ms = (a: string | null, b: string | null) =>
      a === null || b === null ? Number.NaN : new Date(b).getTime() - new Date(a).getTime();
    const phases = {
      queued: inWindow.map((r) => ms(r.created, r.started)).filter((v) => !Number.isNaN(v)),
      executing: inWindow.map((r) => ms(r.started, r.finished)).filter((v) => !Number.isNaN(v)),
    };
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
      beside,
      phases,
      runs: { total: rows.length, completed: rows.filter((r) => r.status === 'completed').length },
      statementsPerCall,
    };
  } finally {
    await gw?.stop();
    await pg?.drop();
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
  const conns = f.loaded.call.name.split(', ')[1] ?? '';
  const range = (values: number[], digits: number) =>
    `${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)}`;
  const tailRatios = f.loaded.call.samples.map((s) => s.latencyMs.p99 / s.latencyMs.p50);
  const p99s = f.loaded.call.samples.map((s) => s.latencyMs.p99);
  log(
    `  call_flow_tool at ${conns}: p50 ${fmt(f.loaded.call.p50, 0)} ms, p99 ${fmt(f.loaded.call.p99, 0)} ms ` +
      `(rounds ${range(p99s, 0)}), p99 ÷ p50 ${fmt(f.loaded.call.p99 / f.loaded.call.p50, 2)} (rounds ${range(tailRatios, 2)})`,
  );
  const pct = (values: number[], p: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length
      ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
      : Number.NaN;
  };
  log(
    `  its runs (${f.phases.queued.length}): queued p50 ${fmt(pct(f.phases.queued, 50), 0)} ms, p99 ${fmt(pct(f.phases.queued, 99), 0)} ms; ` +
      `executing p50 ${fmt(pct(f.phases.executing, 50), 0)} ms, p99 ${fmt(pct(f.phases.executing, 99), 0)} ms`,
  );
  const others = [
    { name: 'tools/list', samples: f.beside.list },
    { name: 'get_run_status', samples: f.beside.status },
  ];
  for (const o of others) {
    const p50s = o.samples.map((s) => s.latencyMs.p50);
    const p99s = o.samples.map((s) => s.latencyMs.p99);
    log(
      `  ${o.name} beside it (${PROBE_CONNECTIONS} conn, one request per ${PROBE_INTERVAL_MS} ms each, timed per request): ` +
        `p50 ${fmt(median(p50s), 2)} ms (rounds ${range(p50s, 2)}), p99 ${fmt(median(p99s), 2)} ms (rounds ${range(p99s, 2)}), ` +
        `max ${fmt(Math.max(...o.samples.map((s) => s.latencyMs.max)), 1)} ms, ${o.samples.reduce((a, s) => a + s.requests, 0)} requests`,
    );
  }
  const tail =
    f.driver === 'postgres'
      ? {
          value: `${fmt(f.loaded.call.p99 / f.loaded.call.p50, 2)}× p50 (${fmt(f.loaded.call.p99, 0)} ms)`,
          target: `≤ ${TARGET_TAIL_RATIO_PG}× p50`,
          pass: f.loaded.call.p99 <= TARGET_TAIL_RATIO_PG * f.loaded.call.p50,
        }
      : {
          value: `${fmt(f.loaded.call.p99, 0)} ms`,
          target: `≤ ${fmt(TARGET_TAIL_MS_PGLITE, 0)} ms`,
          pass: f.loaded.call.p99 <= TARGET_TAIL_MS_PGLITE,
        };
  return [
    {
      benchmark: 'call-flow-tool',
      name: `${f.driver}: p50 at 1 connection`,
      value: `${fmt(f.latency.call.p50, 2)} ms`,
      target: `≤ ${TARGET_P50_MS} ms`,
      pass: f.latency.call.p50 <= TARGET_P50_MS,
    },
    { benchmark: 'call-flow-tool', name: `${f.driver}: p99 at ${conns}`, ...tail },
    ...others.map((o) => {
      const p99 = median(o.samples.map((s) => s.latencyMs.p99));
      return {
        benchmark: 'call-flow-tool',
        name: `${f.driver}: ${o.name} p99 during it`,
        value: `${fmt(p99, 2)} ms`,
        target: `≤ ${TARGET_OTHERS_P99_MS} ms`,
        pass: p99 <= TARGET_OTHERS_P99_MS,
      };
    }),
  ];
}

async function run(options: BenchOptions): Promise<Check[]> {
  heading('call-flow-tool: call_flow_tool with wait_ms (one :function step) beside tools/list');
  log(
    `  API key over HTTP, production bundle with its in-process worker; ${options.rounds} rounds × ${options.durationS} s per contender, interleaved; ` +
      `usage metering ${usageMetering()} (FLOWGATE_USAGE_METERING=off|on to compare)`,
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
