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

/** Redacts, then bounds: a detail too large to keep becomes `{truncated: true, preview: "<first chars of its JSON>"}`. */
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
