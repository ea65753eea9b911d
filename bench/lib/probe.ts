import { z } from 'zod';
import { runJsonChild } from './proc.js';

export const probeSpecSchema = z.object({
  url: z.url(),
  headers: z.record(z.string(), z.string()).default({}),
  durationS: z.number().positive(),
  streams: z
    .array(
      z.object({
        name: z.string(),
        body: z.string(),
        connections: z.number().int().positive().default(1),
        /** Each connection sends at most one request per interval (a paced caller, not a flood). */
        intervalMs: z.number().nonnegative().default(20),
        /** Every answer must be a 200 containing each of these and none of `excludes`. */
        includes: z.array(z.string()).default([]),
        excludes: z.array(z.string()).default([]),
      }),
    )
    .min(1),
});

export type ProbeSpec = z.input<typeof probeSpecSchema>;

export interface ProbeStreamResult {
  name: string;
  requests: number;
  mismatches: number;
  errors: number;
  firstMismatch?: string;
  /** Per-request times measured by the prober (fractional milliseconds). */
  latencyMs: { p50: number; p90: number; p99: number; max: number };
}

export interface ProbeResult {
  streams: ProbeStreamResult[];
}

/**
 * Runs `probe-child.ts` in its own process (never on the event loop of the server it measures) and fails when any
 * answer was an error or not the expected one.
 */
export async function runProbe(spec: ProbeSpec): Promise<ProbeResult> {
  const checked = probeSpecSchema.parse(spec);
  const result = await runJsonChild<ProbeResult>('bench/lib/probe-child.ts', checked, 'prober');
  for (const s of result.streams) {
    if (s.errors > 0 || s.mismatches > 0 || s.requests === 0) {
      throw new Error(
        `${s.name}: ${s.mismatches} unexpected answers and ${s.errors} errors in ${s.requests} requests${s.firstMismatch ? ` (first: ${s.firstMismatch})` : ''}`,
      );
    }
  }
  return result;
}
