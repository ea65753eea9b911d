import type { Principal, WorkspaceAccess } from '@flowgate/auth';
import type { WorkspacePolicy } from '@flowgate/db';

/** Values the middleware chain puts on each request, read by the routes. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** Set once the bearer token is verified (`authenticate`, `operatorGuard`). */
    principal: Principal;
    /** Set on `/api/workspaces/:ws/*` once the caller is authenticated and allowed into the workspace. */
    access: WorkspaceAccess;
    policy: WorkspacePolicy;
    clientIp: string | null;
  };
}
