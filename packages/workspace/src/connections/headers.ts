/**
 * Fixed headers of an `mcp-server` connection: non-secret values (a tenant, a region) sent with every request to the
 * server. They are stored in the connection's plain config and shown to its admins, so nothing that looks like a
 * credential is accepted here: credentials belong in the connection's auth secret, which is encrypted at rest.
 */
import type { ErrorIssue } from '@flowgate/core';
import { FIXED_HEADER_PREFIX, fixedHeaders, isSecretKey, redactString } from '@flowgate/secrets';

export const FIXED_HEADER_LIMITS = { count: 20, nameLength: 64, valueLength: 1_000 } as const;

/** An HTTP field name (RFC 9110 token) that starts with a letter or digit, so `__proto__` can never be a key. */
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9!#$%&'*+.^_`|~-]*$/;
// Tab is legal inside a field value; every other control character (line breaks first) would split or corrupt it.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/**
 * Names the transport or the protocol sets itself, or that carry credentials: a fixed header may not replace them.
 * Lower case; compared case-insensitively like every header name.
 */
export const RESERVED_HEADER_NAMES = [
  'authorization',
  'cookie',
  'host',
  'content-length',
  'mcp-protocol-version',
  'mcp-session-id',
  'mcp-method',
  'mcp-name',
] as const;
const RESERVED = new Set<string>(RESERVED_HEADER_NAMES);

/** Problems of a fixed-header set, each at `headers.<Name>`; empty when it may be stored. */
export function fixedHeaderProblems(
  headers: Readonly<Record<string, string>>,
  apiKeyHeaderName: string | null,
): ErrorIssue[] {
  const issues: ErrorIssue[] = [];
  const entries = Object.entries(headers);
  if (entries.length > FIXED_HEADER_LIMITS.count) {
    issues.push({ path: 'headers', message: `at most ${FIXED_HEADER_LIMITS.count} fixed headers` });
  }
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const path = `headers.${name}`;
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name) || name.length > FIXED_HEADER_LIMITS.nameLength) {
      issues.push({
        path,
        message: `not a header name: a letter or digit, then letters, digits and !#$%&'*+.^_\`|~- (max ${FIXED_HEADER_LIMITS.nameLength})`,
      });
      continue;
    }
    if (seen.has(lower)) issues.push({ path, message: `${name} is given twice (header names ignore case)` });
    seen.add(lower);
    if (RESERVED.has(lower)) {
      issues.push({
        path,
        message: `${name} is set by Flowgate or the protocol and cannot be a fixed header`,
      });
    } else if (apiKeyHeaderName !== null && lower === apiKeyHeaderName.toLowerCase()) {
      issues.push({ path, message: `${name} carries the api-key secret of this connection` });
    } else if (isSecretKey(name)) {
      issues.push({
        path,
        message:
          `${name} looks like a credential; fixed headers are stored and shown in plain text. Send a credential ` +
          'with auth (bearer, or api-key with headerName) so it is encrypted at rest.',
      });
    }
    if (value.length > FIXED_HEADER_LIMITS.valueLength) {
      issues.push({ path, message: `at most ${FIXED_HEADER_LIMITS.valueLength} characters` });
    } else if (CONTROL.test(value)) {
      issues.push({ path, message: 'no line breaks or control characters' });
    } else if (redactString(value) !== value) {
      issues.push({
        path,
        message: 'the value looks like a credential; send it with auth so it is encrypted at rest',
      });
    }
  }
  return issues;
}

/** The config entries of a fixed-header set. */
export function fixedHeaderConfig(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [`${FIXED_HEADER_PREFIX}${name}`, value]),
  );
}

/** Names of the fixed headers stored in a config, sorted: what admins and audit rows see. */
export function fixedHeaderNames(config: Readonly<Record<string, string>>): string[] {
  return Object.keys(fixedHeaders(config)).sort();
}

/** A config without its fixed headers. */
export function withoutFixedHeaders(config: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(config).filter(([key]) => !key.startsWith(FIXED_HEADER_PREFIX)));
}
