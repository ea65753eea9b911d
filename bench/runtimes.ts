/**
 * The gateway on each runtime (Node, Bun, Deno, workerd) against a bare Hono route on the same runtime: authenticated
 * `tools/list` and `tools/call search_flow_tools` over Postgres (one throwaway database, all gateways on it), each
 * gateway and each bare server in its own process, load from autocannon in a third. Interleaved rounds across
 * every runtime and call, so the cross-runtime figures share the machine's drift as the ratios do.
 */

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Benchmark, BenchOptions } from './lib/bench.js';
import { serverBuild, serverScript } from './lib/build.js';
import { BENCH_RATE_LIMITS, listeningLine, mcpHeaders } from './lib/gateway.js';
import {
  type Contender,
  interleave,
  median,
  roundRatios,
  type Summary,
  summaryOf,
} from './lib/interleave.js';
import { type LoadSpec, runLoad } from './lib/load.js';
import { benchPostgresUrl, postgresReachable, sessionCounter, throwawayDatabase } from './lib/postgres.js';
import { ROOT, readRssKb } from './lib/proc.js';
import { type Check, fmt, heading, log, table } from './lib/report.js';
import {
  childPath,
  freePort,
  packageScript,
  postgresBackends,
  postgresDelta,
  processTree,
  type ServerProc,
  spawnServer,
} from './lib/server-proc.js';
import type { BareRoutes, RecordedAnswer } from './servers/bare-app.js';

/** Concurrency the workerd contenders are loaded at (see where it is used). */
const WORKERD_CONNECTIONS = 4;
const WS = 'ws-bench-rt';
const TARGET = 0.8;
const RUNTIMES = ['node', 'bun', 'deno', 'workerd'] as const;
type Runtime = (typeof RUNTIMES)[number];

/** A few flows, each with one MCP tool; `search_flow_tools` for "echo" finds three of them. */
const FLOWS: { slug: string; tool: string; description: string }[] = [
  { slug: 'echo', tool: 'echo_word', description: 'Echoes a word back' },
  { slug: 'echo-upper', tool: 'echo_upper', description: 'Echoes a word back in capitals' },
  { slug: 'echo-twice', tool: 'echo_twice', description: 'Echoes a word back two times' },
  { slug: 'greet', tool: 'greet_person', description: 'Greets someone by name' },
  { slug: 'sum', tool: 'sum_numbers', description: 'Adds two numbers' },
];
const flowEdn = (f: (typeof FLOWS)[number]) => `{:slug :${f.slug}
 :description "${f.description}"
 :invocations {:default {:inputs [{:name :word :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "${f.tool}" :invocation :default}]}
 :flow (flow/step :function :run {:code (fn [x] {:out (:word x)}) :input (flow/input)})}`;

const CALLS = {
  'tools/list': {
    path: '/tools-list',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  },
  search_flow_tools: {
    path: '/search',
    // One page holds every hit, so no cursor (sealed per answer) changes the bytes.
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search_flow_tools', arguments: { query: 'echo', limit: 20 } },
    }),
  },
} as const;
type Call = keyof typeof CALLS;
const CALL_NAMES = Object.keys(CALLS) as Call[];

