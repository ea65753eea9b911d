import { relative } from 'node:path';
import { buildDist } from '../../scripts/build-dist.js';
import { ROOT } from './proc.js';

/**
 * Which code the benchmark's server children run. `dist`: the production bundle (`pnpm build:dist`, the same recipe
 * into .tmp/bench-dist with the benchmark's own servers as extra entries), run by plain `node` as `flowgate serve`
 * is in production. `source`: the TypeScript under the tsx loader, as in development.
 */
export type ServerBuild =
  | { kind: 'dist'; cli: string; gateway: string; bareHono: string; bareNode: string; dir: string }
  | { kind: 'source' };

let current: ServerBuild = { kind: 'source' };

export function serverBuild(): ServerBuild {
  return current;
}

/** Builds the bundle once per benchmark run (a few seconds), or keeps the source when `useSource` asks for it. */
export async function prepareServerBuild(useSource: boolean): Promise<string> {
  if (useSource) {
    current = { kind: 'source' };
    return 'servers run from source under tsx (--source)';
  }
  const started = Date.now();
  const built = await buildDist({
    outDir: '.tmp/bench-dist',
    extraEntries: {
      'bench-gateway': 'bench/servers/gateway.ts',
      'bench-bare-hono': 'bench/servers/bare-hono.ts',
      'bench-bare-node': 'bench/servers/bare-node.ts',
    },
  });
  current = {
    kind: 'dist',
    cli: built.cli,
    gateway: built.entries['bench-gateway'] as string,
    bareHono: built.entries['bench-bare-hono'] as string,
    bareNode: built.entries['bench-bare-node'] as string,
    dir: built.outDir,
  };
  return `servers run the production bundle (${relative(ROOT, built.outDir)}, built in ${Date.now() - started} ms) under plain node`;
}

/** Script of a benchmark server: its bundled entry, or its source under tsx. */
const SOURCES = {
  gateway: 'bench/servers/gateway.ts',
  bareHono: 'bench/servers/bare-hono.ts',
  bareNode: 'bench/servers/bare-node.ts',
} as const;

export function serverScript(which: keyof typeof SOURCES): string {
  if (current.kind === 'dist') return current[which];
  return SOURCES[which];
}
