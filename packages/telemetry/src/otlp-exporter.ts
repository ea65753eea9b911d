import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer, TraceExporterMetricsHelper } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { encodeTraceExportRequest } from './otlp-traces.js';

/**
 * The SDK's OTLP/HTTP protobuf span exporter (endpoint, headers, timeout, compression, retries from the same
 * `OTEL_EXPORTER_OTLP_*` variables) with our encoder in place of its serializer (otlp-traces.ts says why).
 */
export function otlpProtobufSpanExporter(): OTLPExporterBase<ReadableSpan[]> {
  const options = convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', {
    'Content-Type': 'application/x-protobuf',
  });
  const serializer = {
    serializeRequest: encodeTraceExportRequest,
    deserializeResponse: ProtobufTraceSerializer.deserializeResponse,
  };
  return new OTLPExporterBase(
    createOtlpHttpExportDelegate(
      options,
      serializer,
      'otlp_http_span_exporter',
      TraceExporterMetricsHelper,
      undefined,
    ),
  );
}

/**
 * Whether the standard variables ask for exactly what `otlpProtobufSpanExporter` does: the `otlp` traces exporter
 * (the default) over `http/protobuf` (the default). Any other choice (several exporters, console, zipkin, gRPC,
 * JSON) is left to the SDK, which reads the same variables.
 */
export function wantsOtlpProtobufTraces(env: Record<string, string | undefined>): boolean {
  const exporters = [
    ...new Set(
      (env.OTEL_TRACES_EXPORTER ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '' && s !== 'null'),
    ),
  ];
  if (exporters.length > 1 || (exporters.length === 1 && exporters[0] !== 'otlp')) return false;
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL ||
    'http/protobuf'
  ).trim();
  return protocol === 'http/protobuf';
}