/** Per-connection headers, and the date: not part of what a route answers. */
const TRANSPORT_HEADERS = new Set([
  'date',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

interface RuntimeSetup {
  runtime: Runtime;
  version: string;
  gateway: ServerProc;
  gatewayUrl: string;
  bare: ServerProc;
  bareUrl: string;
  /** The gateway's whole answer to each call (request id 1): every answer under load must be exactly this. */
  answers: Record<Call, string>;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
const nodeCommand = (script: string, args: string[] = []) =>
  [process.execPath, ...(script.endsWith('.ts') ? ['--import', 'tsx'] : []), script, ...args]
    .map(quote)
    .join(' ');

/** How each runtime starts its gateway and its bare server; undefined (with why) where it is not available. */
function commands(runtime: Runtime): { gateway: string; bare: string } | { missing: string } {
  switch (runtime) {
    case 'node': {
      // `flowgate serve` as production runs it: the bundle under plain node (or the source under tsx, --source).
      const build = serverBuild();
      const cli = build.kind === 'dist' ? build.cli : 'apps/cli/src/main.ts';
      return { gateway: nodeCommand(cli, ['serve']), bare: nodeCommand(serverScript('bareNode')) };
    }
    case 'bun':
    case 'deno': {
      const gateway = packageScript(`serve:${runtime}`);
      if (!gateway) return { missing: `package.json has no serve:${runtime} script` };
      const bare =
        runtime === 'bun'
          ? 'bun bench/servers/bare-bun.ts'
          : 'deno run --allow-all --sloppy-imports --unstable-no-legacy-abort bench/servers/bare-deno.ts';
      return { gateway, bare };
    }
    case 'workerd': {
      const gateway = packageScript('serve:workerd');
      if (!gateway) return { missing: 'package.json has no serve:workerd script yet' };
      return { gateway, bare: nodeCommand('bench/servers/bare-workerd.ts') };
    }
  }
}

function runtimeVersion(runtime: Runtime): string {
  try {
    const run = (cmd: string, args: string[]) =>
      execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PATH: childPath() } })
        .split('\n')[0]!
        .trim();
    switch (runtime) {
      case 'node':
        return `node ${process.version}`;
      case 'bun':
        return `bun ${run('bun', ['--version'])}`;
      case 'deno':
        return run('deno', ['--version']);
      case 'workerd': {
        const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules/miniflare/package.json'), 'utf8')) as {
          version: string;
        };
        return `workerd via miniflare ${pkg.version}`;
      }
    }
  } catch (err) {
    return `${runtime} (version unknown: ${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
  }
}

/** The gateway's environment on every runtime: `flowgate serve`'s variables, Postgres, memory rate limits. */
interface GatewayEnv {
  databaseUrl: string;
  encryptionKey: string;
  adminToken: string;
}

async function startGateway(runtime: Runtime, command: string, env: GatewayEnv): Promise<ServerProc> {
  // A port chosen here, so readiness can be seen from /healthz at warn level, where no request log line per request
  // is written (the "listening" line is info-level; a runner that prints it anyway is read too).
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return spawnServer({
    label: `gateway:${runtime}`,
    command,
    env: {
      DATABASE_URL: env.databaseUrl,
      FLOWGATE_ENCRYPTION_KEY: env.encryptionKey,
      FLOWGATE_ADMIN_TOKEN: env.adminToken,
      FLOWGATE_HOST: '127.0.0.1',
      FLOWGATE_PORT: String(port),
      FLOWGATE_LOG_LEVEL: 'warn',
      FLOWGATE_WORKER: 'false',
      ...BENCH_RATE_LIMITS,
    },
    readyFrom: listeningLine,
    readyPoll: async () => {
      const res = await fetch(`${url}/healthz`);
      await res.arrayBuffer();
      return res.status === 200 ? { url } : undefined;
    },
  });
}

async function admin(
  url: string,
  token: string,
  method: string,
  path: string,
  body: unknown,
  expect: number,
): Promise<Record<string, unknown>> {
  const edn = typeof body === 'string';
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': edn ? 'application/edn' : 'application/json',
    },
    body: edn ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expect)
    throw new Error(`${method} ${path}: expected ${expect}, got ${res.status}: ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** The workspace, its flows (released) and a `workspace.full` key, through one gateway's admin API. */
async function seed(url: string, adminToken: string): Promise<string> {
  const call = (method: string, path: string, body: unknown, expect: number) =>
    admin(url, adminToken, method, path, body, expect);
  await call('POST', '/api/admin/workspaces', { id: WS, name: WS }, 201);
  for (const f of FLOWS) {
    await call('PUT', `/api/workspaces/${WS}/flows/${f.slug}/draft`, flowEdn(f), 200);
    await call('POST', `/api/workspaces/${WS}/flows/${f.slug}/release`, {}, 200);
  }
  const sa = await call(
    'POST',
    `/api/workspaces/${WS}/service-accounts`,
    { name: 'bench-runtimes', capabilities: ['workspace.full'] },
    201,
  );
  const created = await call(
    'POST',
    `/api/workspaces/${WS}/service-accounts/${String(sa.serviceAccountId)}/keys`,
    {},
    201,
  );
  return (created.key as { apiKey: string }).apiKey;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

async function post(url: string, apiKey: string, body: string): Promise<Answer> {
  // As the load generator asks (no compression): fetch would otherwise offer gzip, and workerd answers gzip then.
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...mcpHeaders(apiKey), 'accept-encoding': 'identity' },
    body,
  });
  const text = await res.text();
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (!TRANSPORT_HEADERS.has(k)) headers[k] = v;
  });
  return { status: res.status, headers, text };
}

