import { randomBytes } from 'node:crypto';
/**
 * Authenticated `tools/list` through the real gateway (own process, embedded database) versus a bare Hono
 * route (own process) that parses the same body and answers with the same bytes; load from a third process.
 * Variants: API key and ES256 JWT, both warm (the authenticator's cache is what production relies on).
 * Then memory: RSS of the gateway before and after `rssRequests` more tools/list calls.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import type { Benchmark, BenchOptions } from './lib/bench.js';
import { serverBuild, serverScript } from './lib/build.js';
import type { MemoryFigures } from './lib/control.js';
import {
  type GatewayChild,
  mcpCall,
  mcpHeaders,
  mcpUrl,
  seedWorkspace,
  startGatewayChild,
} from './lib/gateway.js';
import { type GcPerRequest, gcFiguresSchema, gcPerRequest, gcRows } from './lib/gc.js';
import {
  type Contender,
  interleave,
  median,
  roundRatios,
  type Summary,
  summaryOf,
} from './lib/interleave.js';
import { type LoadSpec, runLoad } from './lib/load.js';
import { type OtlpSink, otlpEnv, startOtlpSink } from './lib/otlp-sink.js';
import { benchPostgresUrl, postgresReachable, throwawayDatabase } from './lib/postgres.js';
import { type ChildHandle, ROOT, readRssKb, spawnTsx } from './lib/proc.js';
import { printProfile, printSurvivors, profileChild, survivorsOfChild } from './lib/profile.js';
import { type Check, fmt, heading, log, printSummaries, table } from './lib/report.js';

const WORKSPACE = 'ws-bench';
const CAPABILITIES = ['workspace.full'];
const JWT_ISSUER = 'https://idp.bench.invalid/';
const JWT_AUDIENCE = 'flowgate-bench';
const BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

const TARGETS = {
  apiKey: 0.8,
  jwt: 0.7,
  rssChangePct: 10,
  otel: 0.9,
  /** Usage metering on ÷ off: within noise (issue 27). */
  metering: 0.95,
  idleRssMb: { pglite: 250, postgres: 100 },
};

/**
 * Resident memory of a gateway at idle: `flowgate serve` started on a new data directory (or a new Postgres
 * database), seeded, 200 tools/list answered, then 3 s of quiet. What an operator sees in `ps` for a gateway nobody
 * is calling.
 */
async function idleRss(driver: 'pglite' | 'postgres'): Promise<number | undefined> {
  let db: { url: string; drop(): Promise<void> } | undefined;
  if (driver === 'postgres') {
    const base = benchPostgresUrl();
    if (!(await postgresReachable(base))) return undefined;
    db = await throwawayDatabase(base, 'fg_bench_idle');
  }
  try {
    const gw = await startGatewayChild({
      label: `gateway:idle:${driver}`,
      cli: true,
      ...(db
        ? { env: { DATABASE_URL: db.url, FLOWGATE_ENCRYPTION_KEY: randomBytes(32).toString('base64') } }
        : {}),
    });
    try {
      const key = await seedWorkspace(gw, WORKSPACE, CAPABILITIES);
      const url = mcpUrl(gw, WORKSPACE);
      for (let i = 0; i < 200; i++) await probe(url, key, `idle ${driver}`);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      return readRssKb(gw.child.pid) / 1024;
    } finally {
      await gw.stop();
    }
  } finally {
    await db?.drop();
  }
}

async function idleChecks(): Promise<Check[]> {
  heading('tools-list: gateway RSS at idle');
  const build = serverBuild();
  log(
    build.kind === 'dist'
      ? `  node ${relative(ROOT, build.cli)} serve (production bundle)`
      : '  node --import tsx apps/cli/src/main.ts serve (source under tsx)',
  );
  const checks: Check[] = [];
  for (const driver of ['pglite', 'postgres'] as const) {
    const mb = await idleRss(driver);
    const target = TARGETS.idleRssMb[driver];
    if (mb === undefined) {
      log(`  ${driver}: Postgres not reachable, skipped`);
      continue;
    }
    log(`  ${driver.padEnd(8)} ${fmt(mb, 1)} MB`);
    checks.push({
      benchmark: 'tools-list',
      name: `gateway RSS at idle, ${driver === 'pglite' ? 'PGlite' : 'Postgres'}`,
      value: `${fmt(mb, 0)} MB`,
      target: `≤ ${target} MB`,
      pass: mb <= target,
    });
  }
  return checks;
}

interface Setup {
  gw: GatewayChild;
  apiKey: string;
  jwt: string;
}

