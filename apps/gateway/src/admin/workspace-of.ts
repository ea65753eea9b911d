import type { AuditRecorder, Workspace, WorkspaceDeps } from '@flowgate/workspace';
import { openWorkspace } from '@flowgate/workspace';
import type { Context } from 'hono';
import type { AppEnv } from '../context.js';

/** What admin routes open workspaces with: the domain's deps and the recorder of their audit rows. */
export interface AdminWorkspaces {
  workspaceDeps: WorkspaceDeps;
  recorder: AuditRecorder;
}

/** The caller's workspace, acting as the caller: every mutation it makes records its own admin audit row. */
export function workspaceOf(c: Context<AppEnv>, deps: AdminWorkspaces): Workspace {
  const access = c.get('access');
  return openWorkspace(deps.workspaceDeps, {
    workspaceId: access.workspaceId,
    actor: { kind: access.principal.kind, id: access.principal.id, keyId: access.keyId },
    requestId: c.get('requestId'),
    audit: deps.recorder,
  });
}
