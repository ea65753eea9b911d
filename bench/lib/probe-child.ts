/**
 * A light, paced load that times every request itself (sub-millisecond, from `process.hrtime`), run in its own process
 * beside a heavy load: what other callers see while the server is busy. autocannon reports whole milliseconds and
 * runs unpaced; this sends each stream's requests at a fixed interval per connection, like an agent would.
 * Input: one JSON argument (ProbeSpec). Output: one JSON line on stdout (ProbeResult).
 */
import { Agent, request } from 'node:http';
import { type ProbeResult, type ProbeStreamResult, probeSpecSchema } from './probe.js';

const spec = probeSpecSchema.parse(JSON.parse(process.argv[2] ?? '{}'));
const target = new URL(spec.url);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function send(agent: Agent, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: { ...spec.headers, 'content-length': Buffer.byteLength(body) },
        timeout: 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = performance.now() + spec.durationS * 1000;

async function stream(s: (typeof spec.streams)[number]): Promise<ProbeStreamResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: s.connections });
  const times: number[] = [];
  let mismatches = 0;
  let errors = 0;
  let firstMismatch: string | undefined;
  const connection = async () => {
    while (performance.now() < until) {
      const started = performance.now();
      const t0 = process.hrtime.bigint();
      try {
        const answer = await send(agent, s.body);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        const ok =
          answer.status === 200 &&
          s.includes.every((x) => answer.text.includes(x)) &&
          !s.excludes.some((x) => answer.text.includes(x));
        if (!ok) {
          mismatches++;
          firstMismatch ??= `${answer.status} ${answer.text.slice(0, 300)}`;
        }
      } catch {
        errors++;
      }
      const left = s.intervalMs - (performance.now() - started);
      if (left > 0) await sleep(left);
    }
  };
  await Promise.all(Array.from({ length: s.connections }, connection));
  agent.destroy();
  times.sort((a, b) => a - b);
  return {
    name: s.name,
    requests: times.length,
    mismatches,
    errors,
    ...(firstMismatch !== undefined ? { firstMismatch } : {}),
    latencyMs: {
      p50: percentile(times, 50),
      p90: percentile(times, 90),
      p99: percentile(times, 99),
      max: times.at(-1) ?? Number.NaN,
    },
  };
}

const out: ProbeResult = { streams: await Promise.all(spec.streams.map(stream)) };
process.stdout.write(`${JSON.stringify(out)}\n`);
