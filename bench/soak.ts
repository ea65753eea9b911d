/**
 * Soak: the real gateway (own process, in-process worker) under a mixed MCP workload at `--connections` for
 * `--soak-minutes` — tools/list, search_flow_tools, inspect_flow_tool, call_flow_tool with wait_ms, resources/read of
 * a run, and bad requests (malformed JSON, unknown tool, no credentials) that must get their expected 4xx — on
 * embedded PGlite, then on Postgres when `DATABASE_URL` or the local server answers (a throwaway database, dropped
 * afterwards). Prints errors, p50/p99 per method per time window, and the gateway's RSS and V8 heap trajectory.
 * Checks: no errors; RSS flat within 5% after warm-up (the first 2 minutes, or half of a shorter run).
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createDb } from '@flowgate/db';
import type { Benchmark } from './lib/bench.js';
import type { MemoryFigures } from './lib/control.js';
import { type GatewayChild, MCP_PROTOCOL_VERSION, startGatewayChild } from './lib/gateway.js';
import { benchPostgresUrl, postgresReachable } from './lib/postgres.js';
import { readRssKb } from './lib/proc.js';
import { type Check, fmt, heading, log } from './lib/report.js';

const WS = 'ws-soak';
const RSS_FLAT_PCT = 5;
const REQUEST_TIMEOUT_MS = 10_000;

const FLOW = `{:slug :echo
 :description "Echoes a word back (soak benchmark)."
 :invocations {:default {:inputs [{:name :word :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "echo_word" :invocation :default}]}
 :flow (flow/step :function :echo {:code (fn [x] {:echoed (:word x)}) :input (flow/input)})}`;

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/** One kind of request in the mix; `check` returns why an answer is wrong, or undefined when it is as expected. */
interface Kind {
  name: string;
  /** Share of the mix, in slots of a 20-slot cycle. */
  weight: number;
  body: string;
  auth: boolean;
  check(a: Answer): string | undefined;
}

const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const tool = (name: string, args: Record<string, unknown>) => rpc('tools/call', { name, arguments: args });

