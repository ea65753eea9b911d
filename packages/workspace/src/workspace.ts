/** One workspace's use cases for one actor: every read and write here is scoped to `scope.workspaceId`. */
import { AppError } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { type ConnectionUseCases, connectionUseCases } from './connections/index.js';
import { type FeedbackUseCases, feedbackUseCases } from './feedback.js';
import { type FlowUseCases, flowUseCases } from './flows/index.js';
import { type InstallationUseCases, installationUseCases } from './installations.js';
import { type RunUseCases, runUseCases } from './runs/index.js';
import type { UseCaseContext, WorkspaceDeps, WorkspaceScope } from './scope.js';
import { type ServiceAccountUseCases, serviceAccountUseCases } from './service-accounts.js';

export interface Workspace {
  readonly id: string;
  info(): Promise<{ id: string; name: string }>;
  readonly connections: ConnectionUseCases;
  readonly flows: FlowUseCases;
  readonly installations: InstallationUseCases;
  readonly feedback: FeedbackUseCases;
  readonly runs: RunUseCases;
  readonly serviceAccounts: ServiceAccountUseCases;
}

/** Cheap: builds closures only; nothing is read until a use case runs. */
export function openWorkspace(deps: WorkspaceDeps, scope: WorkspaceScope): Workspace {
  const ctx: UseCaseContext = {
    ...scope,
    deps,
    db: deps.db,
    now: deps.now ?? (() => new Date()),
  };
  return {
    id: scope.workspaceId,
    async info() {
      const row = await repos.getWorkspace(deps.db, scope.workspaceId);
      if (!row) throw new AppError('not_found', 'workspace not found');
      return { id: row.id, name: row.name };
    },
    connections: connectionUseCases(ctx),
    flows: flowUseCases(ctx),
    installations: installationUseCases(ctx),
    feedback: feedbackUseCases(ctx),
    runs: runUseCases(ctx),
    serviceAccounts: serviceAccountUseCases(ctx),
  };
}
