import { z } from 'zod';
import { readCpuMs, runJsonChild } from './proc.js';

export const loadSpecSchema = z.object({
  url: z.url(),
  method: z.enum(['GET', 'POST', 'PUT', 'DELETE']).default('POST'),
  headers: z.record(z.string(), z.string()).default({}),
  body: z.string().optional(),
  /** Several bodies, sent in turn on each connection (a mix of queries); overrides `body`. */
  bodies: z.array(z.string()).min(1).optional(),
  connections: z.number().int().positive().default(50),
  pipelining: z.number().int().positive().default(1),
  /** Fixed duration in seconds, unless `amount` is set. */
  durationS: z.number().positive().default(5),
  amount: z.number().int().positive().optional(),
  /**
   * The body every answer must have (not with `bodies`), checked by the load generator (load-child.ts `sameAnswer`):
   * a 200 carrying a JSON-RPC or tool error instead of the result counts as a mismatch, and a run with mismatches
   * fails like one with errors.
   */
  expectBody: z.string().optional(),
  /**
   * For answers that differ per request (a new run id each time): every answer must contain each of these and none of
   * `expectExcludes`, else it counts as a mismatch like one that is not `expectBody`.
   */
  expectIncludes: z.array(z.string()).optional(),
  expectExcludes: z.array(z.string()).optional(),
  /** Requests per second across all connections (a client paced like a real agent); unpaced when absent. */
  overallRate: z.number().int().positive().optional(),
});

export type LoadSpec = z.input<typeof loadSpecSchema>;

export interface LoadResult {
  requests: number;
  ok: number;
  non2xx: number;
  /** Answers whose body was not `expectBody`. */
  mismatches: number;
  errors: number;
  timeouts: number;
  durationS: number;
  /** Successful responses per second over the whole run. */
  rps: number;
  latencyMs: { p50: number; p99: number; mean: number; max: number };
  bytesPerResponse: number;
  /** CPU the load generator itself spent (user + system, ms): on a small machine it competes with the server. */
  loadCpuMs?: number;
}

export interface MeasuredLoad extends LoadResult {
  /** CPU the server process spent per successful request (µs), when its pid was given. */
  cpuUsPerReq?: number;
}

/** Where a server's CPU time is read from: its pid, or a reader (e.g. the sum over a process tree). */
export type CpuSource = number | { cpuMs(): number };

/**
 * Runs autocannon in a separate process against `spec.url`. Any error or non-2xx answer fails the run: a
 * benchmark of error responses measures the wrong thing. With `serverPid`, also reports the server's CPU time
 * per request (`server`: its pid or a CPU reader), a figure much less sensitive to the machine's drift than throughput.
 */
export async function runLoad(spec: LoadSpec, server?: CpuSource): Promise<MeasuredLoad> {
  const checked = loadSpecSchema.parse(spec);
  const cpu = () =>
    server === undefined ? 0 : typeof server === 'number' ? readCpuMs(server) : server.cpuMs();
  const cpuBefore = cpu();
  const result = await runJsonChild<LoadResult>('bench/lib/load-child.ts', checked, 'load generator');
  if (result.errors > 0 || result.non2xx > 0 || result.mismatches > 0 || result.ok === 0) {
    throw new Error(
      `load against ${checked.url} had ${result.non2xx} non-2xx answers, ${result.mismatches} answers other than the expected body and ${result.errors} errors (${result.timeouts} timeouts) in ${result.requests} requests`,
    );
  }
  if (server === undefined) return result;
  return { ...result, cpuUsPerReq: ((cpu() - cpuBefore) * 1000) / result.ok };
}
