import { readFileSync } from 'node:fs';
import { CATALOG } from '@flowgate/workspace-mcp';
import { describe, expect, it } from 'vitest';

/** The README's tool table is documentation of the catalog: it must list exactly what the catalog serves. */
export function catalogTableRows(): string[] {
  return CATALOG.map(
    (t) =>
      `| \`${t.name}\` | ${t.toolsets.join(', ')} | ${t.capabilities.length ? t.capabilities.map((c) => `\`${c}\``).join(', ') : 'none'} | ${t.mutating ? 'yes' : 'no'} |`,
  );
}

describe('README', () => {
  it('lists exactly the catalog’s tools with their toolsets, gates and mutating flag', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    // Cells compared trimmed: the formatter pads markdown tables.
    const cells = (row: string) =>
      row
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
    const rows = readme.split('\n').filter((l) => /^\| `[a-z_]+` +\|/.test(l));
    expect(rows.map(cells)).toEqual(catalogTableRows().map(cells));
  });
});
