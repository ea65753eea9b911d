import type { Summary } from './interleave.js';

export interface Check {
  benchmark: string;
  name: string;
  /** Human form of the measured value, e.g. "0.62" or "+3.1%". */
  value: string;
  /** Human form of the target, e.g. "≥ 0.5". */
  target: string;
  pass: boolean;
}

const fmt = (n: number | undefined, digits = 0) =>
  n === undefined || Number.isNaN(n)
    ? '—'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function heading(title: string): void {
  log();
  log(`== ${title} ${'='.repeat(Math.max(0, 72 - title.length))}`);
}

export function table(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows)
    log(`  ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`);
}

/** Medians per contender, with the ratio of each to the baseline's median throughput. */
export function printSummaries(summaries: Summary[], baseline: string): void {
  const base = summaries.find((s) => s.name === baseline);
  const rows = [
    ['contender', 'req/s (median)', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'req/s ratio', 'CPU-cost ratio'],
  ];
  for (const s of summaries) {
    rows.push([
      s.name,
      fmt(s.rps),
      fmt(s.p50, 2),
      fmt(s.p99, 2),
      fmt(s.cpuUsPerReq, 0),
      base ? fmt(s.rps / base.rps, 3) : '—',
      // Baseline CPU per request ÷ this one's: the same ratio seen through CPU time, which drifts far less.
      base?.cpuUsPerReq && s.cpuUsPerReq ? fmt(base.cpuUsPerReq / s.cpuUsPerReq, 3) : '—',
    ]);
  }
  table(rows);
}

export function printChecks(checks: Check[]): void {
  heading('targets');
  const rows = [['benchmark', 'check', 'measured', 'target', 'result']];
  for (const c of checks) rows.push([c.benchmark, c.name, c.value, c.target, c.pass ? 'PASS' : 'FAIL']);
  table(rows);
}

export { fmt };
