import { displayUrl, redactString } from '@flowgate/secrets';

/** Only scheme, host, port and a path without secret-looking segments, for rows stored before refusal too. */
export function safeBaseUrl(value: string | null): string | null {
  return displayUrl(value);
}

export function safeText(value: string | null): string | null {
  return value === null ? null : redactString(value);
}
