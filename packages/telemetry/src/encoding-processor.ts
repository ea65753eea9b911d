/**
 * A batch span processor that encodes sampled spans into their batch's bytes (otlp-traces.ts, `TraceBatch`) and
 * exports the bytes: what waits for the export is a buffer, not span objects.
 *
 * The SDK's batch processor keeps every finished span until its batch leaves (512 spans or 5 s), long enough at a
 * few thousand requests a second to outlive a young-generation collection. Here a span waits only for the end of the
 * event loop's turn, when the spans that ended in it are encoded together (one warm pass instead of one cold one
 * per request). Same settings (`OTEL_BSP_*`) and the same behaviour otherwise: a batch leaves when it is full or
 * when the oldest span in it has waited the schedule delay, one export at a time, spans past the queue size dropped,
 * `forceFlush` and `shutdown` export everything. A sent batch's buffers are reused once the transport is done with
 * them.
 */
import { context, diag, TraceFlags } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { TraceBatch } from './otlp-traces.js';

/** One encoded `ExportTraceServiceRequest` and how many spans it holds. */
export interface EncodedBatch {
  bytes: Uint8Array;
  spans: number;
}

/** Where batches go: `send` calls `done` once a batch succeeded or failed for good (its own retries included). */
export interface BatchTransport {
  send(batch: EncodedBatch, done: (error?: Error) => void): void;
  shutdown(): Promise<void>;
}

const count = (fallback: number) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === undefined || v === '' ? fallback : Number(v)))
    .pipe(z.number().int().nonnegative().catch(fallback));

/** The batch settings from the standard variables (the SDK's defaults when unset or not a whole number). */
export const batchSettingsSchema = z.object({
  OTEL_BSP_SCHEDULE_DELAY: count(5000),
  OTEL_BSP_EXPORT_TIMEOUT: count(30_000),
  OTEL_BSP_MAX_QUEUE_SIZE: count(2048),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: count(512),
});

export interface BatchSettings {
  scheduleDelayMs: number;
  exportTimeoutMs: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
}

export function batchSettingsFromEnv(env: Record<string, string | undefined>): BatchSettings {
  const parsed = batchSettingsSchema.parse(env);
  const maxQueueSize = Math.max(1, parsed.OTEL_BSP_MAX_QUEUE_SIZE);
  return {
    scheduleDelayMs: parsed.OTEL_BSP_SCHEDULE_DELAY,
    exportTimeoutMs: parsed.OTEL_BSP_EXPORT_TIMEOUT,
    maxQueueSize,
    // As the SDK: a batch never holds more than the queue.
    maxExportBatchSize: Math.max(1, Math.min(parsed.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, maxQueueSize)),
  };
}

export class EncodingSpanProcessor implements SpanProcessor {
  private open = new TraceBatch();
  /** Full batches waiting for the export in flight. */
  private readonly full: TraceBatch[] = [];
  /** Exported batches kept for reuse, with their buffers (otlp-traces.ts `TraceBatch`). */
  private readonly spare: TraceBatch[] = [];
  /** Spans ended and not yet encoded (`encodeEnded`). */
  private readonly ended: ReadableSpan[] = [];
  /** Spans ended and not yet exported (the queue `OTEL_BSP_MAX_QUEUE_SIZE` bounds). */
  private queued = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private exporting: Promise<void> | null = null;
  private closed = false;
  private dropped = 0;

  constructor(
    private readonly transport: BatchTransport,
    private readonly settings: BatchSettings,
  ) {}

  onStart(_span: Span): void {}

  onEnd(span: ReadableSpan): void {
    if (this.closed || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.queued >= this.settings.maxQueueSize) {
      if (this.dropped++ === 0) diag.warn('flowgate: span queue full, dropping spans until the next export');
      return;
    }
    this.queued++;
    this.ended.push(span);
    if (this.ended.length === 1) setImmediate(this.encodeEnded);
  }

  /**
   * The spans that ended since the last turn of the event loop, encoded together: one pass over many spans keeps the
   * encoder and its caches warm, where a span encoded alone between two requests' work finds them cold.
   */
  private readonly encodeEnded = (): void => {
    const spans = this.ended;
    for (let i = 0; i < spans.length; i++) {
      this.open.add(spans[i] as ReadableSpan);
      if (this.open.count >= this.settings.maxExportBatchSize) {
        this.full.push(this.open);
        this.open = this.spare.pop() ?? new TraceBatch();
        this.pump();
      }
    }
    spans.length = 0;
    if (this.open.count > 0 && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.closeOpen();
        this.pump();
      }, this.settings.scheduleDelayMs);
      // A pending export never keeps the process alive on its own (shutdown flushes).
      (this.timer as { unref?: () => void }).unref?.();
    }
  };

  forceFlush(): Promise<void> {
    this.closeOpen();
    return this.drain();
  }

  async shutdown(): Promise<void> {
    if (this.closed) return;
    await this.forceFlush();
    this.closed = true;
    await this.transport.shutdown();
  }

  private closeOpen(): void {
    // Spans still waiting for their turn of the event loop go into this batch first.
    if (this.ended.length > 0) this.encodeEnded();
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.open.count === 0) return;
    this.full.push(this.open);
    this.open = this.spare.pop() ?? new TraceBatch();
  }

  /** Every full batch exported, one at a time. */
  private async drain(): Promise<void> {
    while (this.exporting || this.full.length > 0) {
      if (!this.exporting) this.pump();
      await this.exporting;
    }
  }

  private pump(): void {
    if (this.exporting) return;
    const batch = this.full.shift();
    if (!batch) return;
    this.exporting = this.export(batch).then((released) => {
      this.queued -= batch.count;
      // Its bytes are no longer read once the transport is done with them (not after a timeout, while it may still
      // send them); one spare is enough with one export at a time.
      if (released && batch.reset() && this.spare.length < 2) this.spare.push(batch);
      this.exporting = null;
      if (this.dropped > 0) {
        diag.warn(`flowgate: dropped ${this.dropped} spans because the span queue was full`);
        this.dropped = 0;
      }
      this.pump();
    });
  }

  /** Sends one batch; true once the transport is done with its bytes, false when it timed out or never started. */
  private async export(batch: TraceBatch): Promise<boolean> {
    try {
      for (const r of batch.resources()) {
        if (r.asyncAttributesPending) await r.waitForAsyncAttributes?.();
      }
      const encoded = { bytes: batch.encode(), spans: batch.count };
      return await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          diag.warn('flowgate: span export timed out');
          resolve(false);
        }, this.settings.exportTimeoutMs);
        // The transport's own work (an HTTP request) opens no spans of its own.
        context.with(suppressTracing(context.active()), () =>
          this.transport.send(encoded, (error) => {
            clearTimeout(timer);
            if (error) diag.warn(`flowgate: span export failed: ${error.name}`);
            resolve(true);
          }),
        );
      });
    } catch (error) {
      diag.warn(`flowgate: span export failed: ${error instanceof Error ? error.name : 'unknown'}`);
      return false;
    }
  }
}
