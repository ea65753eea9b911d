import { ExportResultCode } from '@opentelemetry/core';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { batchSettingsFromEnv, type EncodedBatch, EncodingSpanProcessor } from './encoding-processor.js';

/**
 * The default trace pipeline: spans encoded by us as they end (encoding-processor.ts, otlp-traces.ts say why) and
 * sent by the SDK's OTLP/HTTP transport, which reads the endpoint, headers, timeout, compression and retries from the
 * same `OTEL_EXPORTER_OTLP_*` variables as the SDK's exporter; batching from `OTEL_BSP_*`.
 */
export function otlpProtobufSpanProcessor(env: Record<string, string | undefined>): EncodingSpanProcessor {
  const options = convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', {
    'Content-Type': 'application/x-protobuf',
  });
  const delegate = createOtlpHttpExportDelegate<EncodedBatch, unknown>(
    options,
    {
      // Already encoded: the transport sends the bytes as they are.
      serializeRequest: (batch) => batch.bytes,
      deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
    },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (batch) => batch.spans },
    undefined,
  );
  return new EncodingSpanProcessor(
    {
      send: (batch, done) =>
        delegate.export(batch, (result) =>
          done(
            result.code === ExportResultCode.SUCCESS
              ? undefined
              : (result.error ?? new Error('export failed')),
          ),
        ),
      shutdown: () => delegate.shutdown(),
    },
    batchSettingsFromEnv(env),
  );
}

/**
 * Whether the standard variables ask for exactly what `otlpProtobufSpanProcessor` sends: the `otlp` traces exporter
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
