import type { MeasuredLoad } from './load.js';

export interface Contender {
  name: string;
  run(): Promise<MeasuredLoad>;
}

export interface Summary {
  name: string;
  samples: MeasuredLoad[];
  rps: number;
  p50: number;
  p99: number;
  cpuUsPerReq: number | undefined;
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * The machine's speed drifts by ±30% over minutes, so contenders are never measured in separate blocks:
 * each round runs every contender once, and the starting contender rotates from round to round so none is
 * always measured first (or right after the most expensive one). Figures are medians over rounds.
 */
export async function interleave(
  contenders: Contender[],
  rounds: number,
  onSample?: (round: number, name: string, sample: MeasuredLoad) => void,
): Promise<Map<string, Summary>> {
  const samples = new Map<string, MeasuredLoad[]>(contenders.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < contenders.length; i++) {
      const c = contenders[(r + i) % contenders.length]!;
      const sample = await c.run();
      samples.get(c.name)!.push(sample);
      onSample?.(r + 1, c.name, sample);
    }
  }
  const out = new Map<string, Summary>();
  for (const [name, list] of samples) {
    const cpu = list.map((s) => s.cpuUsPerReq).filter((v): v is number => v !== undefined);
    out.set(name, {
      name,
      samples: list,
      rps: median(list.map((s) => s.rps)),
      p50: median(list.map((s) => s.latencyMs.p50)),
      p99: median(list.map((s) => s.latencyMs.p99)),
      cpuUsPerReq: cpu.length ? median(cpu) : undefined,
    });
  }
  return out;
}

/** Per-round candidate ÷ baseline throughput ratios (each pair measured minutes apart at most). */
export function roundRatios(candidate: Summary, baseline: Summary): number[] {
  return candidate.samples.map((s, i) => s.rps / (baseline.samples[i]?.rps ?? Number.NaN));
}

export function summaryOf(summaries: Map<string, Summary>, name: string): Summary {
  const s = summaries.get(name);
  if (!s) throw new Error(`no measurements for ${name}`);
  return s;
}
