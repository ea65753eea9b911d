/**
 * `pnpm build:dist`: the CLI (`serve`, `worker`, `dev`, every command) bundled into plain JavaScript under dist/,
 * so production runs `node dist/bin/flowgate.mjs` without the tsx loader (≈ 35 MB resident) and without a
 * transformed module graph of thousands of files.
 *
 * Layout — each file the code finds at run time relative to its own module URL stays where that URL points (the
 * gateway's own documents, such as the discovery card, are imported as modules and so are inside the bundle):
 *   dist/bin/flowgate.mjs, dist/bin/*.mjs   the entry and its lazily loaded chunks (one directory: a chunk's
 *                                            `import.meta.url` must resolve the same relative paths as the entry's)
 *   dist/bin/embedded-init.mjs              the child that creates a new embedded database (db/src/embedded.ts)
 *   dist/bin/pglite-worker.mjs              the thread that owns the embedded database (db/src/pglite-thread.ts)
 *   dist/migrations/                        drizzle migrations (`../migrations` from the bundle, db/src/client.ts)
 *   dist/node_modules/@electric-sql/pglite  kept as a package: it loads its .wasm, .data and extension archives
 *                                            relative to its own files
 */
import { cpSync, existsSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface BuildDistOptions {
  /** Output directory, relative to the repository root. */
  outDir?: string;
  /** More entries next to the CLI's (name → path relative to the root), e.g. the benchmark's servers. */
  extraEntries?: Record<string, string>;
}

export interface BuiltDist {
  outDir: string;
  /** Absolute path of the CLI entry. */
  cli: string;
  /** Absolute path of each extra entry by name. */
  entries: Record<string, string>;
}

/** Package directory of `name` as the db package resolves it (pnpm does not hoist it to the root). */
function packageDir(name: string, from: string): string {
  const require = createRequire(join(ROOT, from, 'package.json'));
  let dir = dirname(realpathSync(require.resolve(name)));
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}

export async function buildDist(options: BuildDistOptions = {}): Promise<BuiltDist> {
  const outDir = resolve(ROOT, options.outDir ?? 'dist');
  const binDir = join(outDir, 'bin');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(binDir, { recursive: true });

  const entryPoints: Record<string, string> = { flowgate: join(ROOT, 'apps/cli/src/main.ts') };
  for (const [name, path] of Object.entries(options.extraEntries ?? {})) entryPoints[name] = join(ROOT, path);

  await build({
    entryPoints,
    outdir: binDir,
    bundle: true,
    // Code splitting keeps the CLI's lazy imports lazy: `serve` never loads the console-less commands' code, and
    // the OpenTelemetry SDK stays on disk unless telemetry is configured.
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    // The bundle's own copy resolves from dist/node_modules; see the layout above.
    external: ['@electric-sql/pglite', '@electric-sql/pglite/*'],
    jsx: 'automatic',
    jsxImportSource: 'hono/jsx',
    // CommonJS dependencies call require(); an ESM bundle has none of its own.
    banner: {
      js: "import { createRequire as __flowgateCreateRequire } from 'node:module'; const require = __flowgateCreateRequire(import.meta.url);",
    },
    // Without comments the chunks are ASCII (esbuild escapes strings), so V8 keeps each module's source as a
    // one-byte string: a comment with an em dash made it two bytes per character, ≈ 7 MB of an idle gateway's heap.
    // Names stay as written (no identifier mangling): stack traces and profiles read as the source does.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
  });

  for (const file of ['embedded-init.mjs', 'pglite-worker.mjs'])
    cpSync(join(ROOT, 'packages/db/src', file), join(binDir, file));
  cpSync(join(ROOT, 'packages/db/migrations'), join(outDir, 'migrations'), { recursive: true });
  const pglite = packageDir('@electric-sql/pglite', 'packages/db');
  const pgliteOut = join(outDir, 'node_modules/@electric-sql/pglite');
  mkdirSync(pgliteOut, { recursive: true });
  cpSync(join(pglite, 'package.json'), join(pgliteOut, 'package.json'));
  cpSync(join(pglite, 'dist'), join(pgliteOut, 'dist'), {
    recursive: true,
    // Source maps are a third of the package and never read at run time.
    filter: (src) => !src.endsWith('.map'),
  });
  writeFileSync(
    join(outDir, 'package.json'),
    `${JSON.stringify({ private: true, type: 'module' }, null, 2)}\n`,
  );

  const entries: Record<string, string> = {};
  for (const name of Object.keys(options.extraEntries ?? {})) entries[name] = join(binDir, `${name}.mjs`);
  return { outDir, cli: join(binDir, 'flowgate.mjs'), entries };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const built = await buildDist();
  process.stdout.write(
    `built ${relative(process.cwd(), built.cli)} in ${Date.now() - started} ms; run: node ${relative(process.cwd(), built.cli)} serve\n`,
  );
}
