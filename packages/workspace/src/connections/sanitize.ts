import { isSecretKey, REDACTED, redactString } from '@flowgate/secrets';

/** Base URLs may carry credentials in their user-info or query; strip and redact before they leave. */
export function safeBaseUrl(value: string | null): string | null {
  if (value === null) return null;
  try {
    const url = new URL(value);
    if (url.username || url.password) {
      url.username = '';
      url.password = '';
    }
    // `?api_key=…`, `?token=…` and the like: the value is a credential whatever its shape.
    let redactedParams = false;
    for (const name of [...new Set(url.searchParams.keys())]) {
      if (!isSecretKey(name)) continue;
      url.searchParams.set(name, REDACTED);
      redactedParams = true;
    }
    const text = url.toString();
    return redactString(redactedParams ? text.replaceAll(encodeURIComponent(REDACTED), REDACTED) : text);
  } catch {
    return redactString(value);
  }
}

export function safeText(value: string | null): string | null {
  return value === null ? null : redactString(value);
}