async function jwtSetup(): Promise<{ env: Record<string, string>; sign: () => Promise<string> }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  return {
    env: {
      FLOWGATE_JWT_ISSUER: JWT_ISSUER,
      FLOWGATE_JWT_AUDIENCE: JWT_AUDIENCE,
      FLOWGATE_JWT_PUBLIC_KEY: await exportSPKI(publicKey),
    },
    sign: () =>
      new SignJWT({ workspace_id: WORKSPACE, capabilities: CAPABILITIES })
        .setProtectedHeader({ alg: 'ES256' })
        .setSubject('bench-user')
        .setIssuer(JWT_ISSUER)
        .setAudience(JWT_AUDIENCE)
        .setIssuedAt()
        .setExpirationTime('2h')
        .sign(privateKey),
  };
}

async function startSeededGateway(label: string, env: Record<string, string> = {}): Promise<Setup> {
  const jwt = await jwtSetup();
  // --expose-gc only lets the memory check force a collection before reading heap figures.
  const gw = await startGatewayChild({ label, env: { ...jwt.env, ...env }, nodeArgs: ['--expose-gc'] });
  try {
    return { gw, apiKey: await seedWorkspace(gw, WORKSPACE, CAPABILITIES), jwt: await jwt.sign() };
  } catch (err) {
    await gw.stop();
    throw err;
  }
}

/** One real call first: the load must measure successful tools/list answers, nothing else. */
async function probe(url: string, token: string, what: string): Promise<string> {
  const res = await mcpCall(url, mcpHeaders(token), BODY);
  const tools = (res.json as { result?: { tools?: unknown[] } } | undefined)?.result?.tools;
  if (res.status !== 200 || !Array.isArray(tools) || tools.length === 0) {
    throw new Error(
      `${what}: tools/list did not answer a tool list (HTTP ${res.status}): ${res.text.slice(0, 400)}`,
    );
  }
  if (!res.contentType?.startsWith('application/json')) {
    throw new Error(`${what}: tools/list answered ${res.contentType}, expected application/json`);
  }
  return res.text;
}

function spec(url: string, token: string, options: BenchOptions, extra: Partial<LoadSpec> = {}): LoadSpec {
  return {
    url,
    method: 'POST',
    headers: mcpHeaders(token),
    body: BODY,
    connections: options.connections,
    pipelining: 1,
    durationS: options.durationS,
    ...extra,
  };
}

async function profileVariant(
  options: BenchOptions,
  variant: 'api-key' | 'jwt' | 'api-key, OTel',
): Promise<void> {
  // The OpenTelemetry variant exports to its own loopback sink, as in the measured rounds.
  const sink = variant === 'api-key, OTel' ? await startOtlpSink() : undefined;
  const setup = await startSeededGateway(`gateway:prof:${variant}`, sink ? otlpEnv(sink) : {}).catch(
    async (err: unknown) => {
      await sink?.close();
      throw err;
    },
  );
  try {
    const url = mcpUrl(setup.gw, WORKSPACE);
    const token = variant === 'jwt' ? setup.jwt : setup.apiKey;
    await probe(url, token, `profile ${variant}`);
    await runLoad(spec(url, token, options, { durationS: options.warmupS }));
    const { result: r, file } = await profileChild(setup.gw.child, () =>
      runLoad(spec(url, token, options, { durationS: options.profileDurationS }), setup.gw.child.pid),
    );
    printProfile(`tools-list: CPU profile, ${variant}, ${fmt(r.rps)} req/s while profiling`, file);
    // What requests leave for the old generation: each kept request is copied there, then found dead by a full GC.
    const survivors = await survivorsOfChild(setup.gw.child, () =>
      runLoad(spec(url, token, options, { durationS: options.profileDurationS })),
    );
    printSurvivors(`tools-list: survivors, ${variant}`, survivors.file, survivors.result.ok);
  } finally {
    await setup.gw.stop();
    await sink?.close();
  }
}

