import { startTelemetry, type TelemetryHandle } from '@flowgate/telemetry';
import { type Context, context } from '@opentelemetry/api';
import { type DataPoint, MetricReader } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { mcpPost, rpc } from './support/mcp.js';

/**
 * Telemetry on with a sampler that records nothing (OTEL_TRACES_SAMPLER=always_off): a tools/list is counted in the
 * metrics, records no span, and makes no context active (no async-context propagation for a request nobody traces).
 */

class TestMetricReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const WS = 'ws-unsampled';
const spans = new InMemorySpanExporter();
const reader = new TestMetricReader();
let telemetry: TelemetryHandle | null;
let gw: TestGateway;
let key: ServiceAccountKey;
const sampler = process.env.OTEL_TRACES_SAMPLER;

beforeAll(async () => {
  process.env.OTEL_TRACES_SAMPLER = 'always_off';
  telemetry = await startTelemetry({
    spanProcessors: [new SimpleSpanProcessor(spans)],
    metricReaders: [reader],
  });
  gw = await startTestGateway();
  await gw.createWorkspace(WS, 'Unsampled');
  key = await gw.mintKey(WS, ['workspace.full'], 'full');
}, 120_000);

afterAll(async () => {
  await gw?.close();
  await telemetry?.shutdown();
  if (sampler === undefined) delete process.env.OTEL_TRACES_SAMPLER;
  else process.env.OTEL_TRACES_SAMPLER = sampler;
});

async function listsCounted(): Promise<number> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  return resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics.filter((m) => m.descriptor.name === 'mcp.server.operation.duration'))
    .flatMap((m) => m.dataPoints as DataPoint<{ count: number }>[])
    .filter((p) => p.attributes['mcp.method.name'] === 'tools/list')
    .reduce((n, p) => n + p.value.count, 0);
}

describe('OpenTelemetry with an always_off sampler', () => {
  it('counts a tools/list without a span or an active context', async () => {
    const manager = (
      context as unknown as { _getContextManager(): { with(ctx: Context): unknown } }
    )._getContextManager();
    const before = await listsCounted();
    spans.reset();
    const scopes = vi.spyOn(manager, 'with');
    try {
      for (const id of ['a', 'b']) {
        const res = await mcpPost(gw.mcpUrl(WS), {
          token: key.apiKey,
          protocolVersion: '2025-06-18',
          body: rpc('tools/list', {}, id),
        });
        expect(res.status).toBe(200);
        expect((res.json as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
      }
      expect(scopes).not.toHaveBeenCalled();
    } finally {
      scopes.mockRestore();
    }
    expect(spans.getFinishedSpans()).toEqual([]);
    expect((await listsCounted()) - before).toBe(2);
  });
});