/** The gateway's answer to one call, checked to be a real result, recorded for the bare route. */
async function record(what: string, url: string, apiKey: string, call: Call): Promise<RecordedAnswer> {
  const a = await post(url, apiKey, CALLS[call].body);
  const json = JSON.parse(a.text) as {
    result?: { tools?: unknown[]; isError?: boolean; structuredContent?: unknown };
  };
  const ok =
    call === 'tools/list'
      ? Array.isArray(json.result?.tools) && json.result.tools.length > 0
      : json.result !== undefined &&
        !json.result.isError &&
        ((json.result.structuredContent as { tools?: unknown[] } | undefined)?.tools?.length ?? 0) >= 3;
  if (a.status !== 200 || !ok)
    throw new Error(`${what}: ${call} answered ${a.status}: ${a.text.slice(0, 400)}`);
  const prefix = '{"jsonrpc":"2.0","id":1,';
  if (!a.text.startsWith(prefix)) throw new Error(`${what}: ${call} answer does not start with ${prefix}`);
  return { status: a.status, headers: a.headers, tail: a.text.slice(prefix.length) };
}

/** The bare route must answer what the gateway answered: status, headers that matter, body length. */
async function checkSameBytes(what: string, bareUrl: string, apiKey: string, call: Call, gw: RecordedAnswer) {
  const a = await post(`${bareUrl}${CALLS[call].path}`, apiKey, CALLS[call].body);
  const gwLength = Buffer.byteLength(`{"jsonrpc":"2.0","id":1,${gw.tail}`);
  const differs: string[] = [];
  if (a.status !== gw.status) differs.push(`status ${a.status} vs ${gw.status}`);
  if (Buffer.byteLength(a.text) !== gwLength)
    differs.push(`body ${Buffer.byteLength(a.text)} vs ${gwLength} bytes`);
  for (const k of new Set([...Object.keys(a.headers), ...Object.keys(gw.headers)])) {
    if (a.headers[k] !== gw.headers[k])
      differs.push(`header ${k}: ${a.headers[k] ?? '—'} vs ${gw.headers[k] ?? '—'}`);
  }
  if (differs.length)
    throw new Error(`${what}: bare ${call} differs from the gateway's: ${differs.join('; ')}`);
}

function treeRssMb(root: number): number {
  let kb = 0;
  for (const pid of processTree(root)) {
    try {
      kb += readRssKb(pid);
    } catch {
      // gone
    }
  }
  return kb / 1024;
}

const contenderName = (runtime: Runtime, call: Call, side: 'gateway' | 'bare') =>
  `${runtime} ${call} ${side}`;

