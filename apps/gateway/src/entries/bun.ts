import type { RuntimeBindings } from '../context.js';
import { serveLongLived } from './long-lived.js';

/** `pnpm serve:bun`: the gateway on `Bun.serve`. */

interface BunServer {
  port: number;
  requestIP(request: Request): { address: string } | null;
  stop(closeActiveConnections?: boolean): Promise<void>;
}
declare const Bun: {
  serve(options: {
    hostname: string;
    port: number;
    idleTimeout: number;
    fetch(request: Request, server: BunServer): Response | Promise<Response>;
  }): BunServer;
};

await serveLongLived('bun', async ({ hostname, port, fetch }) => {
  const server = Bun.serve({
    hostname,
    port,
    // Seconds; long enough for waited calls and SSE streams, whose own bounds end them first.
    idleTimeout: 255,
    fetch: (request, bun) =>
      fetch(request, { remoteAddress: bun.requestIP(request)?.address } satisfies RuntimeBindings),
  });
  return { port: server.port, stop: () => server.stop() };
});
