import { ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import {
  type BatchSettings,
  batchSettingsFromEnv,
  type EncodedBatch,
  EncodingSpanProcessor,
} from './encoding-processor.js';
import { startLightSpan, tracerParts } from './light-span.js';
import { encodeTraceExportRequest } from './otlp-traces.js';

/** Finished spans to hand to the processor (recorded once by an in-memory exporter). */
function finishedSpans(count: number, sampled = true) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'flowgate-test' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const parts = tracerParts(provider.getTracer('flowgate'));
  if (!parts) throw new Error('no tracer parts');
  const parent = sampled
    ? ROOT_CONTEXT
    : trace.setSpanContext(ROOT_CONTEXT, {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: 'b7ad6b7169203331',
        traceFlags: TraceFlags.NONE,
        isRemote: true,
      });
  for (let i = 0; i < count; i++) {
    const span = startLightSpan(parts, `span ${i}`, parent, undefined, { index: i });
    span.end();
  }
  return exporter.getFinishedSpans();
}

/** A transport that records batches and answers when told to. */
function recorder() {
  const sent: EncodedBatch[] = [];
  const pending: ((error?: Error) => void)[] = [];
  let shutdowns = 0;
  return {
    sent,
    pending,
    get shutdowns() {
      return shutdowns;
    },
    transport: {
      send(batch: EncodedBatch, done: (error?: Error) => void) {
        sent.push(batch);
        pending.push(done);
      },
      async shutdown() {
        shutdowns++;
      },
    },
    /** Answers every send so far as done. */
    settle() {
      for (const done of pending.splice(0)) done();
    },
  };
}

