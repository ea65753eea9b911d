import { AppError } from '@flowgate/core';
import { toEDNString } from 'edn-data';
import { isValidKeywordName, isValidSymbolName, LONE_SURROGATE_RE } from './syntax.js';
import type { EdnMap, EdnNode } from './types.js';

/**
 * EDN writer. edn-data's `toEDNString` encodes the atoms it gets right (strings with their escapes, keywords,
 * symbols, integers, nil, booleans, tagged strings); floats and characters are written here because edn-data
 * writes `1.0` as `1` and `\space` as `\ `, which read back differently. Layout is ours.
 *
 * The output is canonical: one spelling per tree (no comments, no commas, single spaces compact, or a fixed
 * indentation when `pretty`), and reading it back yields an equal tree. A tree the reader could not have produced
 * (invalid names, unsafe integers, NaN, NUL or lone surrogates) is refused with an AppError.
 */
export interface WriteOptions {
  /** Break collections that do not fit into `width` columns over several lines. */
  pretty?: boolean;
  width?: number;
}

export function writeEdn(node: EdnNode, options: WriteOptions = {}): string {
  if (!options.pretty) return compact(node);
  return pretty(node, 0, options.width ?? 100);
}

function refuse(message: string): never {
  throw new AppError('validation_failed', `cannot write EDN: ${message}`);
}

function writeString(value: string): string {
  if (value.includes('\u0000')) refuse('strings may not contain NUL');
  if (LONE_SURROGATE_RE.test(value)) refuse('strings may not contain lone surrogates');
  return toEDNString(value);
}

function writeFloat(value: number): string {
  if (!Number.isFinite(value)) refuse('floats must be finite');
  if (Object.is(value, -0)) return '-0.0';
  const text = String(value);
  return /[.eE]/.test(text) ? text : `${text}.0`;
}

const CHAR_NAMES: Readonly<Record<string, string>> = {
  '\n': 'newline',
  '\r': 'return',
  ' ': 'space',
  '\t': 'tab',
};

function writeChar(value: string): string {
  const points = [...value];
  if (points.length !== 1) refuse('a character must be exactly one code point');
  const named = CHAR_NAMES[value];
  if (named) return `\\${named}`;
  const code = value.codePointAt(0) ?? 0;
  if (code === 0 || LONE_SURROGATE_RE.test(value)) refuse('NUL and lone surrogates are not characters');
  if (code < 0x20 || code === 0x7f) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\${value}`;
}

/** Compact, single-line canonical form. Also the identity used for duplicate keys and set elements. */
export function compact(node: EdnNode): string {
  switch (node.kind) {
    case 'nil':
      return toEDNString(null);
    case 'boolean':
      return toEDNString(node.value);
    case 'int':
      if (!Number.isSafeInteger(node.value)) refuse('integers must be safe integers (|n| ≤ 2^53−1)');
      return toEDNString(Object.is(node.value, -0) ? 0 : node.value);
    case 'float':
      return writeFloat(node.value);
    case 'string':
      return writeString(node.value);
    case 'char':
      return writeChar(node.value);
    case 'keyword':
      if (!isValidKeywordName(node.name)) refuse(`invalid keyword name ${JSON.stringify(node.name)}`);
      return toEDNString({ key: node.name });
    case 'symbol':
      if (!isValidSymbolName(node.name)) refuse(`invalid symbol name ${JSON.stringify(node.name)}`);
      return toEDNString({ sym: node.name });
    case 'tagged':
      return `#${node.tag} ${writeString(node.value.value)}`;
    case 'list':
      return `(${node.items.map(compact).join(' ')})`;
    case 'vector':
      return `[${node.items.map(compact).join(' ')}]`;
    case 'set':
      return `#{${node.items.map(compact).join(' ')}}`;
    case 'map':
      return `{${node.entries.map((e) => `${compact(e.key)} ${compact(e.value)}`).join(' ')}}`;
  }
}

/** Forms whose first argument stays on the head line and whose body is indented by two. */
const BINDING_FORMS = new Set(['let', 'for']);
const HEAD_LINE_FORMS = new Set(['fn', 'if', 'when', 'when-not', 'cond', 'do', 'and', 'or', 'quote']);

function spaces(n: number): string {
  return ' '.repeat(n);
}

function isCollection(node: EdnNode): boolean {
  return node.kind === 'list' || node.kind === 'vector' || node.kind === 'set' || node.kind === 'map';
}

function pretty(node: EdnNode, col: number, width: number): string {
  const flat = compact(node);
  if (col + flat.length <= width || !isCollection(node)) return flat;
  switch (node.kind) {
    case 'vector':
    case 'set': {
      const open = node.kind === 'vector' ? '[' : '#{';
      const close = node.kind === 'vector' ? ']' : '}';
      const inner = col + open.length;
      return `${open}${node.items.map((item) => pretty(item, inner, width)).join(`\n${spaces(inner)}`)}${close}`;
    }
    case 'map':
      return prettyMap(node, col, width);
    case 'list':
      return prettyList(node.items, col, width);
    default:
      return flat;
  }
}

function prettyMap(node: EdnMap, col: number, width: number): string {
  const inner = col + 1;
  const lines = node.entries.map((entry) => {
    const key = pretty(entry.key, inner, width);
    const keyWidth = key.includes('\n') ? 0 : key.length;
    return `${key} ${pretty(entry.value, inner + keyWidth + 1, width)}`;
  });
  return `{${lines.join(`\n${spaces(inner)}`)}}`;
}

function prettyBindings(items: EdnNode[], col: number, width: number): string {
  const inner = col + 1;
  const lines: string[] = [];
  for (let i = 0; i < items.length; i += 2) {
    const name = compact(items[i] as EdnNode);
    const value = items[i + 1];
    lines.push(value === undefined ? name : `${name} ${pretty(value, inner + name.length + 1, width)}`);
  }
  return `[${lines.join(`\n${spaces(inner)}`)}]`;
}

function prettyList(items: EdnNode[], col: number, width: number): string {
  const [head, ...args] = items;
  if (head === undefined) return '()';
  let line = `(${pretty(head, col + 1, width)}`;
  if (line.includes('\n')) {
    return `${line}${args.map((a) => `\n${spaces(col + 2)}${pretty(a, col + 2, width)}`).join('')})`;
  }
  let rest = args;
  const headName = head.kind === 'symbol' ? head.name : '';
  if (BINDING_FORMS.has(headName) && rest[0]?.kind === 'vector') {
    line += ` ${prettyBindings(rest[0].items, col + line.length + 1, width)}`;
    rest = rest.slice(1);
  } else if (headName === 'fn' || HEAD_LINE_FORMS.has(headName)) {
    const first = rest[0];
    if (first !== undefined && (headName !== 'fn' || first.kind === 'vector' || first.kind === 'symbol')) {
      line += ` ${pretty(first, col + line.length + 1, width)}`;
      rest = rest.slice(1);
    }
  } else {
    // Calls: keep leading atoms (step type and id, keyword arguments) on the head line while they fit.
    while (rest.length > 0) {
      const next = rest[0] as EdnNode;
      const text = compact(next);
      if (isCollection(next) || line.includes('\n') || col + line.length + 1 + text.length > width) break;
      line += ` ${text}`;
      rest = rest.slice(1);
    }
  }
  const body = rest.map((a) => `\n${spaces(col + 2)}${pretty(a, col + 2, width)}`).join('');
  return `${line}${body})`;
}
