/**
 * Bounded, storable previews of what a client sent, for audit entries. Arguments are unvalidated and may be a
 * megabyte: redaction regexes are not linear on hostile text and a huge entry would sit in the audit queue, so a
 * small preview is cut first and only the preview is redacted. Every string is also made storable: Postgres
 * refuses NUL in text/jsonb and lone surrogates in jsonb, and one such entry would stall the whole queue.
 */
import { REDACTED, redact, redactString } from '@flowgate/secrets';
import { storableText } from './storable-text.js';

export { storableText } from './storable-text.js';

export const AUDIT_PREVIEW_LIMITS = Object.freeze({
  /** Serialised JSON size of a preview, after redaction. */
  maxJsonChars: 8192,
  maxDepth: 8,
  /** Per array or object. */
  maxEntries: 50,
  maxStringChars: 1000,
  maxKeyChars: 128,
  /**
   * Flow definitions sent as arguments (`flow_literal`): the audit needs to know which flow was sent, not its
   * text, which may hold secrets in shapes redaction cannot know.
   */
  maxFlowTextChars: 200,
});

/** Argument names whose string value is a flow definition. */
const FLOW_TEXT_KEYS: ReadonlySet<string> = new Set(['flow_literal']);

/** Stands in for a value that was left out (too deep, under an over-long key, over the size budget). */
export const OMITTED = '[truncated]';

/** What a truncated preview looks like: the marker, and as much of the value as fitted. */
export interface TruncatedPreview {
  truncated: true;
  preview: unknown;
}

// Characters tokens are made of: a token cut at the limit loses its tail, so what is left must not be kept.
const TOKEN_CHAR = /[A-Za-z0-9._~+/=-]/;
const PEM_BEGIN = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;

/**
 * At most `max` characters of `value`, storable, with `cut` set when something was dropped. A token split
 * by the cut would escape the redaction patterns (they need the whole token), so a cut never keeps the start
 * of a token, nor the body of a private key whose end marker fell off.
 */
function cutText(value: string, max: number): { text: string; cut: boolean } {
  // Slice before cleaning so the work stays proportional to `max`; the margin absorbs removed characters.
  const head = value.length > max * 2 ? value.slice(0, max * 2) : value;
  let text = storableText(head);
  const cut = text.length > max || head.length < value.length;
  if (!cut) return { text, cut: false };
  const nextChar = text.length > max ? text[max] : value[head.length];
  text = text.slice(0, max);
  if (nextChar !== undefined && TOKEN_CHAR.test(nextChar)) {
    let end = text.length;
    while (end > 0 && TOKEN_CHAR.test(text[end - 1] as string)) end--;
    text = text.slice(0, end);
  }
  const pem = PEM_BEGIN.exec(text);
  if (pem && !text.includes('-----END', pem.index)) text = text.slice(0, pem.index);
  return { text: `${text}…`, cut: true };
}

/**
 * A client-sent string for an audit field (a reason, a resource URI, a tool name): bounded first, then
 * redacted, and storable.
 */
export function auditText(value: string, max: number): string {
  return redactString(cutText(value, max).text);
}

interface Budget {
  left: number;
  truncated: boolean;
}

function charge(budget: Budget, cost: number): void {
  budget.left -= cost;
}

function previewString(value: string, budget: Budget, maxChars: number): string {
  const { text, cut } = cutText(value, Math.max(0, Math.min(maxChars, budget.left)));
  if (cut) budget.truncated = true;
  // JSON escapes (\u0001 and the like) count: the budget is what gets stored.
  charge(budget, JSON.stringify(text).length);
  return text;
}