const settings = (over: Partial<BatchSettings> = {}): BatchSettings => ({
  scheduleDelayMs: 60_000,
  exportTimeoutMs: 60_000,
  maxQueueSize: 100,
  maxExportBatchSize: 2,
  ...over,
});

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the encoding batch processor', () => {
  it('sends a batch once it is full, encoded as the whole request would be, one export at a time', async () => {
    const spans = finishedSpans(5);
    const r = recorder();
    const processor = new EncodingSpanProcessor(r.transport, settings());
    for (const s of spans) processor.onEnd(s);
    await tick();
    expect(r.sent.map((b) => b.spans)).toEqual([2]);
    expect(
      Buffer.from(r.sent[0]?.bytes ?? []).equals(Buffer.from(encodeTraceExportRequest(spans.slice(0, 2)))),
    ).toBe(true);
    r.settle();
    await tick();
    expect(r.sent.map((b) => b.spans)).toEqual([2, 2]);
    const flushed = processor.forceFlush();
    r.settle();
    await tick();
    r.settle();
    await flushed;
    expect(r.sent.map((b) => b.spans)).toEqual([2, 2, 1]);
    expect(
      Buffer.from(r.sent[2]?.bytes ?? []).equals(Buffer.from(encodeTraceExportRequest(spans.slice(4)))),
    ).toBe(true);
  });

  it('sends what waited the schedule delay without a full batch', async () => {
    const r = recorder();
    const processor = new EncodingSpanProcessor(
      r.transport,
      settings({ scheduleDelayMs: 20, maxExportBatchSize: 50 }),
    );
    for (const s of finishedSpans(3)) processor.onEnd(s);
    expect(r.sent).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(r.sent.map((b) => b.spans)).toEqual([3]);
    r.settle();
    await processor.shutdown();
  });

  it('skips spans that are not sampled', async () => {
    const r = recorder();
    const processor = new EncodingSpanProcessor(r.transport, settings());
    for (const s of finishedSpans(3, false)) processor.onEnd(s);
    await processor.forceFlush();
    expect(r.sent).toHaveLength(0);
  });

  it('drops spans past the queue size while exports are slow, and takes them again once they leave', async () => {
    const r = recorder();
    const processor = new EncodingSpanProcessor(r.transport, settings({ maxQueueSize: 4 }));
    for (const s of finishedSpans(10)) processor.onEnd(s);
    await tick();
    // Two batches of two in the queue (one sending), the other six dropped.
    expect(r.sent.map((b) => b.spans)).toEqual([2]);
    r.settle();
    await tick();
    r.settle();
    await tick();
    expect(r.sent.map((b) => b.spans)).toEqual([2, 2]);
    for (const s of finishedSpans(2)) processor.onEnd(s);
    await tick();
    expect(r.sent.map((b) => b.spans)).toEqual([2, 2, 2]);
    r.settle();
    await processor.shutdown();
  });

  it('flushes on shutdown, stops the transport, and takes nothing after', async () => {
    const r = recorder();
    const processor = new EncodingSpanProcessor(r.transport, settings({ maxExportBatchSize: 10 }));
    for (const s of finishedSpans(3)) processor.onEnd(s);
    const stopping = processor.shutdown();
    await tick();
    r.settle();
    await stopping;
    expect(r.sent.map((b) => b.spans)).toEqual([3]);
    expect(r.shutdowns).toBe(1);
    for (const s of finishedSpans(3)) processor.onEnd(s);
    await processor.forceFlush();
    expect(r.sent).toHaveLength(1);
  });

  it("reuses a sent batch's buffer only once the transport is done with it, never after a timeout", async () => {
    const r = recorder();
    const processor = new EncodingSpanProcessor(r.transport, settings({ exportTimeoutMs: 20 }));
    const timedOut = finishedSpans(2);
    for (const s of timedOut) processor.onEnd(s);
    await tick();
    // Never answered in time: the transport may still be sending these bytes.
    await new Promise((resolve) => setTimeout(resolve, 60));
    for (const s of finishedSpans(2)) processor.onEnd(s);
    await tick();
    expect(r.sent).toHaveLength(2);
    r.settle();
    await tick();
    // The second batch was released: after the batch that was open meanwhile, the next one fills its buffer again.
    for (const s of finishedSpans(4)) processor.onEnd(s);
    await tick();
    r.settle();
    await tick();
    expect(r.sent).toHaveLength(4);
    const buffers = r.sent.map((b) => b.bytes.buffer);
    expect(buffers[3]).toBe(buffers[1]);
    expect(new Set(buffers.slice(0, 3)).size).toBe(3);
    // The timed-out batch's bytes were left alone.
    expect(Buffer.from(r.sent[0]?.bytes ?? []).equals(Buffer.from(encodeTraceExportRequest(timedOut)))).toBe(
      true,
    );
    await processor.shutdown();
  });

  it('goes on after a failed or timed-out export', async () => {
    const r = recorder();
    const processor = new EncodingSpanProcessor(r.transport, settings({ exportTimeoutMs: 20 }));
    for (const s of finishedSpans(4)) processor.onEnd(s);
    await tick();
    r.pending.shift()?.(new Error('collector down'));
    await tick();
    expect(r.sent).toHaveLength(2);
    // The second never answers: the timeout lets the processor move on.
    for (const s of finishedSpans(2)) processor.onEnd(s);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(r.sent).toHaveLength(3);
    r.settle();
  });
});

describe('batch settings', () => {
  it('read OTEL_BSP_* with the SDK defaults, and never batch more than the queue holds', () => {
    expect(batchSettingsFromEnv({})).toEqual({
      scheduleDelayMs: 5000,
      exportTimeoutMs: 30_000,
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
    });
    expect(
      batchSettingsFromEnv({
        OTEL_BSP_SCHEDULE_DELAY: '200',
        OTEL_BSP_EXPORT_TIMEOUT: ' 1000 ',
        OTEL_BSP_MAX_QUEUE_SIZE: '100',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '500',
      }),
    ).toEqual({ scheduleDelayMs: 200, exportTimeoutMs: 1000, maxQueueSize: 100, maxExportBatchSize: 100 });
    expect(
      batchSettingsFromEnv({ OTEL_BSP_SCHEDULE_DELAY: 'soon', OTEL_BSP_MAX_QUEUE_SIZE: '-3' }),
    ).toMatchObject({
      scheduleDelayMs: 5000,
      maxQueueSize: 2048,
    });
  });
});
