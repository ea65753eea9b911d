/**
 * Issue 12's abuse figures: one key flooding blocked `tools/call`s and a stream of made-up `fgk_` keys from other
 * addresses, beside a normal client's `tools/list` measured quiet and then under the flood, in the same run. Also
 * audit growth per minute during the flood. The gateway runs with its default limits, behind one trusted proxy
 * hop so each party can have its own address (X-Forwarded-For), as it would in production.
 */
import { randomBytes } from 'node:crypto';
import type { Benchmark, BenchOptions } from './lib/bench.js';
import {
  type GatewayChild,
  mcpCall,
  mcpHeaders,
  mcpUrl,
  seedWorkspace,
  startGatewayChild,
} from './lib/gateway.js';
import { median } from './lib/interleave.js';
import { type MeasuredLoad, runLoad } from './lib/load.js';
import { type Check, fmt, heading, log } from './lib/report.js';

const WORKSPACE = 'ws-abuse';
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
const BLOCKED = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'create_flow_draft', arguments: { padding: 'x'.repeat(6_000) } },
});
const TARGETS = { latencyRatio: 2 };
const FLOOD_WORKERS = 32;

async function mintKey(gw: GatewayChild, capabilities: string[]): Promise<string> {
  const sa = await gw.admin(
    'POST',
    `/api/workspaces/${WORKSPACE}/service-accounts`,
    { name: 'flooder', capabilities },
    201,
  );
  const created = await gw.admin(
    'POST',
    `/api/workspaces/${WORKSPACE}/service-accounts/${String(sa.serviceAccountId)}/keys`,
    {},
    201,
  );
  return (created.key as { apiKey: string }).apiKey;
}

/** Audit rows and the calls they stand for (a row's `count`), read through the admin API. */
async function auditTotals(gw: GatewayChild): Promise<{ rows: number; calls: number }> {
  let rows = 0;
  let calls = 0;
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await gw.admin('GET', `/api/workspaces/${WORKSPACE}/audit?limit=200${q}`, undefined, 200);
    const items = page.items as Array<{ count?: number }>;
    rows += items.length;
    calls += items.reduce((n, i) => n + (i.count ?? 1), 0);
    cursor = (page.nextCursor as string | null) ?? null;
  } while (cursor);
  return { rows, calls };
}

/** Floods until `stop` resolves; returns answers by status. */
async function flood(url: string, flooderKey: string, stop: Promise<void>): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let done = false;
  void stop.then(() => {
    done = true;
  });
  const worker = async (i: number) => {
    while (!done) {
      const unknownKey = i % 2 === 1;
      const token = unknownKey
        ? `fgk_${randomBytes(12).toString('hex').slice(0, 22)}_${randomBytes(32).toString('hex').slice(0, 43)}`
        : flooderKey;
      const headers = { ...mcpHeaders(token), 'x-forwarded-for': `198.51.100.${(i % 200) + 1}` };
      try {
        const res = await fetch(url, { method: 'POST', headers, body: unknownKey ? LIST : BLOCKED });
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      } catch {
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: FLOOD_WORKERS }, (_, i) => worker(i)));
  return statuses;
}

