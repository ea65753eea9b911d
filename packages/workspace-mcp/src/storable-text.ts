/**
 * Text the stores can hold: Postgres refuses NUL in text and jsonb, and lone surrogates in jsonb. One such
 * string fails the whole insert (for the audit queue: every entry batched with it).
 */

// Without the `u` flag the pattern sees UTF-16 code units, which is what a lone surrogate is.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const NUL = String.fromCharCode(0);

export function isStorableText(value: string): boolean {
  LONE_SURROGATE.lastIndex = 0;
  return !value.includes(NUL) && !LONE_SURROGATE.test(value);
}

/** Removes NUL and lone surrogates. */
export function storableText(value: string): string {
  return value.replaceAll(NUL, '').replace(LONE_SURROGATE, '');
}
