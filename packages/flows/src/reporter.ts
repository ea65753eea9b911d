import { clip, type Diagnostic, type DiagnosticCode, diagnostic, joinPath } from './diagnostics.js';
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

/**
 * Collects diagnostics positioned at tree nodes. At most `MAX_COLLECTED` are kept (a hostile definition can hold
 * thousands of problems). Errors are kept ahead of warnings — a flood of warnings must never hide the error that
 * makes a definition invalid — and both are counted past the cap, so validity and counts never depend on what was kept.
 */
export class Reporter {
  static readonly MAX_COLLECTED = 200;
  private readonly kept: { errors: Diagnostic[]; warnings: Diagnostic[] } = { errors: [], warnings: [] };
  errors = 0;
  warnings = 0;

  /** Errors first, then warnings, each in the order reported. */
  get diagnostics(): Diagnostic[] {
    return [...this.kept.errors, ...this.kept.warnings].slice(0, Reporter.MAX_COLLECTED);
  }

  /** True once no further warning will be kept: callers can skip costly work such as suggestions. */
  get full(): boolean {
    return this.kept.errors.length + this.kept.warnings.length >= Reporter.MAX_COLLECTED;
  }

  error(
    code: DiagnosticCode,
    at: EdnNode | undefined,
    path: readonly string[],
    message: string,
    hint: string,
  ): void {
    this.errors++;
    if (this.kept.errors.length < Reporter.MAX_COLLECTED)
      this.kept.errors.push(diagnostic('error', code, message, joinPath(path), at?.loc ?? null, hint));
  }

  warn(
    code: DiagnosticCode,
    at: EdnNode | undefined,
    path: readonly string[],
    message: string,
    hint: string,
  ): void {
    this.warnings++;
    if (!this.full)
      this.kept.warnings.push(diagnostic('warning', code, message, joinPath(path), at?.loc ?? null, hint));
  }
}

/**
 * Optimal string alignment distance (edits and adjacent transpositions), with three rolling rows. Gives up with
 * `max + 1` as soon as a whole row exceeds `max`, since only small distances make suggestions.
 */
function distance(a: string, b: string, max: number): number {
  let before = new Uint16Array(b.length + 1);
  let prev = new Uint16Array(b.length + 1);
  let row = new Uint16Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (before[j - 2] as number) + 1);
      }
      row[j] = best;
    }
    if (Math.min(...row) > max) return max + 1;
    [before, prev, row] = [prev, row, before];
  }
  return prev[b.length] as number;
}

const MAX_CANDIDATES = 300;

/**
 * The closest candidate for a "did you mean" hint: within 1 edit for short names and 2 for longer ones (never as
 * many edits as the name is long), else a candidate that extends the name (`duration` → `duration-ms`).
 */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  if (name.length > 32) return undefined; // long names are not typos worth a suggestion, and cost more
  const list: string[] = [];
  for (const candidate of candidates) {
    list.push(candidate);
    if (list.length >= MAX_CANDIDATES) break;
  }
  const limit = Math.min(name.length <= 4 ? 1 : 2, name.length - 1);
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of list) {
    if (Math.abs(candidate.length - name.length) >= bestDistance) continue;
    const d = distance(name, candidate, bestDistance - 1);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best !== undefined || name.length < 3) return best;
  return list.find((c) => c.startsWith(name) || (name.startsWith(c) && c.length >= 3));
}
