import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { attributeSet, recordHttpRequest, recordMcpOperation, startTelemetry } from './index.js';

const afterTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('per-request durations', () => {
  it('are recorded together after the turn of the event loop, and what waits is recorded at shutdown', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const handle = await startTelemetry({ spanProcessors: [], metricReaders: [reader] });
    if (!handle) throw new Error('telemetry did not start');
    const http = attributeSet(['test-http', 'GET', '/x'], () => ({ 'http.route': '/x' }));
    const mcp = attributeSet(['test-mcp', 'tools/list'], () => ({ 'mcp.method.name': 'tools/list' }));
    const count = async (name: string): Promise<number> => {
      const { resourceMetrics } = await reader.collect();
      const metric = resourceMetrics.scopeMetrics
        .flatMap((s) => s.metrics)
        .find((m) => m.descriptor.name === name);
      return ((metric?.dataPoints ?? []) as DataPoint<Histogram>[]).reduce((n, p) => n + p.value.count, 0);
    };

    recordHttpRequest(http, 0.002);
    recordHttpRequest(http, 0.004);
    recordMcpOperation(mcp, 0.001);
    // Not yet: they wait for the end of this turn.
    expect(await count('http.server.request.duration')).toBe(0);
    await afterTurn();
    expect(await count('http.server.request.duration')).toBe(2);
    expect(await count('mcp.server.operation.duration')).toBe(1);

    // Recorded and not yet past their turn when the SDK stops: the final export has them.
    recordHttpRequest(http, 0.003);
    await handle.shutdown();
    const exported = exporter
      .getMetrics()
      .at(-1)
      ?.scopeMetrics.flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === 'http.server.request.duration');
    const points = (exported?.dataPoints ?? []) as DataPoint<Histogram>[];
    expect(points.map((p) => [p.attributes, p.value.count])).toEqual([[{ 'http.route': '/x' }, 3]]);
  });
});
