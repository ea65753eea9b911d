import { clip } from '../diagnostics.js';
import type { EdnNode } from './types.js';
import { compact } from './writer.js';

/** Renders a map key as a diagnostic path segment (format in diagnostics.ts): `:name`, `"text"`, or short EDN. */
export function keySegment(key: EdnNode): string {
  switch (key.kind) {
    case 'keyword':
      return clip(`:${key.name}`, 60);
    case 'string':
      return clip(JSON.stringify(key.value), 60);
    default:
      return clip(compact(key), 40);
  }
}
