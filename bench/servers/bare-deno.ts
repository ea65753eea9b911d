/**
 * The runtimes benchmark's baseline on Deno: the shared bare app (bare-app.ts) on `Deno.serve`, as the gateway's
 * Deno entry serves. Routes from BENCH_BARE_ROUTES_FILE; prints `READY {"url": …}`. Run by `deno run -A`.
 */
import { readFileSync } from 'node:fs';
import { createBareApp, parseBareRoutes } from './bare-app.js';

declare const Deno: {
  serve(
    options: { hostname: string; port: number; onListen(addr: { port: number }): void },
    handler: (request: Request) => Response | Promise<Response>,
  ): unknown;
};

const app = createBareApp(parseBareRoutes(readFileSync(String(process.env.BENCH_BARE_ROUTES_FILE), 'utf8')));
Deno.serve(
  {
    hostname: '127.0.0.1',
    port: 0,
    onListen: ({ port }) =>
      process.stdout.write(
        `READY ${JSON.stringify({ url: `http://127.0.0.1:${port}`, pid: process.pid })}\n`,
      ),
  },
  (request) => app.fetch(request),
);
