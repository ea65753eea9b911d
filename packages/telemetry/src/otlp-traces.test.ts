import { context, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { encodeTraceExportRequest, TraceBatch } from './otlp-traces.js';

function provider(exporter: InMemorySpanExporter, attributes: Record<string, string>, schemaUrl?: string) {
  const resource = resourceFromAttributes(attributes, schemaUrl ? { schemaUrl } : {});
  return new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(exporter)] });
}

/** Spans of two resources and three scopes, with every field and value kind the encoder writes. */
function variedSpans(): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const gateway = provider(
    exporter,
    { 'service.name': 'flowgate', 'host.name': 'é-host' },
    'https://example/schema',
  );
  const worker = provider(exporter, { 'service.name': 'flowgate-worker' });
  const main = gateway.getTracer('flowgate', '1.2.3');
  const other = gateway.getTracer('other');
  const remote = trace.setSpanContext(context.active(), {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
  const request = main.startSpan(
    'POST /api/workspaces/:ws/mcp',
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'flowgate.ratio': 0.25,
        'flowgate.negative': -42,
        'flowgate.large': 2 ** 60,
        'flowgate.ok': true,
        'flowgate.no': false,
        'flowgate.tags': ['a', 'ü', 'long'.repeat(40)],
        'flowgate.numbers': [1, 2.5, -3],
        'flowgate.text': 'naïve … text',
        'flowgate.long': 'x'.repeat(20_000),
        // A pair the resource, an event and a link carry too: each field's encoding is its own.
        'service.name': 'flowgate',
      },
    },
    remote,
  );
  request.addEvent('authenticate', { 'flowgate.principal.kind': 'api_key', 'flowgate.duration_ms': 0.042 });
  request.addEvent('no attributes');
  request.addEvent('same pair', { 'service.name': 'flowgate', 'http.request.method': 'POST' });
  const child = main.startSpan(
    'tools/call call_flow_tool',
    {
      links: [
        {
          context: request.spanContext(),
          attributes: { 'link.kind': 'started-by', 'service.name': 'flowgate' },
        },
        { context: { ...request.spanContext(), isRemote: true } },
      ],
    },
    trace.setSpan(context.active(), request),
  );
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'tool failed: ∅' });
  child.end();
  const many = other.startSpan('many attributes', { kind: SpanKind.CLIENT });
  for (let i = 0; i < 40; i++) many.setAttribute(`attribute.${i}`, `value ${i}`);
  many.end();
  request.end();
  const step = worker.getTracer('flowgate').startSpan('run demo', { kind: SpanKind.CONSUMER });
  step.setStatus({ code: SpanStatusCode.OK });
  step.end();
  const internal = worker.getTracer('flowgate').startSpan('statement');
  internal.end();
  return exporter.getFinishedSpans();
}

describe('OTLP/protobuf trace encoding', () => {
  it('writes the same bytes as the SDK serializer for every field and value kind', () => {
    const spans = variedSpans();
    expect(spans).toHaveLength(5);
    const ours = Buffer.from(encodeTraceExportRequest(spans));
    const reference = Buffer.from(ProtobufTraceSerializer.serializeRequest(spans) ?? new Uint8Array());
    expect(reference.length).toBeGreaterThan(20_000);
    expect(ours.length).toBe(reference.length);
    expect(ours.equals(reference)).toBe(true);
  });

  it('encodes each batch alike: names kept from one batch do not change the next', () => {
    const first = variedSpans();
    const second = variedSpans();
    encodeTraceExportRequest(first);
    const ours = Buffer.from(encodeTraceExportRequest(second));
    expect(ours.equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(second) ?? []))).toBe(true);
  });

  it('reuses a batch: after a reset it encodes the next spans as a new batch would, in the same buffer', () => {
    const first = variedSpans();
    const second = variedSpans().slice(1);
    const batch = new TraceBatch();
    for (const s of first) batch.add(s);
    const before = batch.encode();
    expect(batch.reset()).toBe(true);
    expect(batch.count).toBe(0);
    expect(batch.encode()).toHaveLength(0);
    // The second lot leaves out the first lot's first span, whose resource and scope groups stay empty.
    for (const s of second) batch.add(s);
    const after = batch.encode();
    expect(after.buffer).toBe(before.buffer);
    expect(
      Buffer.from(after).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(second) ?? [])),
    ).toBe(true);
    expect(batch.resources()).toHaveLength(new Set(second.map((s) => s.resource)).size);
  });

  it('encodes an empty batch as an empty request', () => {
    expect(encodeTraceExportRequest([])).toHaveLength(0);
    expect(ProtobufTraceSerializer.serializeRequest([])).toHaveLength(0);
  });
});
