import { isIP } from 'node:net';
import { looksLikeJwt, parseApiKey } from '@flowgate/auth';
import { redactString } from '@flowgate/secrets';

/** Names a shell can export and every client's env syntax can reference; anything else could inject config. */
const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export const DEFAULT_TOKEN_ENV_VAR = 'FLOWGATE_TOKEN';

export function isEnvVarName(value: string): boolean {
  return ENV_VAR_NAME.test(value);
}

export type TokenCheck =
  | { ok: true; token: string; kind: 'api-key' | 'jwt'; keyId: string | null }
  | { ok: false; message: string };

/**
 * Reads the bearer token from the named variable and checks its shape before anything touches the network.
 * Messages describe what is wrong without ever repeating the value.
 */
export function readToken(env: Record<string, string | undefined>, varName: string): TokenCheck {
  if (!isEnvVarName(varName)) {
    return {
      ok: false,
      message: `--token-env-var must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)`,
    };
  }
  const value = env[varName];
  if (value === undefined || value === '') {
    return {
      ok: false,
      message: `$${varName} is not set or empty: export the workspace API key (fgk_…) or a JWT in it`,
    };
  }
  if (value.trim() !== value) {
    return { ok: false, message: `$${varName} has leading or trailing whitespace; store only the key` };
  }
  if (/^bearer\s/i.test(value)) {
    return {
      ok: false,
      message: `$${varName} starts with "Bearer "; store only the key, the bridge adds the scheme`,
    };
  }
  const apiKey = parseApiKey(value);
  if (apiKey) return { ok: true, token: value, kind: 'api-key', keyId: apiKey.keyId };
  // An empty signature segment passes the gateway's shape check only so that jose can refuse `alg: none`.
  if (looksLikeJwt(value) && !value.endsWith('.'))
    return { ok: true, token: value, kind: 'jwt', keyId: null };
  return {
    ok: false,
    message: `$${varName} does not hold a Flowgate API key (fgk_<16 characters>_<43 characters>) or a JWT; check that it was copied whole`,
  };
}

/** `<api-url>/api/workspaces/<ws>/mcp`; the base keeps its path (a prefix behind a proxy) but not query or fragment. */
export function mcpEndpoint(apiUrl: string, workspaceId: string): string {
  return `${apiBase(apiUrl)}/api/workspaces/${encodeURIComponent(workspaceId)}/mcp`;
}

/** Origin plus path without trailing slashes; query, fragment and credentials are dropped. */
export function apiBase(apiUrl: string): string {
  const url = new URL(apiUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('expected an http(s) URL');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** Replaces every occurrence of the secret (and of its secret half, for API keys) in text meant for output. */
export function scrub(text: string, token: string | undefined): string {
  if (!token) return text;
  let out = text.split(token).join('[redacted]');
  const secret = parseApiKey(token)?.secret;
  if (secret) out = out.split(secret).join('[redacted]');
  return out;
}

/** Longest diagnostic line printed; the token-shape patterns are not linear, so they only see this much. */
export const MAX_DIAGNOSTIC_CHARS = 2000;
const TOKEN_CHAR = /[A-Za-z0-9._~+/=-]/;

/**
 * For stderr diagnostics: the bearer in use (and its secret half) plus anything token-shaped — any `fgk_` key,
 * JWT, `Bearer …` or credential in a URL — since a server or proxy message may echo some other credential.
 * The exact token is removed from the whole text first; the rest is bounded, never keeping the start of a token
 * cut by the bound (the patterns need the whole token to recognise it).
 */
export function scrubDiagnostic(text: string, token: string | undefined): string {
  const scrubbed = scrub(text, token);
  if (scrubbed.length <= MAX_DIAGNOSTIC_CHARS) return redactString(scrubbed);
  let end = MAX_DIAGNOSTIC_CHARS;
  if (TOKEN_CHAR.test(scrubbed[end] as string)) {
    while (end > 0 && TOKEN_CHAR.test(scrubbed[end - 1] as string)) end--;
  }
  return `${redactString(scrubbed.slice(0, end))}…`;
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`: traffic that never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) {
    if (host === '::1') return true;
    // WHATWG URLs print ::ffff:127.0.0.1 as ::ffff:7f00:1.
    const mapped = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(host);
    return mapped !== null && Number.parseInt(mapped[1] as string, 16) >> 8 === 127;
  }
  return false;
}

/**
 * Why the bearer must not be sent to this API URL, or null when it may: plain http:// is refused unless the
 * server is on this machine, because anyone on the path could read the key and replay it.
 */
export function insecureApiUrlProblem(apiUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    return null; // reported as an invalid URL elsewhere
  }
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return null;
  return (
    `refusing to send the bearer token over plain http:// to ${url.host}, which is not this machine: ` +
    'use an https:// --api-url, or pass --allow-insecure-http if the network to it is trusted'
  );
}
