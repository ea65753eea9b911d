/**
 * `pnpm bench [--only name] [--rounds n] [--duration s] [--profile] [--strict] [--source]`
 * Runs every benchmark, each against a baseline measured in the same run, and prints figures, ratios and
 * PASS/FAIL against the targets. Benchmarks inform rather than gate: exit 0 whatever the figures, unless
 * --strict; a benchmark that cannot run at all (setup error, error responses under load) exits 1.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { abuseBench } from './abuse.js';
import { callFlowToolBench } from './call-flow-tool.js';
import { flowSearchBench } from './flow-search.js';
import type { Benchmark, BenchOptions } from './lib/bench.js';
import { prepareServerBuild } from './lib/build.js';
import { type Check, heading, log, printChecks } from './lib/report.js';
import { runsBench } from './runs.js';
import { runtimesBench } from './runtimes.js';
import { soakBench } from './soak.js';
import { tokensBench } from './tokens.js';
import { toolsListBench } from './tools-list.js';

const BENCHMARKS: Benchmark[] = [
  toolsListBench,
  flowSearchBench,
  runsBench,
  callFlowToolBench,
  runtimesBench,
  tokensBench,
  abuseBench,
  soakBench,
];

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    'rss-requests': { type: 'string', default: '100000' },
    profile: { type: 'boolean', default: false },
    'profile-duration': { type: 'string', default: '8' },
    strict: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
    'soak-minutes': { type: 'string', default: '10' },
    list: { type: 'boolean', default: false },
    source: { type: 'boolean', default: false },
  },
  allowPositionals: false,
});

const num = (min: number, max: number) => z.coerce.number().min(min).max(max);
const options: BenchOptions = {
  rounds: num(1, 20).int().parse(values.rounds),
  durationS: num(1, 60).parse(values.duration),
  warmupS: num(0.5, 60).parse(values.warmup),
  connections: num(1, 1000).int().parse(values.connections),
  rssRequests: num(1000, 10_000_000).int().parse(values['rss-requests']),
  profile: values.profile,
  profileDurationS: num(1, 120).parse(values['profile-duration']),
  quick: values.quick,
  verbose: values.verbose,
  soakMinutes: num(0.5, 240).parse(values['soak-minutes']),
};
// --quick: one short round everywhere (each benchmark also shrinks its data set); explicit flags still win.
if (options.quick) {
  const given = (name: string) => process.argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (!given('rounds')) options.rounds = 1;
  if (!given('duration')) options.durationS = 1;
  if (!given('warmup')) options.warmupS = 0.5;
  if (!given('rss-requests')) options.rssRequests = 2000;
  if (!given('connections')) options.connections = 10;
  if (!given('soak-minutes')) options.soakMinutes = 0.5;
}

if (values.list) {
  for (const b of BENCHMARKS) log(`${b.name.padEnd(16)} ${b.description}`);
  process.exit(0);
}

// The soak takes 20 minutes: only on request (--only soak), or in its 30-second form under --quick.
const selected = values.only
  ? BENCHMARKS.filter((b) => values.only!.includes(b.name))
  : BENCHMARKS.filter((b) => b.name !== 'soak' || options.quick);
const unknown = (values.only ?? []).filter((n) => !BENCHMARKS.some((b) => b.name === n));
if (unknown.length) {
  process.stderr.write(
    `unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}\n`,
  );
  process.exit(2);
}

const started = Date.now();
log(
  `node ${process.version}, ${(await import('node:os')).cpus().length} CPUs; loopback only; figures are medians of interleaved rounds`,
);
// The servers run what production runs (the bundle), unless --source asks for the TypeScript under tsx.
log(`  ${await prepareServerBuild(values.source)}`);
const checks: Check[] = [];
let broken = false;
for (const b of selected) {
  try {
    checks.push(...(await b.run(options)));
  } catch (err) {
    broken = true;
    heading(`${b.name}: could not run`);
    // fetch's "fetch failed" says nothing without its cause (a refused or reset connection, a timeout).
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    log(`  ${err instanceof Error ? err.message : String(err)}${cause}`);
  }
}
printChecks(checks);
log(`\n  total ${((Date.now() - started) / 1000).toFixed(0)} s`);
const failed = checks.filter((c) => !c.pass).length;
if (broken) process.exit(1);
process.exit(values.strict && failed > 0 ? 1 : 0);