async function run(options: BenchOptions): Promise<Check[]> {
  heading('tools-list: authenticated tools/list, gateway vs bare Hono');
  const setup = await startSeededGateway('gateway');
  const tmp = mkdtempSync(join(tmpdir(), 'flowgate-bench-base-'));
  let baseline: ChildHandle | undefined;
  // The same gateway with OpenTelemetry on, exporting every span and metric to a loopback OTLP sink.
  let sink: OtlpSink | undefined;
  let otel: Setup | undefined;
  // The same gateway with usage metering off: what metering costs per request.
  let unmetered: Setup | undefined;
  try {
    sink = await startOtlpSink();
    otel = await startSeededGateway('gateway:otel', otlpEnv(sink));
    unmetered = await startSeededGateway('gateway:unmetered', { FLOWGATE_USAGE_METERING: 'off' });
    const unmeteredUrl = mcpUrl(unmetered.gw, WORKSPACE);
    await probe(unmeteredUrl, unmetered.apiKey, 'gateway (API key, usage metering off)');
    const otelUrl = mcpUrl(otel.gw, WORKSPACE);
    await probe(otelUrl, otel.apiKey, 'gateway (API key, OpenTelemetry on)');
    const url = mcpUrl(setup.gw, WORKSPACE);
    const keyText = await probe(url, setup.apiKey, 'gateway (API key)');
    const jwtText = await probe(url, setup.jwt, 'gateway (JWT)');
    if (jwtText.length !== keyText.length) {
      log(`  note: JWT and API-key responses differ in size (${jwtText.length} vs ${keyText.length} bytes)`);
    }
    const responseFile = join(tmp, 'tools-list.json');
    writeFileSync(responseFile, keyText);
    baseline = await spawnTsx({
      label: 'bare-hono',
      script: serverScript('bareHono'),
      env: { BENCH_RESPONSE_FILE: responseFile },
    });
    const baseUrl = String(baseline.ready.url);
    const baseText = await probe(baseUrl, setup.apiKey, 'bare Hono');
    if (baseText.length !== keyText.length)
      throw new Error(`baseline answers ${baseText.length} bytes, gateway ${keyText.length}`);
    const tools = (JSON.parse(keyText) as { result: { tools: unknown[] } }).result.tools.length;
    log(
      `  response: ${keyText.length} bytes, ${tools} tools; c=${options.connections}, pipelining 1, ${options.rounds} rounds × ${options.durationS} s, interleaved`,
    );

    const targets = [
      { name: 'bare Hono (baseline)', spec: spec(baseUrl, setup.apiKey, options), child: baseline },
      { name: 'gateway, API key', spec: spec(url, setup.apiKey, options), child: setup.gw.child },
      { name: 'gateway, JWT ES256', spec: spec(url, setup.jwt, options), child: setup.gw.child },
      { name: 'gateway, API key, OTel', spec: spec(otelUrl, otel.apiKey, options), child: otel.gw.child },
      {
        name: 'gateway, key, no meter',
        spec: spec(unmeteredUrl, unmetered.apiKey, options),
        child: unmetered.gw.child,
      },
    ];
    for (const t of targets) await runLoad({ ...t.spec, durationS: options.warmupS });
    // Each load also records what the server's garbage collector did (bench/lib/gc.ts).
    const gcSamples = new Map<string, GcPerRequest[]>(targets.map((t) => [t.name, []]));
    const contenders: Contender[] = targets.map((t) => ({
      name: t.name,
      run: async () => {
        await t.child.call('gc-start');
        const load = await runLoad(t.spec, t.child.pid);
        const figures = gcFiguresSchema.parse(await t.child.call('gc-stop'));
        gcSamples.get(t.name)?.push(gcPerRequest(figures, load.requests));
        return load;
      },
    }));
    const summaries = await interleave(contenders, options.rounds, (round, name, s) =>
      log(
        `  round ${round}  ${name.padEnd(22)} ${fmt(s.rps).padStart(7)} req/s  p50 ${fmt(s.latencyMs.p50, 2)} ms  p99 ${fmt(s.latencyMs.p99, 2)} ms`,
      ),
    );
    const [base, key, jwt, traced, plain] = contenders.map((c) => summaryOf(summaries, c.name)) as [
      Summary,
      Summary,
      Summary,
      Summary,
      Summary,
    ];
    log();
    printSummaries([base, key, jwt, traced, plain], base.name);
    log();
    log('  garbage collection in each server while it answered (medians over rounds):');
    table(gcRows(gcSamples));
    const meteringRatio = key.rps / plain.rps;
    log(
      `  usage metering on ÷ off (API key): ${fmt(meteringRatio, 3)} (per round ${roundRatios(key, plain)
        .map((r) => fmt(r, 3))
        .join(', ')}); p50 ${fmt(key.p50, 2)} vs ${fmt(plain.p50, 2)} ms`,
    );
    await unmetered.gw.stop();
    unmetered = undefined;
    const otelRatio = traced.rps / key.rps;
    if (sink.exports === 0) throw new Error('the OpenTelemetry gateway exported nothing to the OTLP sink');
    log(
      `  OpenTelemetry on ÷ off (API key): ${fmt(otelRatio, 3)} (per round ${roundRatios(traced, key)
        .map((r) => fmt(r, 3))
        .join(', ')}); ${sink.exports} OTLP exports received`,
    );
    await otel.gw.stop();
    otel = undefined;
    const keyRatio = key.rps / base.rps;
    const jwtRatio = jwt.rps / base.rps;
    const range = (xs: number[]) => `${fmt(Math.min(...xs), 3)}–${fmt(Math.max(...xs), 3)}`;
    log(
      `  per-round ratios: API key ${range(roundRatios(key, base))} (median ${fmt(median(roundRatios(key, base)), 3)}), JWT ${range(roundRatios(jwt, base))} (median ${fmt(median(roundRatios(jwt, base)), 3)})`,
    );

    heading(`tools-list: gateway RSS over ${options.rssRequests.toLocaleString('en-US')} requests (API key)`);
    const gwPid = setup.gw.child.pid;
    // Heap figures need a forced GC; a short load after it lets the heap regrow to its working size, so the
    // GC does not make the RSS "before" look smaller than it is.
    const heapBefore = await setup.gw.child.call<MemoryFigures>('memory', { gc: true });
    await runLoad(spec(url, setup.apiKey, options, { durationS: options.warmupS }));
    const before = readRssKb(gwPid);
    const series: number[] = [];
    const sampler = setInterval(() => series.push(readRssKb(gwPid)), 500);
    const r = await runLoad(spec(url, setup.apiKey, options, { amount: options.rssRequests }), gwPid).finally(
      () => clearInterval(sampler),
    );
    const after = readRssKb(gwPid);
    const heapAfter = await setup.gw.child.call<MemoryFigures>('memory', { gc: true });
    const change = ((after - before) / before) * 100;
    const mb = (kb: number) => fmt(kb / 1024, 1);
    const at = (q: number) => series[Math.min(series.length - 1, Math.floor(q * series.length))] ?? after;
    log(
      `  RSS after warm-up ${mb(before)} MB, after ${r.ok.toLocaleString('en-US')} more requests ${mb(after)} MB: ${change >= 0 ? '+' : ''}${change.toFixed(1)}%  (${fmt(r.rps)} req/s, ${fmt(r.durationS, 1)} s)`,
    );
    log(
      `  RSS during the run: 25% ${mb(at(0.25))} MB, 50% ${mb(at(0.5))} MB, 75% ${mb(at(0.75))} MB, peak ${mb(Math.max(...series, after))} MB`,
    );
    const m = (n: number) => fmt(n / 2 ** 20, 1);
    log(
      `  after a full GC — V8 heap used ${m(heapBefore.heapUsed)} → ${m(heapAfter.heapUsed)} MB, heap reserved ${m(heapBefore.heapTotal)} → ${m(heapAfter.heapTotal)} MB, external ${m(heapBefore.external)} → ${m(heapAfter.external)} MB, RSS ${m(heapBefore.rss)} → ${m(heapAfter.rss)} MB`,
    );

    const checks: Check[] = [
      {
        benchmark: 'tools-list',
        name: 'API key ÷ bare Hono',
        value: fmt(keyRatio, 3),
        target: `≥ ${TARGETS.apiKey}`,
        pass: keyRatio >= TARGETS.apiKey,
      },
      {
        benchmark: 'tools-list',
        name: 'JWT ES256 ÷ bare Hono',
        value: fmt(jwtRatio, 3),
        target: `≥ ${TARGETS.jwt}`,
        pass: jwtRatio >= TARGETS.jwt,
      },
      {
        benchmark: 'tools-list',
        name: 'OpenTelemetry on ÷ off (API key)',
        value: fmt(otelRatio, 3),
        target: `≥ ${TARGETS.otel}`,
        pass: otelRatio >= TARGETS.otel,
      },
      {
        benchmark: 'tools-list',
        name: 'usage metering on ÷ off (API key)',
        value: fmt(meteringRatio, 3),
        target: `≥ ${TARGETS.metering}`,
        pass: meteringRatio >= TARGETS.metering,
      },
      {
        benchmark: 'tools-list',
        name: `RSS change over ${options.rssRequests / 1000}k requests`,
        value: `${change >= 0 ? '+' : ''}${change.toFixed(1)}%`,
        target: `±${TARGETS.rssChangePct}%`,
        pass: Math.abs(change) <= TARGETS.rssChangePct,
      },
    ];
    await baseline.stop();
    baseline = undefined;
    await setup.gw.stop();
    checks.push(...(await idleChecks()));
    if (options.profile) {
      // Kept for inspection under .tmp/ (git-ignored).
      await profileVariant(options, 'api-key');
      await profileVariant(options, 'jwt');
      await profileVariant(options, 'api-key, OTel');
    }
    return checks;
  } finally {
    await baseline?.stop();
    await otel?.gw.stop();
    await unmetered?.gw.stop();
    await sink?.close();
    await setup.gw.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

export const toolsListBench: Benchmark = {
  name: 'tools-list',
  description: 'authenticated tools/list through the gateway vs a bare Hono route; RSS over many requests',
  run,
};
