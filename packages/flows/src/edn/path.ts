import type { EdnNode } from './types.js';
import { compact } from './writer.js';

/** Renders a map key as a diagnostic path segment (format in diagnostics.ts): `:name`, `"text"`, or short EDN. */
export function keySegment(key: EdnNode): string {
  switch (key.kind) {
    case 'keyword':
      return `:${key.name}`;
    case 'string':
      return JSON.stringify(key.value);
    default: {
      const text = compact(key);
      return text.length > 40 ? `${text.slice(0, 39)}…` : text;
    }
  }
}
