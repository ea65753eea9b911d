/**
 * Load generator, run in its own process so it never shares a CPU budget with the server under test.
 * Input: one JSON argument (LoadSpec). Output: one JSON line on stdout (LoadResult).
 */
import autocannon from 'autocannon';
import { type LoadResult, loadSpecSchema } from './load.js';

const spec = loadSpecSchema.parse(JSON.parse(process.argv[2] ?? '{}'));
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url: spec.url,
  method: spec.method,
  headers: spec.headers,
  ...(spec.body !== undefined ? { body: spec.body } : {}),
  ...(spec.expectBody !== undefined ? { expectBody: spec.expectBody } : {}),
  ...(spec.bodies !== undefined
    ? { requests: spec.bodies.map((body) => ({ method: spec.method, body })) }
    : {}),
  connections: spec.connections,
  pipelining: spec.pipelining,
  ...(spec.overallRate !== undefined ? { overallRate: spec.overallRate } : {}),
  ...(spec.amount !== undefined ? { amount: spec.amount } : { duration: spec.durationS }),
  timeout: 10,
});
const cpu = process.cpuUsage(cpuBefore);
const ok = result['2xx'];
const out: LoadResult = {
  requests: result.requests.total,
  ok,
  non2xx: result.non2xx,
  mismatches: result.mismatches ?? 0,
  errors: result.errors,
  timeouts: result.timeouts,
  durationS: result.duration,
  rps: result.duration > 0 ? ok / result.duration : 0,
  latencyMs: {
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.average,
    max: result.latency.max,
  },
  bytesPerResponse: result.requests.total > 0 ? result.throughput.total / result.requests.total : 0,
  loadCpuMs: (cpu.user + cpu.system) / 1000,
};
process.stdout.write(`${JSON.stringify(out)}\n`);
