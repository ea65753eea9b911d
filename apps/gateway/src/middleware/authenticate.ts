import type { Authenticator, Principal } from '@flowgate/auth';
import { AppError } from '@flowgate/core';
import {
  activeRecordingSpan,
  errorType,
  recordAuthFailure,
  recordStep,
  type Span,
  telemetryActive,
} from '@flowgate/telemetry';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import type { ProtectedResources } from '../discovery/protected-resource.js';

const TOKEN_QUERY_PARAMS = [
  'access_token',
  'token',
  'api_key',
  'apikey',
  'key',
  'auth',
  'authorization',
  'bearer',
];
// Up to the authenticator's own cap, so large multi-workspace JWTs are not mistaken for malformed headers.
const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,16384})$/i;

/**
 * A 401 with the Bearer challenge; `error="invalid_token"` only when a token was sent, and `resource_metadata`
 * (RFC 9728) on an OAuth protected resource, so clients can discover where to get a token.
 */
function unauthorized(
  code: 'unauthorized' | 'invalid_token' | 'token_in_query',
  message: string,
  tokenSent: boolean,
  metadataUrl?: string,
): AppError {
  let challenge = tokenSent ? 'Bearer realm="flowgate", error="invalid_token"' : 'Bearer realm="flowgate"';
  if (metadataUrl) challenge += `, resource_metadata="${metadataUrl}"`;
  return new AppError(code, message, undefined, { headers: { 'WWW-Authenticate': challenge } });
}

/** The bearer token, or a 401. A token in the query string is refused, whatever the header says. */
export function readBearer(c: Context, metadataUrl?: string): string {
  // Most requests have no query string: skip building a URL for them.
  const q = c.req.url.indexOf('?');
  if (q >= 0) {
    const names = [...new URLSearchParams(c.req.url.slice(q + 1)).keys()].map((k) => k.toLowerCase());
    if (names.some((n) => TOKEN_QUERY_PARAMS.includes(n))) {
      throw unauthorized(
        'token_in_query',
        'tokens are not accepted in the query string; send Authorization: Bearer <token>',
        true,
        metadataUrl,
      );
    }
  }
  const header = c.req.header('authorization');
  if (!header)
    throw unauthorized('unauthorized', 'missing Authorization: Bearer <token> header', false, metadataUrl);
  const match = BEARER.exec(header.trim());
  if (!match) {
    throw unauthorized(
      'unauthorized',
      'malformed Authorization header; expected "Bearer <token>"',
      true,
      metadataUrl,
    );
  }
  return match[1] as string;
}

/**
 * Verifies the bearer token. With `onto` (the request's recording span), the check is recorded as its
 * `authenticate` event (started at `startedAt`): the principal's kind, or the error's type.
 */
async function verify(
  c: Context,
  authenticator: Authenticator,
  resources: ProtectedResources | undefined,
  onto: Span | null,
  startedAt: number,
): Promise<Principal> {
  try {
    // On an MCP endpoint a JWT must be minted for that endpoint (its URL in `aud`) or for the configured audience.
    const target = resources?.forPath(c.req.path);
    const result = await authenticator.authenticate(readBearer(c, target?.metadataUrl), {
      resource: target?.resource,
    });
    if (!result.ok) throw unauthorized('invalid_token', result.message, true, target?.metadataUrl);
    if (onto)
      recordStep(onto, 'authenticate', { 'flowgate.principal.kind': result.principal.kind }, startedAt);
    return result.principal;
  } catch (error) {
    const type = errorType(error);
    recordAuthFailure(type);
    if (onto) recordStep(onto, 'authenticate', { 'error.type': type }, startedAt);
    throw error;
  }
}

/** The verified bearer token's principal, or the 401 (with its challenge) as a thrown AppError. */
export function principalOf(
  c: Context<AppEnv>,
  authenticator: Authenticator,
  resources?: ProtectedResources,
): Promise<Principal> {
  // An event on the request's span when it records (a cache miss's key lookup statement is parented to the active
  // span: the request's where it is active, none on the MCP endpoints, which carry their span explicitly).
  const request = telemetryActive() ? activeRecordingSpan(c.get('traceContext')) : null;
  return verify(c, authenticator, resources, request, request ? performance.now() : 0);
}

export interface AuthenticateOptions {
  /** The OAuth protected resources (MCP endpoints) when an identity provider is configured. */
  resources?: ProtectedResources | undefined;
}

/** Who is calling: the verified bearer token's principal, or a 401 with the Bearer challenge. */
export function authenticate(
  authenticator: Authenticator,
  options: AuthenticateOptions = {},
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set('principal', await principalOf(c, authenticator, options.resources));
    await next();
  };
}

/** The operator token alone (workspace creation). */
export function operatorGuard(authenticator: Authenticator): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const principal = await principalOf(c, authenticator);
    if (principal.kind !== 'operator') {
      throw new AppError('insufficient_role', 'this action needs the operator token (FLOWGATE_ADMIN_TOKEN)');
    }
    c.set('principal', principal);
    await next();
  };
}
