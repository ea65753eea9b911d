/**
 * Credentials in URLs: a connection's base URL is shown to every reader, so anything that authenticates must
 * live in the encrypted secret instead. `urlCredentialProblem` refuses such URLs at write time; `displayUrl`
 * trims stored ones (including rows written before the refusal existed) to what a reader may see.
 */
import { isSecretKey, REDACTED } from './redact.js';

// Query/fragment/matrix names that carry credentials although their words are not secret words on their own.
const CREDENTIAL_PARAM_WORDS = new Set([
  'sig',
  'signature',
  'key',
  'code',
  'auth',
  'session',
  'sessid',
  'jsessionid',
  'phpsessid',
  'sid',
  'hapikey',
  'appid',
  'ticket',
  'otp',
]);

function isCredentialParam(name: string): boolean {
  if (isSecretKey(name)) return true;
  return name
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .some((w) => CREDENTIAL_PARAM_WORDS.has(w));
}

/**
 * A path segment that looks like a token rather than a name: long, and mixing letters with digits (webhook
 * ids such as Slack's `/services/T…/B…/<token>` or Discord's `/webhooks/<id>/<token>`), or a known token shape.
 */
export function isSecretLookingSegment(segment: string): boolean {
  let s: string;
  try {
    s = decodeURIComponent(segment);
  } catch {
    s = segment;
  }
  if (/^(fgk_|sk[-_]|pk[-_]|rk[-_]|gh[pousr]_|xox[abprs]-|AKIA|eyJ)/.test(s) && s.length >= 12) return true;
  if (s.length < 20 || !/^[A-Za-z0-9._~+=-]+$/.test(s)) return false;
  return /[0-9]/.test(s) && /[A-Za-z]/.test(s);
}

/** Why `value` cannot be a base URL (it carries a credential), or null when it carries none. */
export function urlCredentialProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.username || url.password) return 'it carries user-info (user:password@)';
  for (const name of url.searchParams.keys())
    if (isCredentialParam(name)) return `its query parameter "${name}" carries a credential`;
  const fragment = url.hash.slice(1);
  if (fragment) {
    for (const name of new URLSearchParams(fragment).keys())
      if (isCredentialParam(name)) return `its fragment "${name}" carries a credential`;
  }
  for (const segment of url.pathname.split('/')) {
    const [name, ...matrix] = segment.split(';');
    for (const param of matrix) {
      const key = param.split('=')[0] ?? '';
      if (isCredentialParam(key)) return `its path parameter ";${key}" carries a credential`;
    }
    if (name && isSecretLookingSegment(name)) return 'its path carries a token';
  }
  return null;
}

/**
 * Scheme, host, port and path, nothing else: no user-info, query, fragment or `;params`, and every
 * secret-looking path segment replaced by `[redacted]`. Unparseable text shows as `[redacted]`.
 */
export function displayUrl(value: string | null): string | null {
  if (value === null) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return REDACTED;
  }
  const path = url.pathname
    .split('/')
    .map((segment) => {
      const name = segment.split(';')[0] ?? '';
      return isSecretLookingSegment(name) ? REDACTED : name;
    })
    .join('/');
  return `${url.protocol}//${url.host}${path === '/' && !value.replace(/[?#].*$/s, '').endsWith('/') ? '' : path}`;
}
