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

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] as number;
      row[j] = Math.min(current + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = current;
    }
  }
  return row[b.length] as number;
}

/** The closest candidate within edit distance 2 (ties: first in order), for "did you mean" hints. */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    if (Math.abs(candidate.length - name.length) >= bestDistance) continue;
    const d = distance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}
