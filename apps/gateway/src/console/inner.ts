import { AppError } from '@flowgate/core';
import { type Context, Hono } from 'hono';
import { hc } from 'hono/client';
import type { AdminApi } from '../admin/routes.js';
import { adminRoutes } from '../admin/routes.js';
import type { GatewayDeps } from '../app.js';
import type { AppEnv } from '../context.js';
import { createErrorHandler } from '../middleware/errors.js';
import { ipAllowlist } from '../middleware/ip.js';
import { workspaceAccess } from '../middleware/workspace-access.js';
import type { AdminClient } from './api.js';
import type { ConsoleSession } from './session.js';

/** The admin API as one console request's session: a typed client of the in-process app. */
export type AdminClients = (c: Context<AppEnv>, session: ConsoleSession) => AdminClient;

/**
 * The admin API, mounted on a private Hono app that only the console reaches, behind the same workspace guards as
 * the public one (access to the workspace, admin role, IP allowlist). The console acts as its session's principal
 * through it, so a page can never do more than that principal could with a bearer token. The principal travels
 * next to the Request object (never in a header), so nothing from outside can claim one.
 */
export function createAdminClients(deps: GatewayDeps): AdminClients {
  const principals = new WeakMap<Request, ConsoleSession['principal']>();
  const requestIds = new WeakMap<Request, string>();
  const app = new Hono<AppEnv>();
  app.onError(createErrorHandler(deps.logger));
  app.use('*', async (c, next) => {
    const principal = principals.get(c.req.raw);
    if (!principal) throw new AppError('unauthorized', 'no console session');
    c.set('principal', principal);
    c.set('requestId', requestIds.get(c.req.raw) ?? 'console');
    await next();
  });
  app.use(
    '/api/workspaces/:ws/*',
    workspaceAccess({ authenticator: deps.authenticator, workspaces: deps.workspaces }),
    ipAllowlist(deps.config.trustProxy),
  );
  app.route(
    '/',
    adminRoutes({
      ...deps,
      // The session's principal (set above) stands in for the operator bearer token.
      operatorGuard: async (c, next) => {
        if (c.get('principal').kind !== 'operator') {
          throw new AppError(
            'insufficient_role',
            'this action needs the operator token (FLOWGATE_ADMIN_TOKEN)',
          );
        }
        await next();
      },
    }),
  );

  return (c, session) =>
    hc<AdminApi>('http://console.internal', {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        principals.set(request, session.principal);
        requestIds.set(request, c.get('requestId'));
        // The outer request's environment, so the IP allowlist sees the real client address; its answers are read
        // here, never written to the socket piece by piece.
        return app.fetch(request, { ...c.env, writesBodyParts: false });
      },
    });
}
