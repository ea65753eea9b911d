import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A loopback OTLP/HTTP collector that accepts and discards every export, counting them. */
export interface OtlpSink {
  url: string;
  /** Export requests received (traces and metrics). */
  readonly exports: number;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports++;
      // An empty 200 is a full success for OTLP/HTTP (no partial-success message).
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': '0' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get exports() {
      return exports;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The gateway's environment for exporting traces and metrics to `sink` (OTLP/HTTP, the SDK's defaults otherwise). */
export function otlpEnv(sink: OtlpSink): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_LOGS_EXPORTER: 'none',
    // Metrics leave during a short round too, so their cost is part of the figure.
    OTEL_METRIC_EXPORT_INTERVAL: '2000',
  };
}
