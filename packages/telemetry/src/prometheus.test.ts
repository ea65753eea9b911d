import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { recordAuthFailure, recordRunStarted, startTelemetry, type TelemetryHandle } from './index.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const NAMES = [
  'OTEL_METRICS_EXPORTER',
  'OTEL_TRACES_EXPORTER',
  'OTEL_LOGS_EXPORTER',
  'OTEL_EXPORTER_PROMETHEUS_HOST',
  'OTEL_EXPORTER_PROMETHEUS_PORT',
] as const;
const saved = Object.fromEntries(NAMES.map((n) => [n, process.env[n]]));
let handle: TelemetryHandle | null = null;

afterAll(async () => {
  await handle?.shutdown();
  for (const n of NAMES) {
    if (saved[n] === undefined) delete process.env[n];
    else process.env[n] = saved[n];
  }
});

describe('telemetry from OTEL_* variables', () => {
  it('serves a Prometheus scrape endpoint with OTEL_METRICS_EXPORTER=prometheus', async () => {
    const port = await freePort();
    Object.assign(process.env, {
      OTEL_METRICS_EXPORTER: 'prometheus',
      OTEL_TRACES_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
      OTEL_EXPORTER_PROMETHEUS_PORT: String(port),
    });
    handle = await startTelemetry();
    expect(handle).not.toBeNull();
    recordRunStarted();
    recordRunStarted();
    recordAuthFailure('invalid_token');
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/^flowgate_runs_started_total(\{[^}]*\})? 2$/m);
    expect(text).toMatch(/^target_info\{[^}]*service_name="flowgate"/m);
    expect(text).toMatch(/^flowgate_auth_failures_total\{[^}]*error_type="invalid_token"[^}]*\} 1$/m);
  });
});
