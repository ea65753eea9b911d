/**
 * `searchFlowTools` over a workspace of 10,000 flows with 30,000 MCP interfaces (plus 50 installations of a
 * neighbour's public flows, whose 2,000 flows share the indexes), on embedded PGlite and on Postgres when one is
 * reachable (DATABASE_URL, else the local server). ~500 varied queries — exact tool names, name prefixes, common and
 * rare words, two-word queries, misses, browsing — interleaved query by query with a primary-key lookup (`getFlow` by
 * slug) measured in the same run, so drift hits both alike. Figures: p50/p99 of each, their ratio, and second pages.
 * Then the same queries end to end: `tools/call search_flow_tools` over HTTP to the real gateway (in this process, on
 * the same database), one request at a time, beside the repository call they wrap.
 * Target: search p99 ≤ 10 ms on each driver.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type DbHandle, repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { type FlowModel, validateFlow } from '@flowgate/flows';
import { createLogger, loadConfig, startGateway } from '@flowgate/gateway';
import type { Benchmark, BenchOptions } from './lib/bench.js';
import { BENCH_RATE_LIMITS, mcpCall, mcpHeaders } from './lib/gateway.js';
import { type Contender, interleave, type Summary, summaryOf } from './lib/interleave.js';
import { type LoadSpec, runLoad } from './lib/load.js';
import { DEFAULT_PG_URL, postgresReachable } from './lib/postgres.js';
import { printProfile, profileThisProcess } from './lib/profile.js';
import { type Check, fmt, heading, log, printSummaries } from './lib/report.js';

const WS = 'ws-bench';
const NEIGHBOUR = 'ws-neighbour';
const TOOLS_PER_FLOW = 3;
const INSTALLATIONS = 50;

/** The data set: the issue's 10k flows, or a tenth of it under --quick (which only proves the benchmark runs). */
interface Size {
  flows: number;
  neighbourFlows: number;
  queries: number;
}
const FULL: Size = { flows: 10_000, neighbourFlows: 2_000, queries: 500 };
const QUICK: Size = { flows: 1_000, neighbourFlows: 200, queries: 100 };
/** The trigram index a text search of live interfaces should be answered from (migration 0011). */
const TRIGRAM_INDEX = 'flow_tools_live_search_idx';
const PAGE = 20;
const TARGETS = {
  /** Repository search p99, ms, and as a multiple of the primary-key lookup's p99 in the same run. */
  p99Ms: 5,
  p99VsPk: 2,
  /** search_flow_tools req/s at --connections ÷ tools/list req/s on the same gateway (Postgres). */
  httpVsList: 0.25,
};

