/**
 * `pnpm tsx bench/side-by-side.ts --variant name='{json}' … [--rounds n] [--duration s] [--gc] [--profile]`
 *
 * Authenticated `tools/list` against gateway variants side by side: each variant is the benchmark gateway in its own
 * process (the production bundle unless a variant names another `script`), loaded in interleaved rounds like
 * `pnpm bench`. Per variant: req/s and its ratio to the first variant round by round, and what a round cost the
 * server per request in CPU — its main thread, its whole process, and its other threads by name (V8's helpers,
 * libuv's) — read from /proc, which drifts far less than throughput on a shared machine. With `--gc`, what its
 * garbage collector did in each round; with `--profile`, a CPU profile of each variant in the last round.
 *
 * A variant: `{"otel": true}` (export every span and metric to a loopback OTLP sink, as the tools-list benchmark
 * does), `"env": {…}` (more environment), `"nodeArgs": […]`, `"script": "/path/bench-gateway.mjs"` (another build,
 * e.g. a commit's bundle built with `buildDist` into a directory of its own). Example, tracing's cost:
 *
 *   pnpm tsx bench/side-by-side.ts --variant off='{}' --variant on='{"otel":true}' --rounds 10
 *
 * Linux only (per-thread CPU from /proc). It measures; it has no targets.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { prepareServerBuild } from './lib/build.js';
import { type GatewayChild, mcpHeaders, mcpUrl, seedWorkspace, startGatewayChild } from './lib/gateway.js';
import { gcFiguresSchema } from './lib/gc.js';
import { median } from './lib/interleave.js';
import { type LoadSpec, runLoad } from './lib/load.js';
import { otlpEnv, startOtlpSink } from './lib/otlp-sink.js';
import { printProfile, profileChild } from './lib/profile.js';
import { fmt, log } from './lib/report.js';

const variantSchema = z
  .object({
    otel: z.boolean().default(false),
    env: z.record(z.string(), z.string()).default({}),
    nodeArgs: z.array(z.string()).default([]),
    script: z.string().optional(),
  })
  .strict();
type Variant = z.infer<typeof variantSchema> & { name: string };

const { values } = parseArgs({
  options: {
    variant: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '6' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    gc: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
  },
  allowPositionals: false,
});

function parseVariant(arg: string): Variant {
  const at = arg.indexOf('=');
  if (at <= 0) throw new Error(`--variant ${arg}: expected name='{json}'`);
  return { name: arg.slice(0, at), ...variantSchema.parse(JSON.parse(arg.slice(at + 1))) };
}

const variants = (values.variant ?? []).map(parseVariant);
if (variants.length < 2) throw new Error("give at least two --variant name='{json}'");
const rounds = z.coerce.number().int().min(1).max(100).parse(values.rounds);
const durationS = z.coerce.number().min(1).max(60).parse(values.duration);
const connections = z.coerce.number().int().min(1).max(1000).parse(values.connections);
const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
const WORKSPACE = 'ws-bench';

/** CPU ms of each thread of `pid` by name (the main thread as `main`; same-named threads summed). */
function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, in clock ticks (USER_HZ, 100 on Linux).
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    out.set(name, (out.get(name) ?? 0) + ms);
  }
  return out;
}

interface Started {
  variant: Variant;
  gw: GatewayChild;
  url: string;
  apiKey: string;
}

async function start(variant: Variant, sinkEnv: Record<string, string>): Promise<Started> {
  const gw = await startGatewayChild({
    label: variant.name,
    env: { ...(variant.otel ? sinkEnv : {}), ...variant.env },
    nodeArgs: variant.nodeArgs,
    ...(variant.script ? { script: variant.script } : {}),
  });
  try {
    const apiKey = await seedWorkspace(gw, WORKSPACE, ['workspace.full']);
    return { variant, gw, url: mcpUrl(gw, WORKSPACE), apiKey };
  } catch (error) {
    await gw.stop();
    throw error;
  }
}

const spec = (s: Started, seconds: number): LoadSpec => ({
  url: s.url,
  method: 'POST',
  headers: mcpHeaders(s.apiKey),
  body: BODY,
  connections,
  pipelining: 1,
  durationS: seconds,
});

