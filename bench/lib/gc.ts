/**
 * What V8's garbage collector did while a load ran, from `v8.GCProfiler` in the server process: bytes allocated,
 * bytes that survived a scavenge into the old generation, and collections by kind. Unlike req/s these figures do not
 * drift with the machine's speed: they say why a server spends CPU on its GC threads (a large set of objects alive
 * across a scavenge is copied, promoted, and then needs a mark-compact to free).
 */
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { z } from 'zod';
import { median } from './interleave.js';
import { fmt } from './report.js';

const spaceSchema = z.object({ spaceName: z.string(), spaceUsedSize: z.number() });
const heapSchema = z.object({
  heapStatistics: z.object({ usedHeapSize: z.number() }),
  heapSpaceStatistics: z.array(spaceSchema),
});
const statSchema = z.object({
  gcType: z.string(),
  cost: z.number(),
  beforeGC: heapSchema,
  afterGC: heapSchema,
});

export interface GcFigures {
  /** Bytes allocated on the V8 heap over the window (young and old generation; not ArrayBuffer contents). */
  allocatedBytes: number;
  /** Bytes scavenges moved from the young to the old generation. */
  promotedBytes: number;
  scavenges: number;
  /** Mark-compacts (incremental or not), the collections that free what was promoted. */
  markCompacts: number;
  /** Main-thread pause of all collections, ms (their concurrent work on other threads is not in it). */
  pauseMs: number;
}

export const gcFiguresSchema = z.object({
  allocatedBytes: z.number(),
  promotedBytes: z.number(),
  scavenges: z.number(),
  markCompacts: z.number(),
  pauseMs: z.number(),
});

const OLD_SPACES = new Set(['old_space', 'large_object_space']);

function oldUsed(h: z.infer<typeof heapSchema>): number {
  let sum = 0;
  for (const s of h.heapSpaceStatistics) if (OLD_SPACES.has(s.spaceName)) sum += s.spaceUsedSize;
  return sum;
}

/** Starts recording collections in this process; `stop()` sums them up. */
export function recordGc(): { stop(): GcFigures } {
  const profiler = new GCProfiler();
  const usedAtStart = getHeapStatistics().used_heap_size;
  profiler.start();
  return {
    stop() {
      const usedAtEnd = getHeapStatistics().used_heap_size;
      const stats = z.array(statSchema).parse(profiler.stop()?.statistics ?? []);
      const figures: GcFigures = {
        allocatedBytes: 0,
        promotedBytes: 0,
        scavenges: 0,
        markCompacts: 0,
        pauseMs: 0,
      };
      let used = usedAtStart;
      for (const s of stats) {
        // What grew since the previous collection ended was allocated (objects are never freed in between).
        figures.allocatedBytes += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - used);
        used = s.afterGC.heapStatistics.usedHeapSize;
        figures.pauseMs += s.cost / 1000;
        if (s.gcType === 'Scavenge' || s.gcType === 'MinorMarkSweep') {
          figures.scavenges++;
          figures.promotedBytes += Math.max(0, oldUsed(s.afterGC) - oldUsed(s.beforeGC));
        } else if (s.gcType === 'MarkSweepCompact') figures.markCompacts++;
      }
      figures.allocatedBytes += Math.max(0, usedAtEnd - used);
      return figures;
    },
  };
}

/** GC figures of one load, per request served. */
export interface GcPerRequest {
  allocatedKb: number;
  promotedKb: number;
  scavengesPer1k: number;
  markCompactsPer1k: number;
  pauseUs: number;
}

export function gcPerRequest(figures: GcFigures, requests: number): GcPerRequest {
  const n = Math.max(1, requests);
  return {
    allocatedKb: figures.allocatedBytes / 1024 / n,
    promotedKb: figures.promotedBytes / 1024 / n,
    scavengesPer1k: (figures.scavenges * 1000) / n,
    markCompactsPer1k: (figures.markCompacts * 1000) / n,
    pauseUs: (figures.pauseMs * 1000) / n,
  };
}

/** Rows of a table: per contender, the median of each figure over its rounds. */
export function gcRows(samples: ReadonlyMap<string, GcPerRequest[]>): string[][] {
  const med = median;
  const rows = [
    [
      'contender',
      'heap KB/req',
      'promoted KB/req',
      'scavenges/1k req',
      'mark-compacts/1k req',
      'GC pause µs/req',
    ],
  ];
  for (const [name, list] of samples) {
    rows.push([
      name,
      fmt(med(list.map((g) => g.allocatedKb)), 1),
      fmt(med(list.map((g) => g.promotedKb)), 2),
      fmt(med(list.map((g) => g.scavengesPer1k)), 2),
      fmt(med(list.map((g) => g.markCompactsPer1k)), 2),
      fmt(med(list.map((g) => g.pauseUs)), 1),
    ]);
  }
  return rows;
}