/** Deterministic, so every run searches the same data with the same queries. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COMMON = (
  'account address alert analytics approval archive audit backup balance billing booking budget calendar campaign ' +
  'candidate cart catalog channel checkout claim client company compliance contact content contract conversion ' +
  'coupon crm customer dashboard data deal delivery digest discount document domain email employee enrich event ' +
  'expense export feedback file finance forecast form fulfilment growth health import incident inventory invoice ' +
  'issue journal lead ledger license lookup marketing meeting message metric notification onboarding order partner ' +
  'payment payroll pipeline pricing product profile project purchase quote reconcile refund report request review ' +
  'risk sales schedule score segment sentiment shipment signup sla slack stock subscription summary supplier support ' +
  'survey sync task tax team ticket timesheet transcript translate trial usage vendor webhook workflow'
).split(' ');
const VERBS =
  'get create update sync send check list find enrich score summarize classify export import notify route'.split(
    ' ',
  );
const SYLLABLES = 'ka lo mi ne ru ta vo zi pe sa do fu gri bla tor ven qua lix mon dra sel pho kry zun'.split(
  ' ',
);

interface Dataset {
  flows: Array<{ literal: string; model: FlowModel }>;
  toolNames: string[];
  rareWords: string[];
  slugs: string[];
}

export function makeFlows(count: number, seed: number, publicShare: number): Dataset {
  const rnd = prng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)] as T;
  // Zipf-like: low indexes far more often, as real vocabularies are.
  const common = () => COMMON[Math.floor(COMMON.length * rnd() ** 2)] as string;
  const rareWords = Array.from(
    { length: 6000 },
    () => `${pick(SYLLABLES)}${pick(SYLLABLES)}${pick(SYLLABLES)}`,
  );
  const rare = () => pick(rareWords);
  const flows: Dataset['flows'] = [];
  const toolNames: string[] = [];
  const slugs: string[] = [];
  for (let i = 0; i < count; i++) {
    const slug = `${common()}-${rare()}-${i}`;
    const description = Array.from({ length: 10 + Math.floor(rnd() * 6) }, () =>
      rnd() < 0.65 ? common() : rare(),
    ).join(' ');
    const tools = Array.from({ length: TOOLS_PER_FLOW }, (_, k) => {
      // One in ten tools has a generic name shared by many flows (create_invoice); the rest are specific.
      const name = rnd() < 0.1 ? `${pick(VERBS)}_${common()}` : `${pick(VERBS)}_${common()}_${rare()}`;
      return `${name}${k === 0 ? '' : `_${k}`}`;
    });
    toolNames.push(...tools);
    slugs.push(slug);
    const literal = [
      `{:slug :${slug}`,
      ` :name "${common()} ${rare()}"`,
      ` :description "${description}"`,
      ` :tags ["${common()}" "${common()}"]`,
      ' :invocations {:default {:inputs [{:name :id :type :string :required true}]}}',
      ` :interfaces {:mcp [${tools.map((t) => `{:tool-name "${t}" :description "${pick(VERBS)} ${common()} ${rare()}" :invocation :default}`).join(' ')}]}`,
      ` :discover {:public ${rnd() < publicShare ? 'true' : 'false'}}`,
      ' :flow (flow/input)}',
    ].join('\n');
    const result = validateFlow(literal);
    if (!result.valid || !result.model)
      throw new Error(`generated flow ${slug} is invalid: ${result.diagnostics[0]?.message}`);
    flows.push({ literal, model: result.model });
  }
  return { flows, toolNames, rareWords, slugs };
}

export interface BenchQuery {
  kind: string;
  text: string;
}

export function makeQueries(data: Dataset, seed: number, count = FULL.queries): BenchQuery[] {
  const rnd = prng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)] as T;
  const mix: Array<[string, number, () => string]> = [
    ['exact tool name', 100, () => pick(data.toolNames)],
    ['name prefix', 75, () => pick(data.toolNames).slice(0, 4 + Math.floor(rnd() * 7))],
    ['common word', 100, () => pick(COMMON)],
    ['rare word', 100, () => pick(data.rareWords)],
    ['two words', 75, () => `${pick(COMMON)} ${rnd() < 0.5 ? pick(COMMON) : pick(data.rareWords)}`],
    ['no match', 25, () => `zq${Math.floor(rnd() * 1e6).toString(36)}x`],
    ['browse', 25, () => ''],
  ];
  const queries = mix.flatMap(([kind, count, make]) =>
    Array.from({ length: count }, () => ({ kind, text: make() })),
  );
  for (let i = queries.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [queries[i], queries[j]] = [queries[j] as BenchQuery, queries[i] as BenchQuery];
  }
  return queries.slice(0, count);
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}

export async function seed(h: DbHandle, main: Dataset, neighbour: Dataset): Promise<number> {
  const started = performance.now();
  await repos.createWorkspace(h.db, { id: WS, name: 'bench' });
  await repos.createWorkspace(h.db, { id: NEIGHBOUR, name: 'neighbour' });
  await repos.importFlows(h.db, WS, main.flows, { release: true, chunkSize: 500 });
  await repos.importFlows(h.db, NEIGHBOUR, neighbour.flows, { release: true, chunkSize: 500 });
  const publicSlugs = neighbour.flows.filter((f) => f.model.discover.public).map((f) => f.model.slug);
  for (const flowSlug of publicSlugs.slice(0, INSTALLATIONS)) {
    await repos.installFlow(h.db, WS, {
      sourceWorkspaceId: NEIGHBOUR,
      flowSlug,
      versionPolicy: 'track-latest',
    });
  }
  return performance.now() - started;
}

interface DriverFigures {
  driver: string;
  seedMs: number;
  search: number[];
  byKind: Map<string, number[]>;
  secondPage: number[];
  pk: number[];
  hits: number;
  /** `tools/call search_flow_tools` over HTTP, end to end. */
  http: number[];
  /** search_flow_tools and tools/list under load on the same gateway, interleaved. */
  throughput: { search: Summary; list: Summary };
  /** Indexes the plan of each query kind's first query reads, and the plan text. */
  plans: Array<{ kind: string; query: string; indexes: string[]; plan: string }>;
}

/**
 * The same queries through the real gateway: auth, narrowing, dispatch, the tool, the workspace use case and the
 * statement, serialised and sent over loopback. One request at a time, so the figure is latency, not throughput.
 */