/** The JSON-RPC message of an answer, whether sent as JSON or as one SSE event. */
function message(a: Answer): Record<string, unknown> | undefined {
  let text = a.text;
  if (a.contentType.startsWith('text/event-stream')) {
    const data = text
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .pop();
    if (!data) return undefined;
    text = data.slice(5);
  }
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A 200 with a JSON-RPC result that is not a tool error. */
function okResult(extra?: (result: Record<string, unknown>) => string | undefined) {
  return (a: Answer): string | undefined => {
    if (a.status !== 200) return `status ${a.status}`;
    const m = message(a);
    if (!m) return 'unparseable answer';
    if (m.error) return `JSON-RPC error ${JSON.stringify(m.error).slice(0, 200)}`;
    const result = m.result as Record<string, unknown> | undefined;
    if (!result) return 'no result';
    if (result.isError === true) return `tool error ${JSON.stringify(result).slice(0, 200)}`;
    return extra?.(result);
  };
}

function kinds(runId: string): Kind[] {
  return [
    { name: 'tools/list', weight: 4, auth: true, body: rpc('tools/list', {}), check: okResult() },
    {
      name: 'search_flow_tools',
      weight: 3,
      auth: true,
      body: tool('search_flow_tools', { query: 'echo' }),
      check: okResult(),
    },
    {
      name: 'inspect_flow_tool',
      weight: 3,
      auth: true,
      body: tool('inspect_flow_tool', { flow_slug: 'echo', tool_name: 'echo_word' }),
      check: okResult(),
    },
    {
      name: 'call_flow_tool',
      weight: 4,
      auth: true,
      body: tool('call_flow_tool', {
        flow_slug: 'echo',
        tool_name: 'echo_word',
        input: { word: 'soak' },
        wait_ms: 5_000,
      }),
      check: okResult(),
    },
    {
      name: 'resources/read run',
      weight: 3,
      auth: true,
      body: rpc('resources/read', { uri: `flowgate://runs/${runId}` }),
      check: okResult(),
    },
    {
      name: 'bad: malformed JSON',
      weight: 1,
      auth: true,
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list",',
      check: (a) =>
        a.status === 400 && message(a)?.error ? undefined : `status ${a.status}: ${a.text.slice(0, 200)}`,
    },
    {
      name: 'bad: unknown tool',
      weight: 1,
      auth: true,
      body: tool('no_such_tool', {}),
      check: (a) => {
        const m = message(a);
        const result = m?.result as { isError?: boolean } | undefined;
        return (a.status === 200 && (m?.error || result?.isError)) || a.status === 400 || a.status === 404
          ? undefined
          : `status ${a.status}: ${a.text.slice(0, 200)}`;
      },
    },
    {
      name: 'bad: no credentials',
      weight: 1,
      auth: false,
      body: rpc('tools/list', {}),
      check: (a) => (a.status === 401 ? undefined : `status ${a.status}`),
    },
  ];
}

interface Sample {
  /** Seconds since the load started. */
  t: number;
  kind: number;
  ms: number;
  /** Why it counts as an error (transport error, timeout, wrong answer), else undefined. */
  error?: string;
}

interface MemorySample {
  t: number;
  rssKb: number;
  heapUsed?: number;
  heapTotal?: number;
}

function send(agent: Agent, url: URL, token: string | undefined, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MCP_PROTOCOL_VERSION,
          'content-length': Buffer.byteLength(body),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

const quantile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : Number.NaN;
const medianOf = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

async function seed(gw: GatewayChild): Promise<{ key: string; runId: string }> {
  await gw.admin('POST', '/api/admin/workspaces', { id: WS, name: WS }, 201);
  const draft = await fetch(`${gw.url}/api/workspaces/${WS}/flows/echo/draft`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/edn' },
    body: FLOW,
  });
  if (draft.status !== 200) throw new Error(`flow draft: ${draft.status} ${await draft.text()}`);
  await gw.admin('POST', `/api/workspaces/${WS}/flows/echo/release`, {}, 200);
  const sa = await gw.admin(
    'POST',
    `/api/workspaces/${WS}/service-accounts`,
    { name: 'soak-agent', capabilities: ['flows.read', 'flows.run', 'runs.read'] },
    201,
  );
  const created = await gw.admin(
    'POST',
    `/api/workspaces/${WS}/service-accounts/${String(sa.serviceAccountId)}/keys`,
    {},
    201,
  );
  const key = (created.key as { apiKey: string }).apiKey;
  // One real call first: its run is the one resources/read reads under load, and it must complete inline.
  const agent = new Agent({ keepAlive: true });
  const url = new URL(`${gw.url}/api/workspaces/${WS}/mcp`);
  const a = await send(
    agent,
    url,
    key,
    tool('call_flow_tool', {
      flow_slug: 'echo',
      tool_name: 'echo_word',
      input: { word: 'x' },
      wait_ms: 10_000,
    }),
  );
  agent.destroy();
  const run = (message(a)?.result as { structuredContent?: { run?: { runId?: string; status?: string } } })
    ?.structuredContent?.run;
  if (a.status !== 200 || run?.status !== 'completed' || !run.runId)
    throw new Error(`call_flow_tool did not complete inline: ${a.status} ${a.text.slice(0, 400)}`);
  return { key, runId: run.runId };
}

interface DriverFigures {
  driver: string;
  kinds: Kind[];
  samples: Sample[];
  memory: MemorySample[];
  durationS: number;
  windowS: number;
  warmupS: number;
}

async function soakDriver(
  driver: 'pglite' | 'postgres',
  durationS: number,
  connections: number,
): Promise<DriverFigures> {
  const env: Record<string, string> = {
    FLOWGATE_WORKER: 'true',
    FLOWGATE_LOG_LEVEL: 'error',
    // One key and one address send everything: the limits would answer 429 to a load they are meant to stop.
    FLOWGATE_RATE_LIMIT_KEY_PER_MIN: '0',
    FLOWGATE_RATE_LIMIT_IP_PER_MIN: '0',
  };
  let dropDb: (() => Promise<void>) | undefined;
  const previous = process.env.DATABASE_URL;
  let gw: GatewayChild | undefined;
  try {
    if (driver === 'postgres') {
      const baseUrl = benchPostgresUrl();
      const name = `fg_bench_soak_${randomBytes(5).toString('hex')}`;
      const admin = await createDb({ url: baseUrl, maxConnections: 1 });
      await admin.db.execute(`create database ${name}`);
      dropDb = async () => {
        await admin.db.execute(`drop database if exists ${name} with (force)`).catch(() => {});
        await admin.close();
      };
      const url = new URL(baseUrl);
      url.pathname = `/${name}`;
      env.DATABASE_URL = url.toString();
      env.FLOWGATE_ENCRYPTION_KEY = randomBytes(32).toString('base64');
    } else {
      // The child inherits our environment: the embedded run must not see a DATABASE_URL.
      delete process.env.DATABASE_URL;
    }
    gw = await startGatewayChild({ label: `gateway ${driver}`, env });
    if (previous !== undefined) process.env.DATABASE_URL = previous;
    const { key, runId } = await seed(gw);
    const mix = kinds(runId);
    const url = new URL(`${gw.url}/api/workspaces/${WS}/mcp`);
    const agent = new Agent({ keepAlive: true, maxSockets: connections });

    // Each kind must answer as expected once before the load: a wrong expectation is a setup error, not a figure.
    for (const k of mix) {
      const why = k.check(await send(agent, url, k.auth ? key : undefined, k.body));
      if (why) throw new Error(`${k.name}: unexpected answer before the load: ${why}`);
    }

    const cycle = mix.flatMap((k, i) => Array.from({ length: k.weight }, () => i));
    const samples: Sample[] = [];
    const memory: MemorySample[] = [];
    const pid = gw.child.pid;
    const child = gw.child;
    const start = performance.now();
    const now = () => (performance.now() - start) / 1000;
    const deadline = start + durationS * 1000;
    const rssTimer = setInterval(() => memory.push({ t: now(), rssKb: readRssKb(pid) }), 1000);
    // Heap figures over IPC, without a forced GC (that would disturb the latencies being measured).
    const heapTimer = setInterval(() => {
      void child.call<MemoryFigures>('memory', {}, 5000).then(
        (m) => memory.push({ t: now(), rssKb: m.rss / 1024, heapUsed: m.heapUsed, heapTotal: m.heapTotal }),
        () => {},
      );
    }, 5000);
    let progress = 0;
    const progressTimer = setInterval(() => {
      progress += 1;
      const errors = samples.filter((s) => s.error).length;
      log(
        `  ${driver.padEnd(8)} ${progress} min: ${samples.length.toLocaleString('en-US')} requests, ${errors} errors, RSS ${fmt(readRssKb(pid) / 1024, 1)} MB`,
      );
    }, 60_000);
    const loop = async (c: number) => {
      // Connections start at different places in the cycle so every kind is in flight at every moment.
      let i = (c * 7) % cycle.length;
      while (performance.now() < deadline) {
        const kind = cycle[i % cycle.length]!;
        i += 1;
        const k = mix[kind]!;
        const t0 = performance.now();
        let error: string | undefined;
        try {
          error = k.check(await send(agent, url, k.auth ? key : undefined, k.body));
        } catch (err) {
          error = err instanceof Error ? err.message : String(err);
        }
        samples.push({
          t: (t0 - start) / 1000,
          kind,
          ms: performance.now() - t0,
          ...(error ? { error } : {}),
        });
      }
    };
    try {
      await Promise.all(Array.from({ length: connections }, (_, c) => loop(c)));
    } finally {
      clearInterval(rssTimer);
      clearInterval(heapTimer);
      clearInterval(progressTimer);
      agent.destroy();
    }
    const windowS = durationS >= 180 ? 60 : 20;
    const warmupS = Math.min(120, durationS / 2);
    return { driver, kinds: mix, samples, memory, durationS, windowS, warmupS };
  } finally {
    if (previous !== undefined) process.env.DATABASE_URL = previous;
    await gw?.stop();
    await dropDb?.();
  }
}

function report(f: DriverFigures): Check[] {
  const windows = Math.ceil(f.durationS / f.windowS);
  const label = (w: number) =>
    `${fmt((w * f.windowS) / 60, 1)}–${fmt(Math.min(f.durationS, (w + 1) * f.windowS) / 60, 1)}m`;
  const errors = f.samples.filter((s) => s.error);
  log();
  log(
    `  ${f.driver}: ${f.samples.length.toLocaleString('en-US')} requests in ${fmt(f.durationS / 60, 1)} min (${fmt(f.samples.length / f.durationS)} req/s), ${errors.length} errors`,
  );
  if (errors.length) {
    const byReason = new Map<string, number>();
    for (const e of errors) {
      const reason = `${f.kinds[e.kind]!.name}: ${e.error}`;
      byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
    }
    for (const [reason, n] of [...byReason].sort((a, b) => b[1] - a[1]).slice(0, 8))
      log(`    ${n} × ${reason}`);
  }

  // p50/p99 per method per window (ms); bad requests are measured too, they are part of the load.
  const rows: string[][] = [['method (p50/p99 ms)', ...Array.from({ length: windows }, (_, w) => label(w))]];
  f.kinds.forEach((k, ki) => {
    const row = [k.name];
    for (let w = 0; w < windows; w++) {
      const ms = f.samples
        .filter((s) => s.kind === ki && s.t >= w * f.windowS && s.t < (w + 1) * f.windowS)
        .map((s) => s.ms)
        .sort((a, b) => a - b);
      row.push(ms.length ? `${fmt(quantile(ms, 0.5), 1)}/${fmt(quantile(ms, 0.99), 0)}` : '—');
    }
    rows.push(row);
  });
  const perWindow = (fn: (w: number) => string) => Array.from({ length: windows }, (_, w) => fn(w));
  const inWindow = <T extends { t: number }>(xs: T[], w: number) =>
    xs.filter((s) => s.t >= w * f.windowS && s.t < (w + 1) * f.windowS);
  rows.push([
    'req/s',
    ...perWindow((w) =>
      fmt(inWindow(f.samples, w).length / (Math.min(f.durationS, (w + 1) * f.windowS) - w * f.windowS)),
    ),
  ]);
  rows.push(['errors', ...perWindow((w) => String(inWindow(f.samples, w).filter((s) => s.error).length))]);
  const mb = (kb: number) => fmt(kb / 1024, 1);
  rows.push([
    'RSS MB (median)',
    ...perWindow((w) => mb(medianOf(inWindow(f.memory, w).map((m) => m.rssKb)))),
  ]);
  const heap = f.memory.filter((m) => m.heapUsed !== undefined);
  rows.push([
    'V8 heap used MB (median)',
    ...perWindow((w) => fmt(medianOf(inWindow(heap, w).map((m) => m.heapUsed!)) / 2 ** 20, 1)),
  ]);
  rows.push([
    'V8 heap total MB (median)',
    ...perWindow((w) => fmt(medianOf(inWindow(heap, w).map((m) => m.heapTotal!)) / 2 ** 20, 1)),
  ]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows)
    log(`  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`);

  // Flatness after warm-up: the median RSS of the first minute after it against the last minute of the run (a
  // third of what follows the warm-up each, in a short run, so the two never overlap). Medians over a minute keep
  // one GC cycle's sawtooth from deciding the figure.
  const span = Math.min(60, (f.durationS - f.warmupS) / 3);
  const rss = f.memory.filter((m) => m.heapUsed === undefined && m.t >= f.warmupS);
  const first = medianOf(rss.filter((m) => m.t < f.warmupS + span).map((m) => m.rssKb));
  const last = medianOf(rss.filter((m) => m.t >= f.durationS - span).map((m) => m.rssKb));
  const change = ((last - first) / first) * 100;
  const all = rss.map((m) => m.rssKb);
  log(
    `  RSS after warm-up (${fmt(f.warmupS)} s), median of ${fmt(span)} s: ${mb(first)} MB → ${mb(last)} MB at the end (${change >= 0 ? '+' : ''}${fmt(change, 1)}%), range ${mb(Math.min(...all))}–${mb(Math.max(...all))} MB`,
  );
  return [
    {
      benchmark: 'soak',
      name: `${f.driver}: errors`,
      value: String(errors.length),
      target: '0',
      pass: errors.length === 0 && f.samples.length > 0,
    },
    {
      benchmark: 'soak',
      name: `${f.driver}: RSS change after warm-up`,
      value: `${change >= 0 ? '+' : ''}${fmt(change, 1)}%`,
      target: `±${RSS_FLAT_PCT}%`,
      pass: Number.isFinite(change) && Math.abs(change) <= RSS_FLAT_PCT,
    },
  ];
}

export const soakBench: Benchmark = {
  name: 'soak',
  description:
    'mixed MCP workload for --soak-minutes (default 10) per driver: errors, p50/p99 over time, RSS/heap',
  async run(options): Promise<Check[]> {
    const minutes = options.soakMinutes;
    const durationS = minutes * 60;
    heading(
      `soak: mixed MCP workload, ${fmt(minutes, 1)} min × ${options.connections} connections per driver`,
    );
    log(
      '  tools/list, search_flow_tools, inspect_flow_tool, call_flow_tool (wait_ms 5 s), resources/read of a run, and bad requests (expected 4xx)',
    );
    const checks = report(await soakDriver('pglite', durationS, options.connections));
    if (await postgresReachable())
      checks.push(...report(await soakDriver('postgres', durationS, options.connections)));
    else log('\n  Postgres not reachable (DATABASE_URL or the local server): soaked on PGlite only');
    return checks;
  },
};
