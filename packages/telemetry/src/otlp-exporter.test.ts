import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTelemetry, type TelemetryHandle, withSpan } from './index.js';
import { wantsOtlpProtobufTraces } from './otlp-exporter.js';

describe('which span exporter the gateway builds itself', () => {
  it('takes the default otlp exporter over http/protobuf, and leaves every other choice to the SDK', () => {
    expect(wantsOtlpProtobufTraces({})).toBe(true);
    expect(wantsOtlpProtobufTraces({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(wantsOtlpProtobufTraces({ OTEL_TRACES_EXPORTER: ' otlp , otlp' })).toBe(true);
    expect(wantsOtlpProtobufTraces({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })).toBe(true);
    expect(wantsOtlpProtobufTraces({ OTEL_TRACES_EXPORTER: 'console' })).toBe(false);
    expect(wantsOtlpProtobufTraces({ OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(wantsOtlpProtobufTraces({ OTEL_TRACES_EXPORTER: 'otlp,console' })).toBe(false);
    expect(wantsOtlpProtobufTraces({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe(false);
    expect(wantsOtlpProtobufTraces({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe(false);
    // The traces-specific protocol wins over the general one, as in the SDK.
    expect(
      wantsOtlpProtobufTraces({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }),
    ).toBe(true);
    expect(
      wantsOtlpProtobufTraces({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      }),
    ).toBe(false);
  });
});

describe('spans exported over OTLP/HTTP protobuf', () => {
  const saved = { ...process.env };
  let handle: TelemetryHandle | null = null;
  afterEach(async () => {
    await handle?.shutdown();
    handle = null;
    process.env = { ...saved };
  });

  it('reach the collector encoded by the gateway, with the ids the spans were given', async () => {
    const received: { path: string; type: string; body: Buffer }[] = [];
    const collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          path: req.url ?? '',
          type: String(req.headers['content-type']),
          body: Buffer.concat(chunks),
        });
        res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': '0' }).end();
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
      process.env.OTEL_METRICS_EXPORTER = 'none';
      process.env.OTEL_LOGS_EXPORTER = 'none';
      handle = await startTelemetry({ serviceName: 'exporter-test' });
      let traceId = '';
      let spanId = '';
      await withSpan('exported work', { attributes: { 'flowgate.case': 'otlp' } }, async (span) => {
        traceId = span?.spanContext().traceId ?? '';
        spanId = span?.spanContext().spanId ?? '';
      });
      await handle?.shutdown();
      handle = null;

      const traces = received.filter((r) => r.path === '/v1/traces');
      expect(traces).toHaveLength(1);
      const [exported] = traces;
      expect(exported?.type).toBe('application/x-protobuf');
      const body = exported?.body ?? Buffer.alloc(0);
      // Span.trace_id (field 1, 16 bytes) and span_id (field 2, 8 bytes) as the span's own ids, then its name.
      const ids = Buffer.concat([
        Buffer.from([0x0a, 16]),
        Buffer.from(traceId, 'hex'),
        Buffer.from([0x12, 8]),
        Buffer.from(spanId, 'hex'),
      ]);
      expect(body.includes(ids)).toBe(true);
      expect(body.includes(Buffer.from('exported work'))).toBe(true);
      expect(body.includes(Buffer.from('exporter-test'))).toBe(true);
    } finally {
      await new Promise<void>((resolve) => collector.close(() => resolve()));
    }
  });
});
