import type { Authenticator, Capability } from '@flowgate/auth';
import { AppError, WORKSPACE_ID_PATTERN } from '@flowgate/core';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../context.js';
import type { WorkspaceCache } from '../workspace-cache.js';

export interface WorkspaceAccessOptions {
  authenticator: Authenticator;
  workspaces: WorkspaceCache;
}

/**
 * Whether the authenticated principal may enter the `:ws` workspace (403 otherwise, without revealing whether it
 * exists). Sets the caller's access and the workspace policy for the checks and routes after it.
 */
export function workspaceAccess(options: WorkspaceAccessOptions): MiddlewareHandler<AppEnv> {
  // One message for every denial, so the answer never hints at why (disabled, other tenant, no such workspace).
  const denied = () =>
    new AppError('forbidden', 'this token does not grant access to the requested workspace');
  return async (c, next) => {
    const principal = c.get('principal');
    const workspaceId = c.req.param('ws') ?? '';
    if (!WORKSPACE_ID_PATTERN.test(workspaceId)) throw denied();
    const access = options.authenticator.resolveAccess(principal, workspaceId);
    if (!access.ok) throw denied();
    const state = await options.workspaces.get(workspaceId);
    if (!state.exists) {
      // Only the operator may learn that a workspace does not exist.
      if (principal.kind === 'operator') throw new AppError('not_found', 'workspace not found');
      throw denied();
    }
    c.set('access', access.access);
    c.set('policy', state.policy);
    await next();
  };
}

/** Admin routes inside a workspace: the operator or a workspace admin. `workspace.full` is not enough. */
export const requireWorkspaceAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('access').isAdmin) {
    throw new AppError(
      'insufficient_role',
      'this action needs a workspace admin or the operator token; service-account keys cannot manage',
    );
  }
  await next();
};

export function requireCapability(capability: Capability): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const access = c.get('access');
    if (!access.isAdmin && !access.capabilities.has(capability)) {
      throw new AppError('forbidden', `this action needs the ${capability} capability`);
    }
    await next();
  };
}