async function run(options: BenchOptions): Promise<Check[]> {
  heading('runtimes: the gateway on each runtime vs a bare Hono route on the same runtime (Postgres)');
  const base = benchPostgresUrl();
  if (!(await postgresReachable(base))) {
    log(`  Postgres not reachable at ${new URL(base).host}: skipped (every runtime but Node needs it)`);
    return [];
  }
  const db = await throwawayDatabase(base, 'fg_bench_rt');
  const tmp = mkdtempSync(join(tmpdir(), 'flowgate-bench-rt-'));
  const setups: RuntimeSetup[] = [];
  const started: ServerProc[] = [];
  let sessions: Awaited<ReturnType<typeof sessionCounter>> | undefined;
  try {
    const env: GatewayEnv = {
      databaseUrl: db.url,
      encryptionKey: randomBytes(32).toString('base64'),
      adminToken: `bench-${randomBytes(24).toString('hex')}`,
    };
    let apiKey: string | undefined;
    for (const runtime of RUNTIMES) {
      const cmd = commands(runtime);
      if ('missing' in cmd) {
        log(`  ${runtime}: not measured (${cmd.missing})`);
        continue;
      }
      const version = runtimeVersion(runtime);
      const t0 = Date.now();
      // One at a time: the first gateway migrates the database, the others find it migrated.
      const gateway = await startGateway(runtime, cmd.gateway, env);
      started.push(gateway);
      const gatewayUrl = String(gateway.ready.url);
      const readyMs = Date.now() - t0;
      apiKey ??= await seed(gatewayUrl, env.adminToken);
      const mcp = `${gatewayUrl}/api/workspaces/${WS}/mcp`;
      const routes: BareRoutes = {};
      for (const call of CALL_NAMES)
        routes[CALLS[call].path] = await record(`gateway on ${runtime}`, mcp, apiKey, call);
      const routesFile = join(tmp, `bare-${runtime}.json`);
      writeFileSync(routesFile, JSON.stringify(routes));
      const bare = await spawnServer({
        label: `bare:${runtime}`,
        command: cmd.bare,
        env: { BENCH_BARE_ROUTES_FILE: routesFile },
        readyFrom: (line) =>
          line.startsWith('READY ') ? (JSON.parse(line.slice(6)) as Record<string, unknown>) : undefined,
      });
      started.push(bare);
      const bareUrl = String(bare.ready.url);
      for (const call of CALL_NAMES)
        await checkSameBytes(runtime, bareUrl, apiKey, call, routes[CALLS[call].path]!);
      const answers = Object.fromEntries(
        CALL_NAMES.map((c) => [c, `{"jsonrpc":"2.0","id":1,${routes[CALLS[c].path]!.tail}`]),
      ) as Record<Call, string>;
      setups.push({ runtime, version, gateway, gatewayUrl: mcp, bare, bareUrl, answers });
      const sizes = CALL_NAMES.map(
        (c) => `${c} ${Buffer.byteLength(`{"jsonrpc":"2.0","id":1,${routes[CALLS[c].path]!.tail}`)} B`,
      ).join(', ');
      log(`  ${runtime.padEnd(8)} ${version}; gateway ready in ${readyMs} ms; answers: ${sizes}`);
    }
    if (!apiKey || setups.length === 0) throw new Error('no runtime could be measured');
    // --quick proves the benchmark runs within CI's budget: search_flow_tools was answered and checked above on every
    // runtime, only tools/list is put under load.
    const measured: Call[] = options.quick ? ['tools/list'] : CALL_NAMES;
    const build = serverBuild();
    log(
      `  node runs ${build.kind === 'dist' ? 'the production bundle' : 'the source under tsx'}; bun and deno run the TypeScript sources; log level warn; memory rate limits raised; no Redis`,
    );
    log(
      `  load: autocannon in its own node process, c=${options.connections}, pipelining 1; ${options.rounds} round(s) × ${options.durationS} s per contender, interleaved over ${setups.length} runtime(s) × ${measured.length} call(s) × gateway/bare${options.quick ? ' (--quick: tools/list only)' : ''}`,
    );

    // Without Hyperdrive, the Worker opens one Postgres connection per request that runs a statement (sockets may not
    // cross requests); at 50 concurrent requests, next to the other gateways' pools, that passes Postgres' default
    // max_connections (100). Its gateway and bare route are loaded at the same lower concurrency, so its ratio stays
    // like for like; its req/s is not comparable with the others'.
    const connectionsFor = (runtime: string) =>
      runtime === 'workerd' ? Math.min(options.connections, WORKERD_CONNECTIONS) : options.connections;
    if (setups.some((s) => s.runtime === 'workerd') && options.connections > WORKERD_CONNECTIONS)
      log(
        `  workerd (gateway and bare) at c=${WORKERD_CONNECTIONS}: a connection per request without Hyperdrive would exhaust Postgres' max_connections at c=${options.connections}`,
      );

    const key = apiKey;
    const targets = setups.flatMap((s) =>
      measured.flatMap((call) =>
        (['gateway', 'bare'] as const).map((side) => {
          const spec: LoadSpec = {
            url: side === 'gateway' ? s.gatewayUrl : `${s.bareUrl}${CALLS[call].path}`,
            method: 'POST',
            headers: mcpHeaders(key),
            body: CALLS[call].body,
            expectBody: s.answers[call],
            connections: connectionsFor(s.runtime),
            pipelining: 1,
            durationS: options.durationS,
          };
          return {
            name: contenderName(s.runtime, call, side),
            spec,
            server: side === 'gateway' ? s.gateway : s.bare,
          };
        }),
      ),
    );
    // --quick proves the benchmark runs: no warm-up runs (16 of them with workerd), its figures are cold anyway.
    const named = (name: string) => (err: unknown) => {
      throw new Error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    };
    if (!options.quick)
      for (const t of targets)
        await runLoad({ ...t.spec, durationS: options.warmupS }).catch(named(`${t.name} (warm-up)`));
    const dbName = new URL(db.url).pathname.slice(1);
    // Postgres CPU per request of each sample, by contender: the database's share of the same two cores.
    const dbUs = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    // Connections the database saw opened per request: a runtime without a connection pool opens one per request.
    const dbOpened = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    sessions = await sessionCounter(base, dbName);
    const counter = sessions;
    const contenders: Contender[] = targets.map((t) => ({
      name: t.name,
      run: async () => {
        const before = postgresBackends(dbName);
        const sessionsBefore = await counter.read();
        const r = await runLoad(t.spec, t.server).catch(named(t.name));
        const d = postgresDelta(before, postgresBackends(dbName));
        dbUs.get(t.name)!.push((d.cpuMs * 1000) / r.ok);
        dbOpened.get(t.name)!.push(((await counter.read()) - sessionsBefore) / r.ok);
        return r;
      },
    }));
    const summaries = await interleave(contenders, options.rounds, (round, name, s) =>
      log(
        `  round ${round}  ${name.padEnd(34)} ${fmt(s.rps).padStart(7)} req/s  p50 ${fmt(s.latencyMs.p50, 0)} ms  p99 ${fmt(s.latencyMs.p99, 0)} ms`,
      ),
    );
    const loadgenUs = (s: Summary) =>
      median(s.samples.map((x) => ((x.loadCpuMs ?? Number.NaN) * 1000) / Math.max(1, x.ok)));

    heading('runtimes: gateway ÷ bare Hono on the same runtime');
    const checks: Check[] = [];
    const rows = [
      [
        'runtime',
        'call',
        'gateway req/s',
        'p50/p99 ms',
        'bare req/s',
        'p50/p99 ms',
        'ratio',
        'target',
        'per-round ratios',
        'CPU µs/req gw/bare',
        'CPU-cost ratio',
        'Postgres CPU µs/req',
        'PG sessions opened/req',
      ],
    ];
    for (const s of setups) {
      for (const call of measured) {
        const gw = summaryOf(summaries, contenderName(s.runtime, call, 'gateway'));
        const bare = summaryOf(summaries, contenderName(s.runtime, call, 'bare'));
        const ratio = gw.rps / bare.rps;
        rows.push([
          s.runtime,
          call,
          fmt(gw.rps),
          `${fmt(gw.p50)}/${fmt(gw.p99)}`,
          fmt(bare.rps),
          `${fmt(bare.p50)}/${fmt(bare.p99)}`,
          fmt(ratio, 3),
          `≥ ${TARGET}`,
          roundRatios(gw, bare)
            .map((r) => fmt(r, 2))
            .join(' '),
          `${fmt(gw.cpuUsPerReq)}/${fmt(bare.cpuUsPerReq)}`,
          gw.cpuUsPerReq && bare.cpuUsPerReq ? fmt(bare.cpuUsPerReq / gw.cpuUsPerReq, 3) : '—',
          fmt(median(dbUs.get(gw.name) ?? [])),
          fmt(median(dbOpened.get(gw.name) ?? []), 2),
        ]);
        checks.push({
          benchmark: 'runtimes',
          name: `${s.runtime} ${call} gateway ÷ bare Hono`,
          value: fmt(ratio, 3),
          target: `≥ ${TARGET}`,
          pass: ratio >= TARGET,
        });
      }
    }
    table(rows);
    log(
      '  (autocannon reports whole milliseconds; CPU is the server process tree’s user + system time; Postgres CPU is that of the backends serving the benchmark’s database, on the same cores — a floor when connections are opened per request, as a backend that starts and ends within a run is not seen)',
    );

    heading('runtimes: across runtimes (gateway)');
    const cross = [
      [
        'runtime',
        ...measured.flatMap((c) => [`${c} req/s`, `${c} CPU µs/req`, `${c} req/s per core`]),
        'bare tools/list req/s',
        'RSS MB gw/bare',
      ],
    ];
    const perCore = new Map<Runtime, number>();
    const rpsOf = new Map<Runtime, number>();
    for (const s of setups) {
      const cells: string[] = [s.runtime];
      for (const call of measured) {
        const gw = summaryOf(summaries, contenderName(s.runtime, call, 'gateway'));
        // What one core of this runtime serves: the inverse of its CPU per request (drifts far less than req/s).
        const core = gw.cpuUsPerReq ? 1e6 / gw.cpuUsPerReq : Number.NaN;
        cells.push(fmt(gw.rps), fmt(gw.cpuUsPerReq), fmt(core));
        if (call === 'tools/list') {
          perCore.set(s.runtime, core);
          rpsOf.set(s.runtime, gw.rps);
        }
      }
      cells.push(
        fmt(summaryOf(summaries, contenderName(s.runtime, 'tools/list', 'bare')).rps),
        `${fmt(treeRssMb(s.gateway.pid))}/${fmt(treeRssMb(s.bare.pid))}`,
      );
      cross.push(cells);
    }
    table(cross);
    const best = (m: Map<Runtime, number>) => [...m].sort((a, b) => b[1] - a[1])[0];
    const mostRps = best(rpsOf);
    const mostPerCore = best(perCore);
    if (mostRps && mostPerCore) {
      const rest = (m: Map<Runtime, number>, top: number) =>
        [...m]
          .sort((a, b) => b[1] - a[1])
          .map(([r, v]) => `${r} ${fmt(v / top, 2)}`)
          .join(', ');
      log(`  most tools/list req/s: ${mostRps[0]} (relative: ${rest(rpsOf, mostRps[1])})`);
      log(
        `  most tools/list per core (1 ÷ CPU per request): ${mostPerCore[0]} (relative: ${rest(perCore, mostPerCore[1])})`,
      );
    }
    const all = [...summaries.values()];
    const loadgen = median(all.map(loadgenUs));
    const loadShare = median(
      all.flatMap((s) => s.samples.map((x) => (x.loadCpuMs ?? Number.NaN) / (x.durationS * 1000))),
    );
    log(
      `  load generator: median ${fmt(loadgen)} µs CPU per request, ${fmt(loadShare * 100)}% of one core while loading (of 2 cores: the server gets what is left)`,
    );
    return checks;
  } finally {
    for (const p of started.reverse()) await p.stop().catch(() => {});
    await sessions?.close();
    await db.drop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

export const runtimesBench: Benchmark = {
  name: 'runtimes',
  description:
    'tools/list and search_flow_tools on Node, Bun, Deno, workerd vs a bare Hono route on each (Postgres)',
  run,
};
