import { type Diagnostic, type DiagnosticCode, clip, diagnostic, joinPath } from './diagnostics.js';
import type { EdnNode } from './edn/types.js';
import { compact } from './edn/writer.js';

export { keySegment } from './edn/path.js';

/** "a vector", "the symbol foo", … for messages. */
export function describeNode(node: EdnNode): string {
  switch (node.kind) {
    case 'nil':
      return 'nil';
    case 'boolean':
      return `the boolean ${node.value}`;
    case 'int':
    case 'float':
      return `the number ${compact(node)}`;
    case 'string':
      return 'a string';
    case 'char':
      return 'a character';
    case 'keyword':
      return `the keyword ${clip(`:${node.name}`, 60)}`;
    case 'symbol':
      return `the symbol ${clip(node.name, 60)}`;
    case 'tagged':
      return `a #${node.tag} value`;
    default:
      return `a ${node.kind}`;
  }
}

/** Collects diagnostics positioned at tree nodes. */
export class Reporter {
  readonly diagnostics: Diagnostic[] = [];

  error(code: DiagnosticCode, at: EdnNode | undefined, path: readonly string[], message: string, hint: string): void {
    this.diagnostics.push(diagnostic('error', code, message, joinPath(path), at?.loc ?? null, hint));
  }

  warn(code: DiagnosticCode, at: EdnNode | undefined, path: readonly string[], message: string, hint: string): void {
    this.diagnostics.push(diagnostic('warning', code, message, joinPath(path), at?.loc ?? null, hint));
  }
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    const prev = d[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = best;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/**
 * The closest candidate for a "did you mean" hint: within 1 edit for short names and 2 for longer ones (never as
 * many edits as the name is long), else a candidate that extends the name (`duration` → `duration-ms`).
 */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  if (name.length > 128) return undefined;
  const list = [...candidates];
  const limit = Math.min(name.length <= 4 ? 1 : 2, name.length - 1);
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of list) {
    if (Math.abs(candidate.length - name.length) >= bestDistance) continue;
    const d = distance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best !== undefined || name.length < 3) return best;
  return list.find((c) => c.startsWith(name) || (name.startsWith(c) && c.length >= 3));
}
