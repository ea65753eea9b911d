import { redactString } from '@flowgate/secrets';

/** Base URLs may carry credentials in their user-info or query; strip and redact before they leave. */
export function safeBaseUrl(value: string | null): string | null {
  if (value === null) return null;
  try {
    const url = new URL(value);
    if (url.username || url.password) {
      url.username = '';
      url.password = '';
    }
    return redactString(url.toString());
  } catch {
    return redactString(value);
  }
}

export function safeText(value: string | null): string | null {
  return value === null ? null : redactString(value);
}
