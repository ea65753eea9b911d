import { createContextKey, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  activeRecordingSpan,
  attributeSet,
  contextWithSpan,
  extractContext,
  recordStep,
  SpanKind,
  startDetachedSpan,
  startTelemetry,
  type TelemetryHandle,
  withSpan,
} from './index.js';

const spans = new InMemorySpanExporter();
let handle: TelemetryHandle | null;

beforeAll(async () => {
  handle = await startTelemetry({ spanProcessors: [new SimpleSpanProcessor(spans)], metricReaders: [] });
});
afterAll(async () => {
  await handle?.shutdown();
});
beforeEach(() => spans.reset());

/** The finished spans once there are `count` (the exporter is called once the resource's attributes settle). */
async function finished(count: number): Promise<ReadableSpan[]> {
  await vi.waitFor(() => expect(spans.getFinishedSpans()).toHaveLength(count));
  return spans.getFinishedSpans();
}

describe('leaf steps (activate: false)', () => {
  it('are an event on the recording span around them, with their attributes and duration', async () => {
    await withSpan('request', { kind: SpanKind.SERVER }, async () => {
      const got = await withSpan('authenticate', { activate: false, attributes: { a: 1 } }, async (leaf) => {
        leaf?.setAttribute('flowgate.principal.kind', 'service_account');
        return 'principal';
      });
      expect(got).toBe('principal');
    });
    const all = await finished(1);
    expect(all.map((s) => s.name)).toEqual(['request']);
    const [request] = all;
    expect(request?.events.map((e) => e.name)).toEqual(['authenticate']);
    const event = request?.events[0];
    expect(event?.attributes).toEqual({
      a: 1,
      'flowgate.principal.kind': 'service_account',
      'flowgate.duration_ms': event?.attributes?.['flowgate.duration_ms'],
    });
    expect(event?.attributes?.['flowgate.duration_ms']).toBeGreaterThanOrEqual(0);
  });

  it('carry error.type on their event when they throw', async () => {
    const refused = Object.assign(new Error('no'), { code: 'invalid_token' });
    await expect(
      withSpan('request', {}, () =>
        withSpan('authenticate', { activate: false }, async () => {
          throw refused;
        }),
      ),
    ).rejects.toBe(refused);
    const [request] = await finished(1);
    expect(request?.events[0]?.attributes?.['error.type']).toBe('invalid_token');
    // The request span itself is failed by withSpan's own catch, as any span a throw passes through.
    expect(request?.attributes['error.type']).toBe('invalid_token');
    expect(request?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('stay a span of their own with fold: false, never the active context', async () => {
    let activeInside: string | undefined;
    await withSpan('tool', {}, async () => {
      await withSpan('SELECT', { activate: false, fold: false }, async () => {
        activeInside = activeRecordingSpan()?.spanContext().spanId;
      });
    });
    const [select, tool] = await finished(2);
    expect(select?.name).toBe('SELECT');
    expect(select?.parentSpanContext?.spanId).toBe(tool?.spanContext().spanId);
    expect(tool?.events).toEqual([]);
    // What ran inside saw the tool's span, not the statement's.
    expect(activeInside).toBe(tool?.spanContext().spanId);
  });

  it('are a span of their own without a recording span around them', async () => {
    await withSpan('alone', { activate: false }, async (span) => {
      span?.setAttribute('k', 'v');
    });
    const all = await finished(1);
    expect(all.map((s) => [s.name, s.attributes.k, s.events.length])).toEqual([['alone', 'v', 0]]);
  });
});

describe('contextWithSpan and recordStep', () => {
  it('hand the span to what reads the context, and record a step as an event on it', async () => {
    const span = startDetachedSpan('request', { parent: ROOT_CONTEXT });
    if (!span) throw new Error('no span');
    const key = createContextKey('flowgate.test');
    const ctx = contextWithSpan(ROOT_CONTEXT, span);
    expect(trace.getSpan(ctx)).toBe(span);
    // Its own light context (the API's reads the span under the same key), not a copy of the parent's entries.
    expect(Object.getPrototypeOf(ctx)).not.toBe(Object.getPrototypeOf(trace.setSpan(ROOT_CONTEXT, span)));
    // Any change is the API's own context, the span kept in it.
    const valued = ctx.setValue(key, 42);
    expect(valued.getValue(key)).toBe(42);
    expect(trace.getSpan(valued)).toBe(span);
    expect(trace.getSpan(ctx.deleteValue(key))).toBe(span);
    expect(trace.getSpan(trace.deleteSpan(ctx))).toBeUndefined();
    // A child opened under it continues its trace.
    await withSpan('child', { parent: ctx }, async () => {});
    const startedAt = performance.now() - 5;
    recordStep(span, 'authenticate', { 'flowgate.principal.kind': 'service_account' }, startedAt);
    span.end();
    const [child, request] = await finished(2);
    expect(child?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId);
    const event = request?.events.find((e) => e.name === 'authenticate');
    expect(event?.attributes?.['flowgate.principal.kind']).toBe('service_account');
    expect(event?.attributes?.['flowgate.duration_ms']).toBeGreaterThanOrEqual(5);
  });
});

describe('extractContext', () => {
  it('continues an incoming traceparent and starts a new trace without one', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const headers: Record<string, string> = { traceparent: `00-${traceId}-00f067aa0ba902b7-01` };
    await withSpan('continued', { parent: extractContext({ header: (n) => headers[n] }) }, async () => {});
    await withSpan('new', { parent: extractContext({ header: () => undefined }) }, async () => {});
    const [continued, fresh] = await finished(2);
    expect(continued?.spanContext().traceId).toBe(traceId);
    expect(continued?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(fresh?.spanContext().traceId).not.toBe(traceId);
    expect(fresh?.parentSpanContext).toBeUndefined();
  });

  it('never continues a context left active in the process', async () => {
    await withSpan('active', {}, async () => {
      await withSpan('request', { parent: extractContext({ header: () => undefined }) }, async () => {});
    });
    const [request, active] = await finished(2);
    expect(request?.name).toBe('request');
    expect(request?.parentSpanContext).toBeUndefined();
    expect(request?.spanContext().traceId).not.toBe(active?.spanContext().traceId);
  });
});

describe('attributeSet', () => {
  it('builds a set once per key and hands back the same frozen object', () => {
    let built = 0;
    const make = () => {
      built++;
      return { 'http.route': '/x' };
    };
    const first = attributeSet(['test', '/x'], make);
    const second = attributeSet(['test', '/x'], make);
    expect(second).toBe(first);
    expect(built).toBe(1);
    expect(Object.isFrozen(first)).toBe(true);
    expect(first).toEqual({ 'http.route': '/x' });
  });

  it('tells keys apart part by part: another part, a missing one or null is another set', () => {
    const sets = [
      attributeSet(['test', 'GET', 200, '/y'], () => ({ n: 1 })),
      attributeSet(['test', 'GET', 404, '/y'], () => ({ n: 2 })),
      attributeSet(['test', 'GET', 200], () => ({ n: 3 })),
      attributeSet(['test', 'GET', null, '/y'], () => ({ n: 4 })),
      attributeSet(['test', 'GET', '200', '/y'], () => ({ n: 5 })),
    ];
    expect(sets.map((s) => s.n)).toEqual([1, 2, 3, 4, 5]);
    expect(attributeSet(['test', 'GET', 200, '/y'], () => ({ n: 6 }))).toBe(sets[0]);
    expect(attributeSet(['test', 'GET', 200], () => ({ n: 7 }))).toBe(sets[2]);
  });
});