async function measureHttp(
  h: DbHandle,
  queries: BenchQuery[],
  options: BenchOptions,
): Promise<{ latency: number[]; throughput: DriverFigures['throughput'] }> {
  const rounds = Math.max(1, options.rounds);
  const dataDir = mkdtempSync(join(tmpdir(), 'flowgate-bench-search-'));
  const adminToken = `bench-${randomBytes(24).toString('hex')}`;
  const config = loadConfig({
    FLOWGATE_PORT: '0',
    FLOWGATE_DATA_DIR: dataDir,
    FLOWGATE_ADMIN_TOKEN: adminToken,
    FLOWGATE_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    FLOWGATE_LOG_LEVEL: 'silent',
    FLOWGATE_WORKER: 'false',
    ...BENCH_RATE_LIMITS,
  });
  const gw = await startGateway({ config, db: h, logger: createLogger('silent') });
  try {
    const admin = async (path: string, body: unknown) => {
      const res = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const sa = await admin(`/api/workspaces/${WS}/service-accounts`, {
      name: 'bench-search',
      capabilities: ['flows.read', 'installations.read'],
    });
    const key = (
      await admin(`/api/workspaces/${WS}/service-accounts/${String(sa.serviceAccountId)}/keys`, {})
    ).key as { apiKey: string };
    const url = `${gw.url}/api/workspaces/${WS}/mcp`;
    const headers = mcpHeaders(key.apiKey);
    let id = 0;
    const call = async (query: string) => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        // An empty query browses: the tool takes no query then.
        params: {
          name: 'search_flow_tools',
          arguments: query.trim() ? { query, limit: PAGE } : { limit: PAGE },
        },
      });
      const t0 = performance.now();
      const answer = await mcpCall(url, headers, body);
      const ms = performance.now() - t0;
      const result = (answer.json as { result?: { isError?: boolean } } | undefined)?.result;
      if (answer.status !== 200 || !result || result.isError) {
        throw new Error(`search_flow_tools over HTTP failed: ${answer.status} ${answer.text.slice(0, 300)}`);
      }
      return ms;
    };
    for (const q of queries.slice(0, 50)) await call(q.text);
    const out: number[] = [];
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < queries.length; i++)
        out.push(await call((queries[(i + r * 37) % queries.length] as BenchQuery).text));
    }
    // Throughput: the query mix against the cheapest authenticated call, in interleaved rounds. The gateway runs
    // in this process, so its CPU per request is this process's.
    const searchBodies = queries.slice(0, 100).map((q, i) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: {
          name: 'search_flow_tools',
          arguments: q.text.trim() ? { query: q.text, limit: PAGE } : { limit: PAGE },
        },
      }),
    );
    const listBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const load = (extra: Partial<LoadSpec>, durationS: number): LoadSpec => ({
      url,
      method: 'POST',
      headers,
      connections: options.connections,
      pipelining: 1,
      durationS,
      ...extra,
    });
    const targets = [
      { name: 'tools/list', spec: { body: listBody } },
      { name: 'search_flow_tools', spec: { bodies: searchBodies } },
    ];
    for (const t of targets) await runLoad(load(t.spec, options.warmupS));
    const contenders: Contender[] = targets.map((t) => ({
      name: t.name,
      run: () => runLoad(load(t.spec, options.durationS), process.pid),
    }));
    const summaries = await interleave(contenders, rounds);
    if (options.profile) {
      const search = targets[1]!.spec;
      const { file } = await profileThisProcess(`search-${h.driver}`, () =>
        runLoad(load(search, options.profileDurationS)),
      );
      printProfile(`flow-search: CPU profile of search_flow_tools under load, ${h.driver}`, file);
    }
    return {
      latency: out,
      throughput: {
        list: summaryOf(summaries, 'tools/list'),
        search: summaryOf(summaries, 'search_flow_tools'),
      },
    };
  } finally {
    await gw.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function measure(
  h: DbHandle,
  main: Dataset,
  queries: BenchQuery[],
  rounds: number,
): Promise<Omit<DriverFigures, 'driver' | 'seedMs' | 'http' | 'throughput' | 'plans'>> {
  const rnd = prng(7);
  const search: number[] = [];
  const byKind = new Map<string, number[]>();
  const secondPage: number[] = [];
  const pk: number[] = [];
  let hits = 0;
  const timeSearch = async (query: string, after?: repos.ToolSearchPosition) => {
    const t0 = performance.now();
    const page = await repos.searchFlowTools(h.db, WS, { query, limit: PAGE, after });
    return { ms: performance.now() - t0, page };
  };
  const timePk = async () => {
    const slug = main.slugs[Math.floor(rnd() * main.slugs.length)] as string;
    const t0 = performance.now();
    const row = await repos.getFlow(h.db, WS, slug);
    const ms = performance.now() - t0;
    if (!row) throw new Error(`primary-key lookup missed ${slug}`);
    return ms;
  };
  // Warm-up: plans, caches and JIT, not measured.
  for (const q of queries.slice(0, 50)) {
    await timeSearch(q.text);
    await timePk();
  }
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < queries.length; i++) {
      const q = queries[(i + r * 37) % queries.length] as BenchQuery;
      // Alternate which goes first so neither always runs on a warmer cache.
      if (i % 2 === 0) pk.push(await timePk());
      const first = await timeSearch(q.text);
      search.push(first.ms);
      byKind.set(q.kind, [...(byKind.get(q.kind) ?? []), first.ms]);
      hits += first.page.items.length;
      if (i % 2 === 1) pk.push(await timePk());
      if (first.page.next && i % 5 === 0) secondPage.push((await timeSearch(q.text, first.page.next)).ms);
    }
  }
  return { search, byKind, secondPage, pk, hits };
}

