import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';

/**
 * The app's module graph as esbuild bundles it, for the tests that hold what the app may reach on every runtime
 * (`no-disk-reads.test.ts`, `runtime-neutral.test.ts`). Test-time only: nothing the app imports.
 */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

// The app and the route plug-ins mounted on it by default (the MCP endpoint, the console); server.ts composes them.
const ENTRIES = ['apps/gateway/src/app.ts', 'apps/gateway/src/installers.ts'];

export async function bundleAppGraph(): Promise<Metafile['inputs']> {
  const result = await build({
    entryPoints: ENTRIES,
    absWorkingDir: REPO_ROOT,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    jsx: 'automatic',
    jsxImportSource: 'hono/jsx',
    outdir: 'out',
    logLevel: 'silent',
  });
  return result.metafile.inputs;
}

/** Our own TypeScript modules in the graph (repository-relative paths), third-party packages left out. */
export const ownModules = (inputs: Metafile['inputs']): string[] =>
  Object.keys(inputs).filter((path) => !path.includes('node_modules/') && /\.tsx?$/.test(path));
