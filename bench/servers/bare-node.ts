/**
 * The runtimes benchmark's baseline on Node: the shared bare app (bare-app.ts) on @hono/node-server, the
 * gateway's own Node stack. Routes from BENCH_BARE_ROUTES_FILE; prints `READY {"url": …}`.
 */
import { readFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { announceReady } from '../lib/proc.js';
import { createBareApp, parseBareRoutes } from './bare-app.js';

const app = createBareApp(parseBareRoutes(readFileSync(String(process.env.BENCH_BARE_ROUTES_FILE), 'utf8')));
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  announceReady({ url: `http://127.0.0.1:${info.port}`, pid: process.pid });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
