import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

/**
 * The Worker bundle: the workerd entry and everything it imports in one ES module, resolved as workerd resolves
 * packages (`workerd`, `worker`, `browser` conditions: postgres.js over `cloudflare:sockets`, pino's browser build,
 * `@flowgate/db` without PGlite). Node built-ins stay imports: `nodejs_compat` provides them.
 */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const WORKER_ENTRY = 'apps/gateway/src/entries/workerd.ts';
/** The compatibility date the local runner and the deployed Worker use (infra/cloudflare/wrangler.jsonc). */
export const COMPATIBILITY_DATE = '2026-07-01';
export const COMPATIBILITY_FLAGS = ['nodejs_compat'];

/**
 * Telemetry is off on Workers: the OpenTelemetry Node SDK `startTelemetry` loads on demand is replaced by a module
 * that refuses, so ~1 MB of Node-only code stays out of the bundle.
 */
const noNodeTelemetry: Plugin = {
  name: 'no-node-telemetry',
  setup(build) {
    build.onResolve({ filter: /\/node-sdk\.js$/ }, (args) =>
      args.importer.includes('packages/telemetry/')
        ? { path: 'node-sdk', namespace: 'no-telemetry' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'no-telemetry' }, () => ({
      contents:
        "export class NodeSDK { constructor() { throw new Error('telemetry is off on Workers'); } }\n" +
        'export class ScopedContextManager {}',
      loader: 'js',
    }));
  },
};

export async function bundleWorker(): Promise<{ code: string; inputs: Metafile['inputs'] }> {
  const result = await build({
    entryPoints: [WORKER_ENTRY],
    absWorkingDir: REPO_ROOT,
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2024',
    external: ['node:*', 'cloudflare:*', ...builtinModules],
    jsx: 'automatic',
    jsxImportSource: 'hono/jsx',
    outfile: 'worker.js',
    logLevel: 'silent',
    plugins: [noNodeTelemetry],
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error('esbuild wrote no Worker bundle');
  return { code: output.text, inputs: result.metafile.inputs };
}
