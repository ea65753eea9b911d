/**
 * Postgres refuses NUL in text and jsonb, and lone UTF-16 surrogates do not encode. Audit entries carry
 * caller-supplied strings, so every string is cleaned and bounded before it is queued.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching NUL is the point of this pattern.
const BAD_CHARS = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function cleanText(value: string, max = 2_000): string {
  const cleaned = value.replace(BAD_CHARS, '\uFFFD');
  return cleaned.length > max ? `${cleaned.slice(0, max)}…` : cleaned;
}

const MAX_JSON_CHARS = 16_000;

/** A JSON-safe, size-bounded copy: strings cleaned, depth/entries/length capped, `truncated` marked. */
export function boundedJson(value: unknown): unknown {
  let budget = MAX_JSON_CHARS;
  let truncated = false;
  const walk = (v: unknown, depth: number): unknown => {
    if (budget <= 0 || depth > 12) {
      truncated = true;
      return '[truncated]';
    }
    if (typeof v === 'string') {
      budget -= Math.min(v.length, 1_000) + 2;
      if (v.length > 1_000) truncated = true;
      return cleanText(v, 1_000);
    }
    if (v === null || typeof v === 'number' || typeof v === 'boolean') {
      budget -= 8;
      return typeof v === 'number' && !Number.isFinite(v) ? null : v;
    }
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const item of v) {
        if (out.length >= 100 || budget <= 0) {
          truncated = true;
          break;
        }
        out.push(walk(item, depth + 1));
      }
      return out;
    }
    if (typeof v === 'object' && v !== undefined) {
      const out: Record<string, unknown> = {};
      let n = 0;
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        if (n++ >= 100 || budget <= 0) {
          truncated = true;
          break;
        }
        budget -= Math.min(k.length, 200) + 4;
        Object.defineProperty(out, cleanText(k, 200), {
          value: walk(item, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return null;
  };
  const result = walk(value, 0);
  return truncated && result !== null && typeof result === 'object' && !Array.isArray(result)
    ? { ...(result as Record<string, unknown>), _truncated: true }
    : result;
}
