import { AppError, WORKSPACE_ID_PATTERN } from '@flowgate/core';
import type { Context, MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import type { AppEnv } from '../context.js';
import type { WorkspaceCache } from '../workspace-cache.js';

/** What a browser client may send to an MCP endpoint: the transport's headers and the X-MCP-* narrowing headers. */
export const MCP_CORS_ALLOW_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Mcp-Protocol-Version',
  'Mcp-Session-Id',
  'Mcp-Method',
  'Mcp-Name',
  'X-MCP-Toolsets',
  'X-MCP-Tools',
  'X-MCP-Exclude-Tools',
  'X-MCP-Readonly',
] as const;

/** What a browser client may read: the 401 challenge (OAuth discovery) and the client token. */
export const MCP_CORS_EXPOSE_HEADERS = ['WWW-Authenticate', 'Mcp-Session-Id'] as const;

export interface McpCorsOptions {
  publicUrl: string;
  /** `FLOWGATE_ALLOWED_ORIGINS`. */
  allowedOrigins: readonly string[];
  workspaces: WorkspaceCache;
}

/**
 * CORS for the MCP endpoints, ahead of authentication because a preflight carries no token. An origin is allowed
 * when the deployment allows it or the `:ws` workspace's policy lists it; the policy is read without a principal,
 * so every refusal (unknown workspace, origin not listed) is the same 403 and reveals nothing beyond what the
 * origin's own page already knows. Non-preflight requests go on to the usual guards (`originCheck` still refuses
 * other origins); allowed ones get `Access-Control-Allow-Origin`, error answers included.
 */
export function mcpCors(options: McpCorsOptions): MiddlewareHandler<AppEnv> {
  const publicOrigin = new URL(options.publicUrl).origin;
  const allowedOrigin = async (origin: string, c: Context<AppEnv>): Promise<string | null> => {
    if (origin === '') return null;
    if (origin === publicOrigin || options.allowedOrigins.includes(origin)) return origin;
    const workspaceId = c.req.param('ws') ?? '';
    if (!WORKSPACE_ID_PATTERN.test(workspaceId)) return null;
    const state = await options.workspaces.get(workspaceId);
    return state.exists && state.policy.allowedOrigins.includes(origin) ? origin : null;
  };
  const handler = cors({
    origin: allowedOrigin,
    allowMethods: ['POST'],
    allowHeaders: [...MCP_CORS_ALLOW_HEADERS],
    exposeHeaders: [...MCP_CORS_EXPOSE_HEADERS],
    maxAge: 600,
  });
  return async (c, next) => {
    const origin = c.req.header('origin');
    if (origin === undefined) return next();
    if (c.req.method === 'OPTIONS') {
      // Only a real preflight is answered here; a bare OPTIONS goes on to the guards and the 405.
      if (c.req.header('access-control-request-method') === undefined) return next();
      if ((await allowedOrigin(origin, c)) === null)
        throw new AppError('origin_not_allowed', 'this Origin is not allowed');
    }
    return handler(c, next);
  };
}
