/**
 * The runtimes benchmark's baseline on Bun: the shared bare app (bare-app.ts) on `Bun.serve`, as the gateway's
 * Bun entry serves. Routes from BENCH_BARE_ROUTES_FILE; prints `READY {"url": …}`. Run by `bun` directly.
 */
import { readFileSync } from 'node:fs';
import { createBareApp, parseBareRoutes } from './bare-app.js';

declare const Bun: {
  serve(options: { hostname: string; port: number; fetch(request: Request): Response | Promise<Response> }): {
    port: number;
  };
};

const app = createBareApp(parseBareRoutes(readFileSync(String(process.env.BENCH_BARE_ROUTES_FILE), 'utf8')));
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => app.fetch(request) });
process.stdout.write(
  `READY ${JSON.stringify({ url: `http://127.0.0.1:${server.port}`, pid: process.pid })}\n`,
);