function previewValue(
  value: unknown,
  depth: number,
  budget: Budget,
  maxChars: number = AUDIT_PREVIEW_LIMITS.maxStringChars,
): unknown {
  if (typeof value === 'string') return previewString(value, budget, maxChars);
  if (typeof value === 'number') {
    charge(budget, 24);
    return Number.isFinite(value) ? value : null;
  }
  if (typeof value === 'boolean' || value === null) {
    charge(budget, 5);
    return value;
  }
  if (typeof value !== 'object') {
    // Not JSON (never in a parsed body): keep the type, not the value.
    charge(budget, 12);
    return `[${typeof value}]`;
  }
  if (depth >= AUDIT_PREVIEW_LIMITS.maxDepth) {
    budget.truncated = true;
    charge(budget, OMITTED.length + 2);
    return OMITTED;
  }
  charge(budget, 2);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    const n = Math.min(value.length, AUDIT_PREVIEW_LIMITS.maxEntries);
    for (let i = 0; i < n; i++) {
      if (budget.left <= 0) break;
      out.push(previewValue(value[i], depth + 1, budget));
      charge(budget, 1);
    }
    if (out.length < value.length) budget.truncated = true;
    return out;
  }
  // No prototype: a `__proto__` key stays a key here instead of replacing the prototype.
  const out: Record<string, unknown> = Object.create(null);
  let seen = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (seen >= AUDIT_PREVIEW_LIMITS.maxEntries || budget.left <= 0) {
      budget.truncated = true;
      break;
    }
    seen++;
    const { text: cutName, cut } = cutText(key, AUDIT_PREVIEW_LIMITS.maxKeyChars);
    // Redaction copies into ordinary objects, where this key would set the prototype instead of a property.
    const name = cutName === '__proto__' ? '[__proto__]' : cutName;
    charge(budget, JSON.stringify(name).length + 1);
    if (cut) {
      // Redaction decides by the whole key name; with part of it gone, the value is not kept.
      budget.truncated = true;
      out[name] = OMITTED;
      charge(budget, OMITTED.length + 2);
      continue;
    }
    const maxChars = FLOW_TEXT_KEYS.has(key)
      ? AUDIT_PREVIEW_LIMITS.maxFlowTextChars
      : AUDIT_PREVIEW_LIMITS.maxStringChars;
    out[name] = previewValue((value as Record<string, unknown>)[key], depth + 1, budget, maxChars);
  }
  return out;
}

function redactedPreview(value: unknown, maxJsonChars: number, knownSecrets: readonly string[]): unknown {
  const budget: Budget = { left: maxJsonChars, truncated: false };
  const preview = previewValue(value, 0, budget);
  const redacted = redact(budget.truncated ? { truncated: true, preview } : preview, {
    maxDepth: AUDIT_PREVIEW_LIMITS.maxDepth + 4,
    knownSecrets,
  });
  return redacted;
}

/** Where a call's secret-typed flow inputs sit in its arguments: under the named argument, or at the top level. */
export interface SecretArgPaths {
  under: string | null;
  names: readonly string[];
}

/**
 * The arguments with the values of secret-typed flow inputs replaced, and those values (strings), so they are also
 * removed wherever else the caller repeated them. Key names cannot tell: a `:type :secret` input may be called `pw`.
 */
export function maskSecretInputs(
  args: unknown,
  paths: readonly SecretArgPaths[],
): { args: unknown; knownSecrets: string[] } {
  const knownSecrets: string[] = [];
  if (paths.length === 0 || !isRecord(args)) return { args, knownSecrets };
  const out: Record<string, unknown> = { ...args };
  for (const { under, names } of paths) {
    const holder = under === null ? out : out[under];
    if (!isRecord(holder)) continue;
    const masked: Record<string, unknown> = { ...holder };
    for (const name of names) {
      if (!Object.hasOwn(masked, name)) continue;
      const value = masked[name];
      // Only what a preview could keep of a repeat is worth matching (previews cut strings there).
      if (typeof value === 'string') knownSecrets.push(value.slice(0, AUDIT_PREVIEW_LIMITS.maxStringChars));
      masked[name] = REDACTED;
    }
    if (under === null) Object.assign(out, masked);
    else out[under] = masked;
  }
  return { args: out, knownSecrets };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The audit form of client-sent arguments: the value itself when it is small (redacted), otherwise
 * `{truncated: true, preview}` with as much as fits. The serialised result never exceeds `maxJsonChars`.
 */
export function auditPreview(value: unknown, knownSecrets: readonly string[] = []): unknown {
  if (value === undefined) return null;
  let max: number = AUDIT_PREVIEW_LIMITS.maxJsonChars;
  // Redaction can lengthen text (`?token=a` → `?token=[redacted]`); retry smaller until it fits.
  for (let attempt = 0; attempt < 4; attempt++) {
    const out = redactedPreview(value, max, knownSecrets);
    if (JSON.stringify(out).length <= AUDIT_PREVIEW_LIMITS.maxJsonChars) return out;
    max = Math.floor(max / 2);
  }
  return { truncated: true, preview: REDACTED };
}