interface RoundFigures {
  rps: number;
  mainUs: number;
  processUs: number;
  threadsUs: Map<string, number>;
  gc?: string;
}

async function measure(s: Started, profile: boolean): Promise<RoundFigures> {
  const pid = s.gw.child.pid;
  const before = threadCpuMs(pid);
  if (values.gc) await s.gw.child.call('gc-start');
  const load = profile
    ? await profileChild(s.gw.child, () => runLoad(spec(s, durationS))).then(({ result, file }) => {
        printProfile(`${s.variant.name}: CPU profile, last round`, file);
        return result;
      })
    : await runLoad(spec(s, durationS));
  let gc: string | undefined;
  if (values.gc) {
    const f = gcFiguresSchema.parse(await s.gw.child.call('gc-stop'));
    gc = `heap ${fmt(f.allocatedBytes / load.ok / 1024, 1)} KB/req, scavenges ${fmt((f.scavenges * 1000) / load.ok, 2)}/1k, mark-compacts ${f.markCompacts}, pause ${fmt((f.pauseMs * 1000) / load.ok, 1)} µs/req`;
  }
  const after = threadCpuMs(pid);
  const threadsUs = new Map<string, number>();
  let total = 0;
  for (const [name, ms] of after) {
    const us = ((ms - (before.get(name) ?? 0)) * 1000) / load.ok;
    threadsUs.set(name, us);
    total += us;
  }
  return {
    rps: load.rps,
    mainUs: threadsUs.get('main') ?? 0,
    processUs: total,
    threadsUs,
    ...(gc ? { gc } : {}),
  };
}

log(await prepareServerBuild(false));
const sink = await startOtlpSink();
const started: Started[] = [];
try {
  for (const v of variants) started.push(await start(v, otlpEnv(sink)));
  for (const s of started) await runLoad(spec(s, 2));
  log(`  tools/list, c=${connections}, ${rounds} rounds × ${durationS} s, interleaved; CPU µs per request`);
  const figures = new Map<string, RoundFigures[]>(variants.map((v) => [v.name, []]));
  for (let r = 0; r < rounds; r++) {
    const line: string[] = [];
    for (let i = 0; i < started.length; i++) {
      const s = started[(r + i) % started.length] as Started;
      const f = await measure(s, values.profile && r === rounds - 1);
      figures.get(s.variant.name)?.push(f);
      line.push(`${s.variant.name} ${fmt(f.rps)} req/s (main ${fmt(f.mainUs, 1)})`);
      if (f.gc) line.push(`[${f.gc}]`);
    }
    log(`  round ${r + 1}: ${line.join('  ')}`);
  }
  const base = figures.get(variants[0]?.name ?? '') ?? [];
  log();
  for (const v of variants) {
    const list = figures.get(v.name) ?? [];
    const ratios = list.map((f, i) => f.rps / (base[i]?.rps ?? Number.NaN));
    const threads = new Map<string, number[]>();
    for (const f of list)
      for (const [name, us] of f.threadsUs) threads.set(name, [...(threads.get(name) ?? []), us]);
    const others = [...threads]
      .filter(([name]) => name !== 'main')
      .map(([name, xs]) => [name, median(xs)] as const)
      .filter(([, us]) => us >= 0.5)
      .map(([name, us]) => `${name} ${fmt(us, 1)}`)
      .join(', ');
    log(
      `  ${v.name.padEnd(12)} ${fmt(median(list.map((f) => f.rps))).padStart(7)} req/s  ÷ ${variants[0]?.name}: ${fmt(median(ratios), 3)} (${ratios.map((x) => fmt(x, 2)).join(' ')})`,
    );
    log(
      `  ${''.padEnd(12)} CPU per request: main ${fmt(median(list.map((f) => f.mainUs)), 1)} µs, process ${fmt(median(list.map((f) => f.processUs)), 1)} µs${others ? ` (${others})` : ''}`,
    );
  }
} finally {
  for (const s of started) await s.gw.stop();
  await sink.close();
}
