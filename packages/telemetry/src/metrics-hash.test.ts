import { type DataPoint, type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';

class TestMetricReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** A frozen attribute set that counts how often its one value is read. */
function countedSet(value: string): { set: Record<string, string>; reads: () => number } {
  let reads = 0;
  const set = Object.freeze(
    Object.defineProperty({}, 'mcp.method.name', {
      enumerable: true,
      get: () => {
        reads++;
        return value;
      },
    }),
  ) as Record<string, string>;
  return { set, reads: () => reads };
}

async function histogramPoints(reader: TestMetricReader): Promise<DataPoint<Histogram>[]> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics[0]?.metrics[0];
  return (metric?.dataPoints ?? []) as DataPoint<Histogram>[];
}

// patches/@opentelemetry__sdk-metrics@2.12.0.patch: the SDK hashes a measurement's attributes (a sort and a
// JSON.stringify) on every record; a frozen set of primitives is hashed once and known by identity after.
describe('metric attribute hashing (patched SDK)', () => {
  it('hashes a shared frozen set once, however often it is recorded, and aggregates as before', async () => {
    const reader = new TestMetricReader();
    const provider = new MeterProvider({ readers: [reader] });
    const histogram = provider.getMeter('t').createHistogram('d');
    const list = countedSet('tools/list');
    histogram.record(1, list.set);
    const afterFirst = list.reads();
    expect(afterFirst).toBeGreaterThan(0);
    for (let i = 0; i < 99; i++) histogram.record(1, list.set);
    expect(list.reads()).toBe(afterFirst);

    const points = await histogramPoints(reader);
    expect(points).toHaveLength(1);
    expect(points[0]?.attributes).toEqual({ 'mcp.method.name': 'tools/list' });
    expect(points[0]?.value.count).toBe(100);
    await provider.shutdown();
  });

  it('hashes sets that can change by value on every record', async () => {
    const reader = new TestMetricReader();
    const provider = new MeterProvider({ readers: [reader] });
    const histogram = provider.getMeter('t').createHistogram('d');
    const open: Record<string, string | string[]> = { 'mcp.method.name': 'ping' };
    histogram.record(1, open);
    open['mcp.method.name'] = 'tools/list';
    histogram.record(1, open);
    // Frozen, but holding an array that can still change: not kept by identity either.
    const tags = ['a'];
    const withArray = Object.freeze({ tags });
    histogram.record(1, withArray);
    tags.push('b');
    histogram.record(1, withArray);

    const points = await histogramPoints(reader);
    const counts = points.map((p) => [Object.keys(p.attributes).join(), p.value.count]);
    // Two hashes for the mutable set (ping, then tools/list) and two for the array's two states: four points.
    expect(counts.sort()).toEqual([
      ['mcp.method.name', 1],
      ['mcp.method.name', 1],
      ['tags', 1],
      ['tags', 1],
    ]);
    await provider.shutdown();
  });
});
