import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import {
  currentTraceparent,
  otelConfigured,
  recordRunStarted,
  startTelemetry,
  storedTraceContext,
  telemetryActive,
  traceHeaders,
  withSpan,
} from './index.js';

describe('telemetry off', () => {
  it('is configured only by a non-empty OTEL_* variable, and OTEL_SDK_DISABLED wins', () => {
    expect(otelConfigured({})).toBe(false);
    expect(otelConfigured({ FLOWGATE_PORT: '8080', OTEL_SERVICE_NAME: '' })).toBe(false);
    expect(otelConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(otelConfigured({ OTEL_METRICS_EXPORTER: 'prometheus' })).toBe(true);
    expect(otelConfigured({ OTEL_SDK_DISABLED: 'true', OTEL_SERVICE_NAME: 'flowgate' })).toBe(false);
  });

  it('starts no SDK without OTEL_* variables: the api stays the no-op one and helpers do nothing', async () => {
    expect(await startTelemetry({ env: { PATH: '/usr/bin' } })).toBeNull();
    expect(telemetryActive()).toBe(false);
    // No provider was registered globally: spans from the api are not recorded.
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
    const seen: unknown[] = [];
    const value = await withSpan('work', {}, async (span) => {
      seen.push(span);
      expect(traceHeaders()).toEqual({});
      expect(currentTraceparent()).toBeNull();
      return 42;
    });
    expect(value).toBe(42);
    expect(seen).toEqual([null]);
    expect(storedTraceContext('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBeNull();
    expect(() => recordRunStarted()).not.toThrow();
  });
});
