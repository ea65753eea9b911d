import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Metafile, transform } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleAppGraph, ownModules, REPO_ROOT } from './app-graph.js';

/**
 * The Hono app must run on Node, Bun, Deno and workerd from one code base (issue 23), so no module of ours it reaches
 * imports `node:crypto` or uses the `Buffer` global: crypto and byte encodings go through `@flowgate/core`. Each
 * module is checked for the import and, once compiled to JavaScript (types and comments gone), for `Buffer` as a value.
 */

/** What must stay for now, per module, each with the reason and the step that removes it. */
const ALLOWED: Record<string, readonly string[]> = {
  // A run's outbound HTTP goes through node:http with Buffer bodies. Runs execute in a Node worker (issue 23 keeps
  // them there), but the app still reaches these modules through the run engine's exports.
  'packages/run-engine/src/steps/transport.ts': ['Buffer'],
  // The MCP client's fetch over that same transport (:mcp steps and mcp-server health checks).
  'packages/run-engine/src/steps/fetch.ts': ['Buffer'],
  'packages/run-engine/src/steps/http.ts': ['Buffer'],
  'packages/run-engine/src/steps/llm.ts': ['Buffer'],
};

let inputs: Metafile['inputs'];
beforeAll(async () => {
  inputs = await bundleAppGraph();
}, 60_000);

async function nodeOnlyUses(): Promise<Record<string, string[]>> {
  const uses: Record<string, string[]> = {};
  for (const path of ownModules(inputs)) {
    const found: string[] = [];
    if (inputs[path]?.imports.some((i) => i.path === 'node:crypto' || i.path === 'crypto'))
      found.push('node:crypto');
    const source = readFileSync(join(REPO_ROOT, path), 'utf8');
    const { code } = await transform(source, { loader: path.endsWith('x') ? 'tsx' : 'ts', jsx: 'preserve' });
    if (/\bBuffer\b/.test(code)) found.push('Buffer');
    if (found.length > 0) uses[path] = found;
  }
  return uses;
}

describe('the Hono app reaches no node:crypto and no Buffer', () => {
  it("walks the app's modules across the packages", () => {
    const modules = ownModules(inputs);
    for (const path of [
      'packages/auth/src/authenticator.ts',
      'packages/auth/src/jwt.ts',
      'packages/workspace-mcp/src/cursor.ts',
      'packages/secrets/src/encryption.ts',
      'apps/gateway/src/mcp/client-token.ts',
      'apps/gateway/src/console/session.ts',
    ])
      expect(modules).toContain(path);
  });

  it('only the allowed modules use either', async () => {
    // Equal, not a subset: an entry that is no longer needed must leave the allow-list.
    expect(await nodeOnlyUses()).toEqual(ALLOWED);
  });
});
