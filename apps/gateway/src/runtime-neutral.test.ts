import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, transform } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The Hono app must run on Node, Bun, Deno and workerd from one code base (issue 23), so nothing it reaches may
 * depend on `node:crypto` or on the `Buffer` global: crypto and byte encodings go through `@flowgate/core`. esbuild
 * walks the app's module graph from `app.ts`; each of our own modules in it (third-party packages are not scanned
 * here) is checked for an import of `node:crypto` and, once compiled to JavaScript (types and comments gone), for
 * `Buffer` as a value.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** Still pending, each with who moves it. */
const ALLOWED: Record<string, string> = {
  // Bundled files become modules (with their hashes) in another change of issue 23.
  'apps/gateway/src/console/assets.ts': 'node:crypto, bundled console assets',
  'apps/gateway/src/discovery/routes.ts': 'node:crypto, bundled discovery documents',
  // A run's outbound HTTP goes through node:http with Buffer bodies; runs execute in a Node worker (issue 23 keeps
  // it there), but the app still reaches these modules through the run engine's exports.
  'packages/run-engine/src/steps/transport.ts': 'Buffer bodies for node:http',
  'packages/run-engine/src/steps/http.ts': 'Buffer bodies for node:http',
  'packages/run-engine/src/steps/llm.ts': 'Buffer bodies for node:http',
};

let graph: { file: string; imports: string[] }[];

beforeAll(async () => {
  const result = await build({
    entryPoints: [join(ROOT, 'apps/gateway/src/app.ts')],
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
    plugins: [
      {
        // Only our own modules are walked; every other package stays outside the graph.
        name: 'own-modules-only',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('@flowgate/') ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
  });
  graph = Object.entries(result.metafile.inputs)
    .filter(([file]) => !file.includes('node_modules'))
    .map(([file, input]) => ({ file, imports: input.imports.map((i) => i.path) }));
}, 60_000);

describe('the app reaches no Node-only crypto', () => {
  it("walks the app's modules across the packages", () => {
    const files = graph.map((m) => m.file);
    expect(files).toContain('apps/gateway/src/app.ts');
    expect(files).toContain('packages/auth/src/authenticator.ts');
    expect(files).toContain('packages/workspace-mcp/src/cursor.ts');
    expect(files).toContain('packages/secrets/src/encryption.ts');
  });

  it('no module imports node:crypto', () => {
    const offenders = graph
      .filter((m) => m.imports.some((i) => i === 'node:crypto' || i === 'crypto'))
      .map((m) => m.file)
      .filter((f) => !(f in ALLOWED));
    expect(offenders).toEqual([]);
  });

  it('no module uses Buffer', async () => {
    const offenders: string[] = [];
    for (const { file } of graph) {
      if (file in ALLOWED || !/\.tsx?$/.test(file)) continue;
      const { code } = await transform(readFileSync(join(ROOT, file), 'utf8'), { loader: 'ts' });
      if (/\bBuffer\b/.test(code)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});
