/**
 * Token grammar shared by the reader (to accept) and the writer (to refuse writing what cannot be read back). Symbols
 * follow the EDN spec: they start with a non-digit, may contain letters, digits and `* + ! - _ ? $ % & = < > . : #`,
 * and `-`, `+`, `.` as first character must not be followed by a digit; one `/` separates a namespace. Keyword names
 * follow the same rules but may start with a digit (`:200`), as the Clojure reader allows.
 */
const REST = String.raw`[\p{L}\p{N}*+!\-_?$%&=<>.:#]`;
const SIGN_NEXT = String.raw`[\p{L}*+!\-_?$%&=<>.:#]`;
const SYMBOL_PART = String.raw`(?:[\p{L}*!_?$%&=<>]${REST}*|[-+.](?:${SIGN_NEXT}${REST}*)?)`;
const KEYWORD_PART = String.raw`(?:[\p{L}\p{N}*!_?$%&=<>]${REST}*|[-+.](?:${SIGN_NEXT}${REST}*)?)`;

const SYMBOL_RE = new RegExp(`^(?:/|${SYMBOL_PART}(?:/${SYMBOL_PART})?)$`, 'u');
const KEYWORD_RE = new RegExp(`^${KEYWORD_PART}(?:/${SYMBOL_PART})?$`, 'u');

const RESERVED = new Set(['nil', 'true', 'false']);

export function isValidSymbolName(name: string): boolean {
  return !RESERVED.has(name) && SYMBOL_RE.test(name);
}

export function isValidKeywordName(name: string): boolean {
  return KEYWORD_RE.test(name);
}

export const INT_RE = /^([+-]?)(0|[1-9][0-9]*)(N?)$/;
export const FLOAT_RE = /^[+-]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?M?$/;

/** Named characters of EDN (`\newline`, …); anything else is one code point or `\uXXXX`. */
export const NAMED_CHARS: Readonly<Record<string, string>> = {
  newline: '\n',
  return: '\r',
  space: ' ',
  tab: '\t',
};

/** A lone UTF-16 surrogate (cannot be stored as UTF-8 without being replaced). */
export const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const INST_RE =
  /^\d{4}-\d{2}-\d{2}(?:[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:\d{2}))?$/;
export const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** True when the `#inst` text is RFC 3339-shaped and names a real instant. */
export function isValidInst(text: string): boolean {
  if (!INST_RE.test(text)) return false;
  const [y, m, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return false;
  return !Number.isNaN(Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text));
}
