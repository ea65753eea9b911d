import { readFileSync } from 'node:fs';
import type { Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleAppGraph, ownModules, REPO_ROOT as ROOT } from './app-graph.js';

/**
 * The Hono app must run where there is no file system (issue 23: Workers, and bundles without files next to them):
 * documents it serves are imported as modules (`pnpm generate`), never read from disk. This bundles the app (with
 * its default routes) and looks at every module of ours in its graph.
 */

const DISK_MODULES = new Set(['fs', 'fs/promises', 'path', 'url'].flatMap((m) => [m, `node:${m}`]));
const FILE_RELATIVE = 'import.meta.url';

/**
 * What must stay for now, per module: the Node-only database driver. Issue 23's database-port step (postgres.js on
 * every runtime, PGlite only where it runs) moves both out of the app's graph and removes these entries.
 */
const ALLOWED: Record<string, readonly string[]> = {
  // The embedded PGlite cluster lives in a data directory and is created by a child process.
  'packages/db/src/embedded.ts': ['node:fs', 'node:path', FILE_RELATIVE],
  // The migrations folder drizzle's migrator reads; migrations run from Node (`serve`, `dev`, `flowgate db migrate`).
  'packages/db/src/client.ts': ['node:url', FILE_RELATIVE],
  // The embedded database's thread runs a script that sits next to this module (Node only, like the two above).
  'packages/db/src/pglite-thread.ts': [FILE_RELATIVE],
};

let inputs: Metafile['inputs'];
beforeAll(async () => {
  inputs = await bundleAppGraph();
});

/** Our own modules in the app's graph and what each uses to reach files: disk modules and file-relative URLs. */
function diskUses(): Record<string, string[]> {
  const uses: Record<string, string[]> = {};
  for (const path of ownModules(inputs)) {
    const found = (inputs[path]?.imports ?? []).filter((i) => DISK_MODULES.has(i.path)).map((i) => i.path);
    if (readFileSync(`${ROOT}${path}`, 'utf8').includes(FILE_RELATIVE)) found.push(FILE_RELATIVE);
    if (found.length > 0) uses[path] = [...new Set(found)].sort();
  }
  return uses;
}

describe('the Hono app reads no files', () => {
  it('bundles the app with our own modules in its graph', () => {
    expect(Object.keys(inputs)).toContain('apps/gateway/src/discovery/routes.ts');
    expect(Object.keys(inputs)).toContain('apps/gateway/src/console/assets.ts');
  });

  it('no module of ours in it imports node:fs, node:path or node:url, or resolves files from its own URL', () => {
    const sorted = Object.fromEntries(Object.entries(ALLOWED).map(([k, v]) => [k, [...v].sort()]));
    // Equal, not a subset: an entry that is no longer needed must leave the allow-list.
    expect(diskUses()).toEqual(sorted);
  });

  it('leaves the build-time generators out of the app', () => {
    for (const path of Object.keys(inputs))
      expect(path).not.toMatch(/generated-files|asset-hashes\.ts|documents\.ts/);
  });
});
