import { redact, redactString } from '@flowgate/secrets';
import type { RunErrorJson } from './errors.js';
import type { JsonValue } from './values.js';

/**
 * Redaction of everything the engine lets out (events, errors, results): known connection secrets wherever they
 * occur, token shapes, and values under secret-looking keys (`@flowgate/secrets`). Redaction happens before any
 * truncation, so a cut can never leave part of a secret behind.
 */

/** Largest event detail kept whole, in characters of JSON; larger details become a preview. */
export const MAX_EVENT_DETAIL_CHARS = 4096;

export function redactJson(value: JsonValue, knownSecrets: readonly string[]): JsonValue {
  return redact(value, { knownSecrets });
}

export function redactText(value: string, knownSecrets: readonly string[]): string {
  return redactString(value, { knownSecrets });
}

export function redactError(error: RunErrorJson, knownSecrets: readonly string[]): RunErrorJson {
  return { ...error, message: redactString(error.message, { knownSecrets }) };
}

/**
 * Redacts, then bounds: a detail too large to keep becomes `{truncated: true, preview: "<first chars of its JSON>"}`.
 */
export function eventDetail(
  value: JsonValue,
  knownSecrets: readonly string[],
  maxChars = MAX_EVENT_DETAIL_CHARS,
): JsonValue {
  const clean = redactJson(value, knownSecrets);
  const text = JSON.stringify(clean);
  if (text.length <= maxChars) return clean;
  return { truncated: true, chars: text.length, preview: text.slice(0, maxChars) };
}

/**
 * Removes known secrets (the credentials of the run's connections) from a stored step result, keys included. Only
 * exact secrets: the journal must otherwise hold what the step returned, so token-shaped data stays. The body sees
 * the scrubbed value on the first run and on every replay alike, so a secret echoed by an API never reaches the
 * journal, the body or anything built from it.
 */
export function scrubSecrets(value: JsonValue, knownSecrets: readonly string[]): JsonValue {
  const secrets = knownSecrets.filter((s) => s.length >= 4);
  if (secrets.length === 0) return value;
  const scrub = (text: string) => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    return out;
  };
  const walk = (v: JsonValue): JsonValue => {
    if (typeof v === 'string') return scrub(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: { [key: string]: JsonValue } = {};
      for (const [k, inner] of Object.entries(v)) out[scrub(k)] = walk(inner);
      return out;
    }
    return v;
  };
  return walk(value);
}
