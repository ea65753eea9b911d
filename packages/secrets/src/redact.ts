/**
 * Credential redaction for everything that leaves the process: tool results, run data, events, audit
 * entries, feedback and logs. Values under secret-looking keys are replaced wholesale; strings are scanned
 * for token shapes; known secrets (e.g. decrypted connection secrets) are replaced wherever they appear.
 */
export const REDACTED = '[redacted]';

// Matched per word of the key (`clientSecret` → client, secret), so `prompt_tokens` or `max_tokens` stay visible.
const SECRET_WORDS = new Set([
  'password',
  'passwd',
  'pass',
  'secret',
  'secrets',
  'token',
  'authorization',
  'authorisation',
  'apikey',
  'credential',
  'credentials',
  'cookie',
  'pwd',
  'privatekey',
  'sessionid',
]);
const SECRET_PAIRS = new Set(['api key', 'private key', 'session id', 'access key', 'signing key']);

// Every pattern is linear in the input: no nested or overlapping quantifiers that could backtrack, since
// redaction runs on caller-supplied text.
const PATTERNS: RegExp[] = [
  /\bfgk_[A-Za-z0-9]+_[A-Za-z0-9_-]{16,}/g,
  /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g,
  /\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{8,}/g,
  /\b[Bb]asic\s+[A-Za-z0-9+/=]{8,}/g,
  /\b(sk|pk|rk)[-_](live|test|proj)?[-_]?[A-Za-z0-9]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
];

// `https://user:pass@host` and `?api_key=…` inside free text: keep the URL readable, drop the credential.
// Bounded quantifiers: a scheme is short and so is user-info, which keeps every scan linear.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/@:]{1,128}:[^\s/@]{1,256}@/gi;
const QUERY_PARAM = /([?&;])([A-Za-z0-9_.-]{1,64})=([^&#\s"'<>]+)/g;
const QUERY_SECRET_NAMES = new Set(['sig', 'signature', 'auth', 'key', 'code', 'session']);
// `token=abc` in prose (no `?`/`&` before it): the name alone decides, as for a query parameter.
const FREE_PARAM = /(^|[\s,([{'"])([A-Za-z][A-Za-z0-9_.-]{0,63})=([^\s&#"'<>,;)\]}]{1,1024})/g;
// EDN (flow definitions): `:token "abc"` or `:api-key "abc"` — a keyword naming a secret, then a string. The
// string alternatives (plain character or one escape) cannot overlap, so the scan stays linear.
const EDN_SECRET = /(:([A-Za-z][A-Za-z0-9_.*+!?<>-]{0,63})[\s,]{1,16})"((?:[^"\\]|\\.){0,4096})"/g;

function redactPrivateKeys(text: string): string {
  let out = '';
  let from = 0;
  for (;;) {
    const begin = text.indexOf('-----BEGIN ', from);
    if (begin < 0) break;
    const headerEnd = text.indexOf('-----', begin + 11);
    if (headerEnd < 0 || !text.slice(begin + 11, headerEnd).endsWith('PRIVATE KEY')) {
      out += text.slice(from, begin + 11);
      from = begin + 11;
      continue;
    }
    const end = text.indexOf('-----END ', headerEnd + 5);
    const endClose = end < 0 ? -1 : text.indexOf('-----', end + 9);
    out += text.slice(from, begin) + REDACTED;
    // An unterminated key is redacted to the end of the text rather than left half visible.
    if (endClose < 0) return out;
    from = endClose + 5;
  }
  return out + text.slice(from);
}

export interface RedactOptions {
  /** Exact secret values to remove wherever they occur (shorter than 6 chars are ignored as too generic). */
  knownSecrets?: readonly string[];
  /** Depth past which values are replaced by a marker, so hostile nesting cannot blow the stack. */
  maxDepth?: number;
}

export function redactString(value: string, options: RedactOptions = {}): string {
  let out = value;
  for (const secret of options.knownSecrets ?? []) {
    if (secret.length >= 6 && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  if (out.includes('-----BEGIN ')) out = redactPrivateKeys(out);
  for (const pattern of PATTERNS) out = out.replace(pattern, REDACTED);
  out = out.replace(URL_USERINFO, `$1${REDACTED}@`);
  out = out.replace(QUERY_PARAM, (whole, sep: string, name: string) =>
    isSecretKey(name) || QUERY_SECRET_NAMES.has(name.toLowerCase()) ? `${sep}${name}=${REDACTED}` : whole,
  );
  out = out.replace(FREE_PARAM, (whole, before: string, name: string) =>
    isSecretKey(name) ? `${before}${name}=${REDACTED}` : whole,
  );
  out = out.replace(EDN_SECRET, (whole, key: string, name: string) =>
    isSecretKey(name) ? `${key}"${REDACTED}"` : whole,
  );
  return out;
}

export function isSecretKey(key: string): boolean {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (SECRET_WORDS.has(w)) return true;
    if (i + 1 < words.length && SECRET_PAIRS.has(`${w} ${words[i + 1]}`)) return true;
  }
  return false;
}

export function redact<T>(value: T, options: RedactOptions = {}): T {
  return walk(value, options, 0, options.maxDepth ?? 64) as T;
}

function walk(value: unknown, options: RedactOptions, depth: number, maxDepth: number): unknown {
  if (depth > maxDepth) return '[truncated]';
  if (typeof value === 'string') return redactString(value, options);
  if (Array.isArray(value)) return value.map((v) => walk(v, options, depth + 1, maxDepth));
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const next =
        isSecretKey(k) && v !== null && v !== undefined && v !== ''
          ? REDACTED
          : walk(v, options, depth + 1, maxDepth);
      // defineProperty: an own `__proto__` key stays a plain property instead of replacing the prototype.
      Object.defineProperty(out, k, { value: next, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}
