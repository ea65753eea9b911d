import { conversionMeter } from './limits.js';
import { redactJson } from './redact.js';
import { decodeValue, type JsonValue, toJson } from './values.js';

/**
 * A journal result (stored form) as plain, redacted JSON — what `inspect_run_step`-style reads may show. The
 * journal itself is unredacted and lossless; never return it as is.
 */
export function storedToJson(stored: JsonValue, knownSecrets: readonly string[] = []): JsonValue {
  const meter = conversionMeter();
  return redactJson(toJson(decodeValue(stored, meter), meter), knownSecrets);
}
