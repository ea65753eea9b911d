import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The edges reach data only through the domain (docs/architecture.md, "The domain owns the data"): no source file
 * under these folders imports `@flowgate/db` or calls its repositories. Tests may read the database to check what a
 * route did, so `*.test.ts` files are not held to it.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const EDGES = [
  'apps/gateway/src/admin',
  'apps/gateway/src/console',
  'apps/gateway/src/mcp',
  'packages/workspace-mcp/src/tools',
];

const DB_IMPORT = /from\s+['"]@flowgate\/db(?:\/[^'"]*)?['"]|import\(\s*['"]@flowgate\/db/;
const REPO_CALL = /\brepos\./;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

describe('architecture', () => {
  const files = EDGES.flatMap(sourceFiles);

  it('finds the edge folders', () => {
    expect(files.length).toBeGreaterThan(EDGES.length);
  });

  it('edges import no repository: their data goes through the workspace domain', () => {
    const offenders = files.filter((f) => {
      const text = readFileSync(join(ROOT, f), 'utf8');
      return DB_IMPORT.test(text) || REPO_CALL.test(text);
    });
    expect(offenders).toEqual([]);
  });
});
