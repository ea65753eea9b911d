import type { RuntimeBindings } from '../context.js';
import { serveLongLived } from './long-lived.js';

/** `pnpm serve:deno`: the gateway on `Deno.serve`. */

interface DenoServeInfo {
  remoteAddr: { hostname?: string };
}
declare const Deno: {
  serve(
    options: { hostname: string; port: number; onListen(addr: { port: number }): void },
    handler: (request: Request, info: DenoServeInfo) => Response | Promise<Response>,
  ): { shutdown(): Promise<void> };
};

await serveLongLived('deno', ({ hostname, port, fetch }) => {
  return new Promise((resolve) => {
    const server = Deno.serve(
      { hostname, port, onListen: (addr) => resolve({ port: addr.port, stop: () => server.shutdown() }) },
      (request, info) =>
        fetch(request, { remoteAddress: info.remoteAddr.hostname } satisfies RuntimeBindings),
    );
  });
});
