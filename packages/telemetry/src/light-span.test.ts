import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  type Sampler,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { LightSpan, startLightSpan, tracerParts } from './light-span.js';
import { encodeTraceExportRequest } from './otlp-traces.js';

function setup(options: { sampler?: Sampler; valueLength?: number } = {}) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'flowgate-test' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    ...(options.sampler ? { sampler: options.sampler } : {}),
    ...(options.valueLength ? { spanLimits: { attributeValueLengthLimit: options.valueLength } } : {}),
  });
  const parts = tracerParts(provider.getTracer('flowgate', '1.0.0'));
  if (!parts) throw new Error('the SDK tracer no longer has the fields light spans are recorded with');
  return { exporter, parts };
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

describe('light spans', () => {
  it('are recorded with the SDK tracer of the pinned version (else every span would quietly be the slower SDK one)', () => {
    const { parts } = setup();
    expect(typeof parts.sampler.shouldSample).toBe('function');
    expect(parts.scope).toMatchObject({ name: 'flowgate', version: '1.0.0' });
    expect(parts.resource.attributes['service.name']).toBe('flowgate-test');
  });

  it('reach the span processors as finished spans with every field an exporter reads', () => {
    const { exporter, parts } = setup();
    const span = startLightSpan(parts, 'POST', ROOT_CONTEXT, SpanKind.SERVER, {
      'http.request.method': 'POST',
    });
    expect(span).toBeInstanceOf(LightSpan);
    span.addEvent('authenticate', { 'flowgate.principal.kind': 'service_account' }, performance.now());
    span.setAttribute('http.response.status_code', 200);
    span.setAttribute('http.request.method', 'GET');
    span.updateName('POST /api/workspaces/:id/mcp');
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'failed' });
    expect(span.isRecording()).toBe(true);
    span.end();
    expect(span.isRecording()).toBe(false);
    span.setAttribute('after.end', true);
    span.end();

    const [finished, ...more] = exporter.getFinishedSpans();
    expect(more).toHaveLength(0);
    expect(finished?.name).toBe('POST /api/workspaces/:id/mcp');
    expect(finished?.kind).toBe(SpanKind.SERVER);
    expect(finished?.attributes).toEqual({ 'http.request.method': 'GET', 'http.response.status_code': 200 });
    expect(finished?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'failed' });
    expect(finished?.ended).toBe(true);
    expect(finished?.parentSpanContext).toBeUndefined();
    expect(finished?.spanContext().traceId).toMatch(HEX32);
    expect(finished?.spanContext().spanId).toMatch(HEX16);
    expect(finished?.spanContext().traceFlags).toBe(TraceFlags.SAMPLED);
    const start = finished?.startTime ?? [0, 0];
    const end = finished?.endTime ?? [0, 0];
    expect(Math.abs(start[0] * 1000 + start[1] / 1e6 - Date.now())).toBeLessThan(5_000);
    expect(end[0] * 1e9 + end[1]).toBeGreaterThanOrEqual(start[0] * 1e9 + start[1]);
    expect(finished?.duration[0]).toBe(0);
    const [event] = finished?.events ?? [];
    expect(event?.name).toBe('authenticate');
    expect(event?.attributes).toEqual({ 'flowgate.principal.kind': 'service_account' });
    expect((event?.time[0] ?? 0) * 1e9 + (event?.time[1] ?? 0)).toBeGreaterThanOrEqual(
      start[0] * 1e9 + start[1],
    );
  });

  it('continue a parent’s trace and draw fresh ids otherwise', () => {
    const { parts } = setup();
    const remote = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const child = startLightSpan(parts, 'child', remote) as LightSpan;
    expect(child.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(child.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    const ids = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const s = startLightSpan(parts, 'root', ROOT_CONTEXT);
      ids.add(s.spanContext().traceId);
      ids.add(s.spanContext().spanId);
      s.end();
    }
    expect(ids.size).toBe(1000);
  });

  it('follow the sampler: a dropped span records nothing and still carries ids for what it propagates', () => {
    const { exporter, parts } = setup({ sampler: new AlwaysOffSampler() });
    const span = startLightSpan(parts, 'POST', ROOT_CONTEXT, SpanKind.SERVER);
    expect(span).not.toBeInstanceOf(LightSpan);
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toMatch(HEX32);
    expect(span.spanContext().traceFlags).toBe(TraceFlags.NONE);
    span.end();
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  it('keep the span limits and record an exception by its type only', () => {
    const { exporter, parts } = setup({ valueLength: 8 });
    const span = startLightSpan(parts, 'limited', ROOT_CONTEXT, SpanKind.INTERNAL, { text: 'x'.repeat(20) });
    span.recordException(Object.assign(new Error('secret value in a message'), { code: 'invalid_token' }));
    span.end();
    const [finished] = exporter.getFinishedSpans();
    expect(finished?.attributes.text).toBe('xxxxxxxx');
    expect(finished?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['exception', { 'exception.type': 'invalid_token' }],
    ]);
  });

  it('encode to the bytes the SDK serializer writes for them', () => {
    const { exporter, parts } = setup();
    const parent = startLightSpan(parts, 'POST', ROOT_CONTEXT, SpanKind.SERVER, {
      'http.request.method': 'POST',
      'url.path': '/api/workspaces/ws-1/mcp',
    });
    parent.addEvent('authenticate', { 'flowgate.duration_ms': 0.042, 'flowgate.auth.cached': true });
    parent.setAttribute('http.response.status_code', 200);
    const child = startLightSpan(parts, 'tools/call', trace.setSpan(context.active(), parent));
    child.setAttribute('gen_ai.tool.name', 'run_flow');
    child.end();
    parent.end();
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(2);
    // Twice: the second time every attribute pair comes from the encoder's cache.
    for (let i = 0; i < 2; i++) {
      const ours = Buffer.from(encodeTraceExportRequest(spans));
      expect(ours.equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) ?? []))).toBe(true);
    }
  });
});
