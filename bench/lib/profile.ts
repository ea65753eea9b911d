import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { type ChildHandle, ROOT } from './proc.js';
import { fmt, heading, log } from './report.js';

const profileSchema = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
      children: z.array(z.number()).optional(),
    }),
  ),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
});

export interface FrameCost {
  frame: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Time spent in the frame itself, by function. */
  self: FrameCost[];
  /** Time spent in the frame or anything it called, by function (recursion counted once per sample). */
  inclusive: FrameCost[];
  /** Self time grouped by where the code lives: a package, node internals, GC, idle. */
  areas: FrameCost[];
}

function shortUrl(url: string): string {
  if (!url) return '';
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/(.+)$/.exec(url);
  if (pnpm) return pnpm[1]!;
  return url.replace(`file://${ROOT}/`, '').replace(/^file:\/\//, '');
}

function area(functionName: string, url: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pnpm) return pnpm[1]!;
  const ws = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (ws) return `@flowgate/${ws[2]}`;
  return shortUrl(url);
}

/** Reads a `.cpuprofile` written by `node --cpu-prof` and ranks where the time went. */
export function summariseProfile(file: string, top = 15): ProfileSummary {
  const p = profileSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const key = (id: number) => {
    const f = byId.get(id)!.callFrame;
    const where = shortUrl(f.url);
    return `${f.functionName || '(anonymous)'}${where ? ` ${where}:${f.lineNumber + 1}` : ''}`;
  };
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  const areas = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    total += dt;
    const f = byId.get(id)!.callFrame;
    self.set(key(id), (self.get(key(id)) ?? 0) + dt);
    const a = area(f.functionName, f.url);
    areas.set(a, (areas.get(a) ?? 0) + dt);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key(cur);
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + dt);
    }
  });
  const rank = (m: Map<string, number>, skip?: (k: string) => boolean) =>
    [...m.entries()]
      .filter(([k]) => !skip?.(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([frame, ms]) => ({ frame, ms, share: total ? ms / total : 0 }));
  return {
    totalMs: total,
    self: rank(self),
    // The root and the event-loop plumbing trivially include everything.
    inclusive: rank(
      incl,
      (k) => k.startsWith('(root)') || k.startsWith('(program)') || k.startsWith('(idle)'),
    ),
    areas: rank(areas),
  };
}

/** Prints a profile's summary: self time by area, top frames by self and by inclusive time. */
export function printProfile(title: string, file: string): void {
  const s = summariseProfile(file);
  heading(`${title} (${fmt(s.totalMs)} ms sampled)`);
  log('  self time by area:');
  for (const a of s.areas) log(`    ${(a.share * 100).toFixed(1).padStart(5)}%  ${a.frame}`);
  log('  top frames by self time:');
  for (const f of s.self) log(`    ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.frame}`);
  log('  top frames by inclusive time:');
  for (const f of s.inclusive) log(`    ${(f.share * 100).toFixed(1).padStart(5)}%  ${f.frame}`);
  log(`  profile (open in Chrome DevTools or speedscope): ${file}`);
}

/**
 * A CPU profile of this process while `work` runs: for benchmarks whose gateway runs in the bench process (its
 * load generator is another process, so the profile is the gateway's). Written under .tmp/bench/profiles.
 */
export async function profileThisProcess<T>(
  label: string,
  work: () => Promise<T>,
): Promise<{ result: T; file: string }> {
  const dir = join(ROOT, '.tmp', 'bench', 'profiles');
  mkdirSync(dir, { recursive: true });
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const result = await work();
    const { profile } = await session.post('Profiler.stop');
    const file = join(dir, `${label}-${process.pid}-${Date.now()}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    return { result, file };
  } finally {
    session.disconnect();
  }
}

/**
 * A CPU profile of a server child (its `serveControl`) while `work` runs, so start-up stays out of it. Written under
 * .tmp/bench/profiles.
 */
export async function profileChild<T>(
  child: ChildHandle,
  work: () => Promise<T>,
): Promise<{ result: T; file: string }> {
  return recordChild(child, 'profile-start', {}, 'profile-stop', work);
}

/** Runs `work` between a start and a stop command of a server child; the stop writes a file under .tmp/bench/profiles. */
async function recordChild<T>(
  child: ChildHandle,
  start: string,
  startArgs: Record<string, unknown>,
  stop: string,
  work: () => Promise<T>,
): Promise<{ result: T; file: string }> {
  const dir = join(ROOT, '.tmp', 'bench', 'profiles');
  mkdirSync(dir, { recursive: true });
  await child.call(start, startArgs);
  const result = await work();
  const { file } = await child.call<{ file: string }>(stop, { dir });
  return { result, file };
}

const heapProfileSchema = z.object({ head: z.unknown() });
interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}
const heapNodeSchema: z.ZodType<HeapNode> = z.lazy(() =>
  z.object({
    callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
    selfSize: z.number(),
    children: z.array(heapNodeSchema),
  }),
);

/**
 * A sampling heap profile of a server child while `work` runs, keeping only objects that outlived a young-generation
 * collection (promoted, or still alive at the end): what a request should not leave behind. Written under
 * .tmp/bench/profiles.
 */
export async function survivorsOfChild<T>(
  child: ChildHandle,
  work: () => Promise<T>,
): Promise<{ result: T; file: string }> {
  return recordChild(
    child,
    'heap-sample-start',
    { major: true, minor: false, intervalBytes: 4096 },
    'heap-sample-stop',
    work,
  );
}

/** The allocation sites (a function and its caller) of the sampled survivors, per request served. */
export function printSurvivors(title: string, file: string, requests: number, top = 12): void {
  const head = heapNodeSchema.parse(heapProfileSchema.parse(JSON.parse(readFileSync(file, 'utf8'))).head);
  const bySite = new Map<string, number>();
  const frame = (n: HeapNode) => {
    const where = shortUrl(n.callFrame.url);
    return `${n.callFrame.functionName || '(anonymous)'}${where ? ` ${where}:${n.callFrame.lineNumber + 1}` : ''}`;
  };
  let total = 0;
  const walk = (n: HeapNode, caller: string | null) => {
    if (n.selfSize > 0) {
      const site = caller ? `${frame(n)} < ${caller}` : frame(n);
      bySite.set(site, (bySite.get(site) ?? 0) + n.selfSize);
      total += n.selfSize;
    }
    for (const c of n.children) walk(c, frame(n));
  };
  walk(head, null);
  const perRequest = (bytes: number) => bytes / 1024 / Math.max(1, requests);
  heading(`${title} (${fmt(perRequest(total), 2)} KB per request outlived a young collection)`);
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top))
    log(`    ${fmt(perRequest(bytes), 3).padStart(7)} KB/req  ${site}`);
  log(`  heap profile (open in Chrome DevTools): ${file}`);
}
