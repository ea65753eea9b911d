/**
 * Starts the runtimes benchmark's workerd baseline: bundles bare-worker.ts (esbuild, as a Worker module) and
 * serves it with Miniflare (workerd from npm) on loopback; requests go to workerd's own socket. Routes from
 * BENCH_BARE_ROUTES_FILE; prints `READY {"url": …}`; SIGTERM disposes of workerd.
 */
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { announceReady, ROOT } from '../lib/proc.js';

const routes = readFileSync(String(process.env.BENCH_BARE_ROUTES_FILE), 'utf8');
const bundled = await build({
  entryPoints: [`${ROOT}/bench/servers/bare-worker.ts`],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  write: false,
  logLevel: 'warning',
});
const mf = new Miniflare({
  modules: true,
  script: bundled.outputFiles[0]!.text,
  compatibilityDate: '2025-09-01',
  bindings: { BENCH_BARE_ROUTES: routes },
  host: '127.0.0.1',
  port: 0,
});
const url = await mf.ready;
announceReady({ url: url.origin, pid: process.pid });
process.on('SIGTERM', () => void mf.dispose().finally(() => process.exit(0)));
