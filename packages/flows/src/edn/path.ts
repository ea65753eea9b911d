import { clip } from '../diagnostics.js';
import type { EdnNode } from './types.js';
import { compact } from './writer.js';

/**
 * Renders a map key as a diagnostic path segment (format in diagnostics.ts): `:name`, or a neutral placeholder.
 * A string key (or a collection, which can hold strings) is flow-authored free text: diagnostics of a stored or
 * installed definition reach models, so its text never appears; the line and column still say where it is.
 */
export function keySegment(key: EdnNode): string {
  switch (key.kind) {
    case 'keyword':
      return clip(`:${key.name}`, 60);
    case 'string':
      return '"<string key>"';
    case 'list':
    case 'vector':
    case 'set':
    case 'map':
      return `<${key.kind} key>`;
    case 'tagged':
      return `<#${key.tag} key>`;
    case 'char':
      return '<char key>';
    default:
      return clip(compact(key), 40);
  }
}