export const abuseBench: Benchmark = {
  name: 'abuse',
  description: 'normal client p50/p99 quiet vs under a blocked-call and unknown-key flood; audit growth',
  async run(options: BenchOptions): Promise<Check[]> {
    heading('abuse: a flood beside a normal client');
    // The deployment's default limits (the other benchmarks raise them): the flood must meet the real buckets.
    const gw = await startGatewayChild({
      label: 'gateway:abuse',
      env: {
        FLOWGATE_TRUST_PROXY: '1',
        FLOWGATE_RATE_LIMIT_KEY_PER_MIN: '1200',
        FLOWGATE_RATE_LIMIT_IP_PER_MIN: '6000',
      },
    });
    try {
      const normalKey = await seedWorkspace(gw, WORKSPACE, ['workspace.full']);
      const flooderKey = await mintKey(gw, ['feedback.send']);
      const url = mcpUrl(gw, WORKSPACE);
      const normalHeaders = { ...mcpHeaders(normalKey), 'x-forwarded-for': '192.0.2.10' };
      const probe = await mcpCall(url, normalHeaders, LIST);
      if (probe.status !== 200)
        throw new Error(`normal client probe answered HTTP ${probe.status}: ${probe.text}`);
      // One connection paced at 15 req/s: a busy agent, yet inside its own key limit (1,200/min refills 20/s).
      const normal = (durationS: number) =>
        runLoad(
          {
            url,
            method: 'POST',
            headers: normalHeaders,
            body: LIST,
            connections: 1,
            durationS,
            overallRate: 15,
          },
          gw.child.pid,
        );

      await normal(options.warmupS);
      const quiet: MeasuredLoad[] = [];
      const loud: MeasuredLoad[] = [];
      let floodStatuses = new Map<number, number>();
      let auditRowsPerMin = 0;
      let auditCallsPerMin = 0;
      const windowS = options.durationS;
      for (let r = 0; r < options.rounds; r++) {
        quiet.push(await normal(windowS));
        const before = await auditTotals(gw);
        let release = () => {};
        const stop = new Promise<void>((resolve) => {
          release = resolve;
        });
        const started = Date.now();
        const flooding = flood(url, flooderKey, stop);
        loud.push(await normal(windowS));
        release();
        floodStatuses = await flooding;
        const minutes = (Date.now() - started) / 60_000;
        // Give the audit queue its flush interval before counting.
        await new Promise((resolve) => setTimeout(resolve, 600));
        const after = await auditTotals(gw);
        auditRowsPerMin = Math.max(auditRowsPerMin, (after.rows - before.rows) / minutes);
        auditCallsPerMin = Math.max(auditCallsPerMin, (after.calls - before.calls) / minutes);
      }
      const p = (loads: MeasuredLoad[], k: 'p50' | 'p99') => median(loads.map((l) => l.latencyMs[k]));
      const q50 = p(quiet, 'p50');
      const q99 = p(quiet, 'p99');
      const l50 = p(loud, 'p50');
      const l99 = p(loud, 'p99');
      const floodTotal = [...floodStatuses.values()].reduce((a, b) => a + b, 0);
      log(`  normal client quiet    p50 ${fmt(q50, 1)} ms  p99 ${fmt(q99, 1)} ms`);
      log(`  normal client flooded  p50 ${fmt(l50, 1)} ms  p99 ${fmt(l99, 1)} ms`);
      log(
        `  flood answers (last round): ${floodTotal} — ${[...floodStatuses.entries()].map(([s, n]) => `${s}: ${n}`).join(', ')}`,
      );
      log(
        `  audit growth under flood: ${fmt(auditRowsPerMin, 0)} rows/min standing for ${fmt(auditCallsPerMin, 0)} calls/min`,
      );
      // Autocannon reports whole milliseconds; a quiet 0–1 ms figure is floored at 1 ms so the ratio means something.
      const ratio = (loudMs: number, quietMs: number) => loudMs / Math.max(1, quietMs);
      return [
        {
          benchmark: 'abuse',
          name: 'normal p50 flooded / quiet',
          value: fmt(ratio(l50, q50), 2),
          target: `≤ ${TARGETS.latencyRatio}`,
          pass: ratio(l50, q50) <= TARGETS.latencyRatio,
        },
        {
          benchmark: 'abuse',
          name: 'normal p99 flooded / quiet',
          value: fmt(ratio(l99, q99), 2),
          target: `≤ ${TARGETS.latencyRatio}`,
          pass: ratio(l99, q99) <= TARGETS.latencyRatio,
        },
        {
          benchmark: 'abuse',
          name: 'audit rows per minute under flood',
          value: fmt(auditRowsPerMin, 0),
          // At most one row per refused-call shape per collapse window, plus what the key limit lets through.
          target: '≤ 1,200 (the key limit)',
          pass: auditRowsPerMin <= 1_200,
        },
      ];
    } finally {
      await gw.stop();
    }
  },
};
