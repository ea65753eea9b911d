/**
 * Load generator, run in its own process so it never shares a CPU budget with the server under test.
 * Input: one JSON argument (LoadSpec). Output: one JSON line on stdout (LoadResult).
 */
import autocannon from 'autocannon';
import { type LoadResult, loadSpecSchema } from './load.js';

const spec = loadSpecSchema.parse(JSON.parse(process.argv[2] ?? '{}'));

/**
 * Whether an answer is `expected`. autocannon decodes each chunk of a body on its own, so a multi-byte character
 * split between two chunks (servers that stream, e.g. workerd) arrives as replacement characters: compare the ASCII
 * head and tail exactly and the length within a few characters per possible split, which still tells any error
 * answer (JSON-RPC error, tool error) from the recorded result.
 */
function sameAnswer(expected: string): (answer: string | Buffer | undefined) => boolean {
  let firstWide = -1;
  let lastWide = -1;
  for (let i = 0; i < expected.length; i++) {
    if (expected.charCodeAt(i) <= 0x7f) continue;
    if (firstWide === -1) firstWide = i;
    lastWide = i;
  }
  const head = expected.slice(0, Math.min(256, firstWide === -1 ? expected.length : firstWide));
  const tail = expected.slice(Math.max(lastWide + 1, expected.length - 256));
  // A split character becomes at most 3 replacement characters instead of 1 (or 2 for a surrogate pair), once per chunk.
  const slack = firstWide === -1 ? 0 : 2 * Math.ceil(expected.length / 1024) + 2;
  return (answer) => {
    // autocannon accumulates bodies as strings; anything else is not the answer.
    if (typeof answer !== 'string') return false;
    return (
      Math.abs(answer.length - expected.length) <= slack && answer.startsWith(head) && answer.endsWith(tail)
    );
  };
}
/** Whether an answer contains every one of `includes` and none of `excludes`. */
function containsAll(
  includes: string[],
  excludes: string[],
): (answer: string | Buffer | undefined) => boolean {
  return (answer) =>
    typeof answer === 'string' &&
    includes.every((x) => answer.includes(x)) &&
    !excludes.some((x) => answer.includes(x));
}
const verifyBody =
  spec.expectBody !== undefined
    ? sameAnswer(spec.expectBody)
    : spec.expectIncludes !== undefined || spec.expectExcludes !== undefined
      ? containsAll(spec.expectIncludes ?? [], spec.expectExcludes ?? [])
      : undefined;
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url: spec.url,
  method: spec.method,
  headers: spec.headers,
  ...(spec.body !== undefined ? { body: spec.body } : {}),
  ...(verifyBody !== undefined ? { verifyBody } : {}),
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