/**
 * The plan of the first query of each kind, as `searchFlowTools` sends it (same statement builder), run with
 * EXPLAIN ANALYZE: which indexes answer it, so a change that drops the trigram index shows.
 */
async function explainKinds(h: DbHandle, queries: BenchQuery[]): Promise<DriverFigures['plans']> {
  const out: DriverFigures['plans'] = [];
  const seen = new Set<string>();
  for (const q of queries) {
    if (seen.has(q.kind)) continue;
    seen.add(q.kind);
    const plan = (await repos.explainFlowToolSearch(h.db, WS, { query: q.text, limit: PAGE })).join('\n');
    const indexes = [
      ...new Set(
        [...plan.matchAll(/Index (?:Only )?Scan (?:Backward )?using (\w+)|Bitmap Index Scan on (\w+)/g)].map(
          (m) => (m[1] ?? m[2]) as string,
        ),
      ),
    ];
    out.push({ kind: q.kind, query: q.text, indexes, plan });
  }
  return out;
}

async function runDriver(
  driver: 'pglite' | 'postgres',
  main: Dataset,
  neighbour: Dataset,
  queries: BenchQuery[],
  options: BenchOptions,
): Promise<DriverFigures> {
  const rounds = Math.max(1, options.rounds);
  const previous = process.env.DATABASE_URL;
  if (driver === 'pglite') delete process.env.DATABASE_URL;
  else process.env.DATABASE_URL = previous ?? DEFAULT_PG_URL;
  let h: DbHandle | undefined;
  try {
    h = await createTestDb();
    const seedMs = await seed(h, main, neighbour);
    const plans = await explainKinds(h, queries);
    const figures = await measure(h, main, queries, rounds);
    const http = await measureHttp(h, queries, options);
    return { driver, seedMs, ...figures, http: http.latency, throughput: http.throughput, plans };
  } finally {
    await h?.close();
    if (previous === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = previous;
  }
}

function report(f: DriverFigures, size: Size, options: BenchOptions): Check[] {
  const s50 = percentile(f.search, 50);
  const s99 = percentile(f.search, 99);
  const k50 = percentile(f.pk, 50);
  const k99 = percentile(f.pk, 99);
  const name = f.driver === 'pglite' ? 'PGlite' : 'Postgres';
  heading(`flow-search on ${f.driver}`);
  log(
    `  seeded ${size.flows.toLocaleString('en-US')} flows / ${(size.flows * TOOLS_PER_FLOW).toLocaleString('en-US')} MCP interfaces (+${size.neighbourFlows} neighbour flows, ${INSTALLATIONS} installations) in ${fmt(f.seedMs / 1000, 1)} s`,
  );
  log(
    `  ${f.search.length} searches (${size.queries} queries × rounds, page of ${PAGE}), ${fmt(f.hits / f.search.length, 1)} hits per page on average`,
  );
  const stats = (label: string, v: number[]) => [
    label,
    String(v.length),
    fmt(percentile(v, 50), 2),
    fmt(percentile(v, 90), 2),
    fmt(percentile(v, 99), 2),
    fmt(Math.max(0, ...v), 2),
  ];
  const rows = [
    ['operation', 'samples', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
    stats('searchFlowTools', f.search),
    ...[...f.byKind].map(([kind, v]) => stats(`  ${kind}`, v)),
    stats('  second pages', f.secondPage),
    stats('search_flow_tools (HTTP)', f.http),
    stats('getFlow by slug (PK)', f.pk),
  ];
  const widths = (rows[0] as string[]).map((_, i) => Math.max(...rows.map((r) => (r[i] as string).length)));
  for (const r of rows)
    log(
      `  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ')}`,
    );
  log(`  ratio search ÷ PK lookup: p50 ${fmt(s50 / k50, 1)}×, p99 ${fmt(s99 / k99, 1)}×`);
  const h50 = percentile(f.http, 50);
  const h99 = percentile(f.http, 99);
  log(`  ratio HTTP tool call ÷ repository search: p50 ${fmt(h50 / s50, 1)}×, p99 ${fmt(h99 / s99, 1)}×`);
  log(`  plans (first query of each kind):`);
  for (const p of f.plans) log(`    ${p.kind.padEnd(16)} ${p.indexes.join(', ') || '(no index)'}`);
  if (options.verbose) {
    for (const p of f.plans) {
      log(`\n  EXPLAIN ANALYZE — ${p.kind}: ${JSON.stringify(p.query)}`);
      for (const line of p.plan.split('\n')) log(`    ${line}`);
    }
  }
  log(`\n  over HTTP at ${options.connections} connections, interleaved:`);
  printSummaries([f.throughput.list, f.throughput.search], 'tools/list');
  const httpRatio = f.throughput.search.rps / f.throughput.list.rps;
  // Text queries: every kind but browsing (no text) should read the trigram index.
  const textKinds = f.plans.filter((p) => p.kind !== 'browse');
  const withoutTrigram = textKinds.filter((p) => !p.indexes.includes(TRIGRAM_INDEX)).map((p) => p.kind);
  return [
    {
      benchmark: 'flow-search',
      name: `${name} searchFlowTools p99`,
      value: `${fmt(s99, 2)} ms`,
      target: `≤ ${TARGETS.p99Ms} ms`,
      pass: s99 <= TARGETS.p99Ms,
    },
    {
      benchmark: 'flow-search',
      name: `${name} search p99 ÷ PK p99`,
      value: fmt(s99 / k99, 2),
      target: `≤ ${TARGETS.p99VsPk}`,
      pass: s99 / k99 <= TARGETS.p99VsPk,
    },
    {
      benchmark: 'flow-search',
      name: `${name} trigram index in every text query's plan`,
      value: withoutTrigram.length
        ? `not: ${withoutTrigram.join(', ')}`
        : `${textKinds.length}/${textKinds.length} kinds`,
      target: 'all',
      pass: withoutTrigram.length === 0,
    },
    {
      benchmark: 'flow-search',
      name: `${name} search_flow_tools ÷ tools/list req/s, c=${options.connections}`,
      value: `${fmt(httpRatio, 3)} (${fmt(f.throughput.search.rps)} req/s)`,
      // The issue's target is set on Postgres; PGlite's figure is reported.
      target: f.driver === 'postgres' ? `≥ ${TARGETS.httpVsList}` : 'reported',
      pass: f.driver === 'postgres' ? httpRatio >= TARGETS.httpVsList : true,
    },
    {
      benchmark: 'flow-search',
      name: `${name} search_flow_tools over HTTP p50 / p99 (1 conn)`,
      value: `${fmt(h50, 2)} / ${fmt(h99, 2)} ms`,
      target: 'reported',
      pass: true,
    },
  ];
}

async function run(options: BenchOptions): Promise<Check[]> {
  const size = options.quick ? QUICK : FULL;
  heading('flow-search: generating data');
  const t0 = performance.now();
  const main = makeFlows(size.flows, 1, 0.2);
  const neighbour = makeFlows(size.neighbourFlows, 2, 0.5);
  const queries = makeQueries(main, 3, size.queries);
  log(
    `  ${size.flows + size.neighbourFlows} definitions validated in ${fmt((performance.now() - t0) / 1000, 1)} s; ${queries.length} queries`,
  );
  const checks = report(await runDriver('pglite', main, neighbour, queries, options), size, options);
  if (await postgresReachable())
    checks.push(...report(await runDriver('postgres', main, neighbour, queries, options), size, options));
  else log('\n  Postgres not reachable (DATABASE_URL or the local server): measured on PGlite only');
  return checks;
}

export const flowSearchBench: Benchmark = {
  name: 'flow-search',
  description:
    'searchFlowTools over 10k flows / 30k MCP interfaces on PGlite and Postgres, beside a primary-key lookup',
  run,
};
