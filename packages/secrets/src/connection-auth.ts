/**
 * How a connection's decrypted secret goes on the wire, by its auth type: the one rule for run steps (the worker)
 * and health checks (the workspace), so a check probes exactly as a run calls.
 */
import { toBase64, utf8Bytes } from '@flowgate/core';

/** What a stored connection says about its auth; `config.headerName` is the header of an `api-key` connection. */
export interface ConnectionAuth {
  authType: string;
  config: Readonly<Record<string, string>>;
}

/** The request headers that carry `secret`; none without a secret or for an auth type that sends nothing. */
export function authHeaders(connection: ConnectionAuth, secret: string | null): Record<string, string> {
  if (!secret) return {};
  if (connection.authType === 'bearer') return { authorization: `Bearer ${secret}` };
  if (connection.authType === 'basic') return { authorization: `Basic ${toBase64(utf8Bytes(secret))}` };
  if (connection.authType === 'api-key') return { [connection.config.headerName ?? 'X-API-Key']: secret };
  return {};
}

/**
 * Non-secret headers a connection sends on every request (e.g. an `mcp-server`'s `X-Tenant`), stored in its config
 * under `header:<Name>` keys so they sit beside the other non-secret settings and are listed by name only.
 */
export const FIXED_HEADER_PREFIX = 'header:';

export function fixedHeaders(config: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(config)) {
    if (key.startsWith(FIXED_HEADER_PREFIX)) out[key.slice(FIXED_HEADER_PREFIX.length)] = value;
  }
  return out;
}
