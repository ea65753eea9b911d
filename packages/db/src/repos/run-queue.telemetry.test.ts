import {
  observeQueueDepth,
  startTelemetry,
  type TelemetryHandle,
  traceHeaders,
  withSpan,
} from '@flowgate/telemetry';
import { MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../client.js';
import { runs } from '../schema.js';
import { createTestDb, testRun } from '../testing.js';
import { claimRuns, countClaimable } from './run-queue.js';
import { createRun } from './runs.js';
import { createWorkspace } from './workspaces.js';

/** The queue's telemetry: the starting span stored with a run, runs started, queue depth, lease takeovers. */

class TestMetricReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const WS = 'ws-otel-queue';
const CANARY = 'queuecanaryP4v8Nc2Wq6';
const spans = new InMemorySpanExporter();
const reader = new TestMetricReader();
let telemetry: TelemetryHandle | null;
let h: DbHandle;

beforeAll(async () => {
  telemetry = await startTelemetry({
    spanProcessors: [new SimpleSpanProcessor(spans)],
    metricReaders: [reader],
  });
  h = await createTestDb();
  await createWorkspace(h.db, { id: WS, name: 'otel' });
});

afterAll(async () => {
  await h?.close();
  await telemetry?.shutdown();
});

const newRun = (id: string) => testRun(WS, id, { input: { token: CANARY } });

async function collect(): Promise<ResourceMetrics> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  return resourceMetrics;
}

function values(metrics: ResourceMetrics, name: string): number[] {
  return metrics.scopeMetrics.flatMap((s) =>
    s.metrics
      .filter((m) => m.descriptor.name === name)
      .flatMap((m) => m.dataPoints.map((p) => p.value as number)),
  );
}

describe('run queue telemetry', () => {
  it('stores the starting span with the run and counts starts, queue depth and lease takeovers', async () => {
    const unobserve = observeQueueDepth(() => countClaimable(h.db));
    const started = await withSpan('start', {}, async () => {
      await createRun(h.db, WS, newRun('run_otel_a'));
      return traceHeaders().traceparent;
    });
    expect(started).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [row] = await h.db.select().from(runs).where(eq(runs.id, 'run_otel_a'));
    expect(row?.traceContext).toBe(started);
    // Outside any span nothing is stored.
    await createRun(h.db, WS, newRun('run_otel_b'));
    const [plain] = await h.db.select().from(runs).where(eq(runs.id, 'run_otel_b'));
    expect(plain?.traceContext).toBeNull();

    let metrics = await collect();
    expect(values(metrics, 'flowgate.runs.started')).toEqual([2]);
    expect(values(metrics, 'flowgate.runs.queue.depth')).toEqual([2]);

    const first = await claimRuns(h.db, { owner: 'w-a', leaseMs: 60_000, limit: 2 });
    expect(first.map((r) => r.id).sort()).toEqual(['run_otel_a', 'run_otel_b']);
    metrics = await collect();
    expect(values(metrics, 'flowgate.runs.queue.depth')).toEqual([0]);
    expect(values(metrics, 'flowgate.runs.lease_takeovers')).toEqual([]);

    // One lease lapses: another worker takes that run over.
    await h.db
      .update(runs)
      .set({ leaseExpiresAt: sql`now() - interval '1 second'` })
      .where(eq(runs.id, 'run_otel_a'));
    const second = await claimRuns(h.db, { owner: 'w-b', leaseMs: 60_000, limit: 2 });
    expect(second.map((r) => r.id)).toEqual(['run_otel_a']);
    metrics = await collect();
    expect(values(metrics, 'flowgate.runs.lease_takeovers')).toEqual([1]);
    unobserve();

    // Statements are traced by their text; the parameter values (the run's input) never appear.
    const all = spans.getFinishedSpans();
    const texts = all.map((s) => String(s.attributes['db.query.text'] ?? ''));
    expect(texts.some((t) => t.startsWith('insert into "runs"'))).toBe(true);
    expect(JSON.stringify(all.map((s) => s.attributes))).not.toContain(CANARY);
  });
});
