import { isIP } from 'node:net';
import type { Authenticator } from '@flowgate/auth';
import { AppError, WORKSPACE_ID_PATTERN } from '@flowgate/core';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import type { WorkspaceCache } from '../workspace-cache.js';
import { errorResponse } from './errors.js';
import { ipAllowed } from './ip.js';

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

function challenge(tokenSent: boolean): Record<string, string> {
  return {
    'WWW-Authenticate': tokenSent
      ? 'Bearer realm="flowgate", error="invalid_token"'
      : 'Bearer realm="flowgate"',
  };
}

/** Extracts the bearer token or answers 401. A token in the query string is refused, whatever the header says. */
export function readBearer(c: Context): { token: string } | { response: Response } {
  // Most requests have no query string: skip building a URL for them.
  const q = c.req.url.indexOf('?');
  if (q >= 0) {
    const names = [...new URLSearchParams(c.req.url.slice(q + 1)).keys()].map((k) => k.toLowerCase());
    if (names.some((n) => TOKEN_QUERY_PARAMS.includes(n))) {
      return {
        response: errorResponse(
          c,
          new AppError(
            'token_in_query',
            'tokens are not accepted in the query string; send Authorization: Bearer <token>',
          ),
          challenge(true),
        ),
      };
    }
  }
  const header = c.req.header('authorization');
  if (!header) {
    return {
      response: errorResponse(
        c,
        new AppError('unauthorized', 'missing Authorization: Bearer <token> header'),
        challenge(false),
      ),
    };
  }
  const match = BEARER.exec(header.trim());
  if (!match) {
    return {
      response: errorResponse(
        c,
        new AppError('unauthorized', 'malformed Authorization header; expected "Bearer <token>"'),
        challenge(true),
      ),
    };
  }
  return { token: match[1] as string };
}

/**
 * The caller's address. Behind N trusted proxies that each append to X-Forwarded-For, the client is the N-th
 * entry from the right: everything further left was written by the client and proves nothing.
 */
export function clientIp(c: Context, trustedHops: number): string | null {
  if (trustedHops > 0) {
    const entries = (c.req.header('x-forwarded-for') ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const candidate = entries[entries.length - trustedHops];
    if (candidate !== undefined) return isIP(candidate) ? candidate : null;
  }
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null; // not running on Node (edge runtimes pass the address differently)
  }
}

export interface WorkspaceGuardOptions {
  authenticator: Authenticator;
  workspaces: WorkspaceCache;
  allowedOrigins: readonly string[];
  publicUrl: string;
  trustProxy: number;
}

/**
 * Where a request to `/api/workspaces/:ws/*` is authenticated. In order: bearer token (401), access to the
 * workspace (403, without revealing whether it exists), Origin (403), IP allowlist (403).
 */
export function workspaceGuard(options: WorkspaceGuardOptions): MiddlewareHandler<AppEnv> {
  const publicOrigin = new URL(options.publicUrl).origin;
  return async (c, next) => {
    const bearer = readBearer(c);
    if ('response' in bearer) return bearer.response;
    const result = await options.authenticator.authenticate(bearer.token);
    if (!result.ok) {
      return errorResponse(c, new AppError('invalid_token', result.message), challenge(true));
    }
    const workspaceId = c.req.param('ws') ?? '';
    const denied = () =>
      errorResponse(
        c,
        new AppError('forbidden', 'this token does not grant access to the requested workspace'),
      );
    if (!WORKSPACE_ID_PATTERN.test(workspaceId)) return denied();
    const access = options.authenticator.resolveAccess(result.principal, workspaceId);
    // One message for every denial, so the answer never hints at why (disabled, other tenant, no such workspace).
    if (!access.ok) return denied();
    const state = await options.workspaces.get(workspaceId);
    if (!state.exists) {
      // Only the operator may learn that a workspace does not exist.
      if (result.principal.kind === 'operator')
        return errorResponse(c, new AppError('not_found', 'workspace not found'));
      return denied();
    }
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      const allowed =
        origin === publicOrigin ||
        options.allowedOrigins.includes(origin) ||
        state.policy.allowedOrigins.includes(origin);
      if (!allowed) return errorResponse(c, new AppError('origin_not_allowed', 'this Origin is not allowed'));
    }
    const ip = clientIp(c, options.trustProxy);
    if (state.policy.allowedIps.length > 0 && (ip === null || !ipAllowed(ip, state.policy.allowedIps))) {
      return errorResponse(
        c,
        new AppError('ip_not_allowed', "the client address is not in this workspace's IP allowlist"),
      );
    }
    c.set('access', access.access);
    c.set('policy', state.policy);
    c.set('clientIp', ip);
    await next();
  };
}

/** The operator token alone (workspace creation). */
export function operatorGuard(authenticator: Authenticator): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const bearer = readBearer(c);
    if ('response' in bearer) return bearer.response;
    const result = await authenticator.authenticate(bearer.token);
    if (!result.ok) return errorResponse(c, new AppError('invalid_token', result.message), challenge(true));
    if (result.principal.kind !== 'operator') {
      return errorResponse(
        c,
        new AppError('insufficient_role', 'this action needs the operator token (FLOWGATE_ADMIN_TOKEN)'),
      );
    }
    await next();
  };
}

/** Admin routes inside a workspace: the operator or a workspace admin. `workspace.full` is not enough. */
export const requireWorkspaceAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('access').isAdmin) {
    return errorResponse(
      c,
      new AppError(
        'insufficient_role',
        'this action needs a workspace admin or the operator token; service-account keys cannot manage',
      ),
    );
  }
  await next();
};
