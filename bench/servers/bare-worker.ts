/**
 * The runtimes benchmark's baseline on workerd: the shared bare app (bare-app.ts) as a Worker
 * (`export default { fetch }`). Its routes arrive as the BENCH_BARE_ROUTES text binding; bundled and started
 * under Miniflare by bare-workerd.ts.
 */
import type { Hono } from 'hono';
import { createBareApp, parseBareRoutes } from './bare-app.js';

let app: Hono | undefined;

export default {
  fetch(request: Request, env: { BENCH_BARE_ROUTES: string }): Response | Promise<Response> {
    app ??= createBareApp(parseBareRoutes(env.BENCH_BARE_ROUTES));
    return app.fetch(request);
  },
};
