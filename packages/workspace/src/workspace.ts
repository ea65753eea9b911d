/** One workspace's use cases for one actor: every read and write here is scoped to `scope.workspaceId`. */
import { AppError } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { type AuditLogUseCases, auditLogUseCases } from './audit-log.js';
import { type ConnectionUseCases, connectionUseCases } from './connections/index.js';
import {
  type FeedbackLogUseCases,
  type FeedbackUseCases,
  feedbackLogUseCases,
  feedbackUseCases,
} from './feedback.js';
import { type FlowUseCases, flowUseCases } from './flows/index.js';
import { type InstallationUseCases, installationUseCases } from './installations.js';
import { type PolicyUseCases, policyUseCases } from './policy.js';
import { type QuotaUseCases, quotaUseCases } from './quotas.js';
import { auditedRuns } from './runs/audited.js';
import { type RunUseCases, runUseCases } from './runs/index.js';
import type { UseCaseContext, WorkspaceDeps, WorkspaceScope } from './scope.js';
import { type ServiceAccountUseCases, serviceAccountUseCases } from './service-accounts.js';
import { type UsageUseCases, usageUseCases } from './usage/index.js';

export interface Workspace {
  readonly id: string;
  info(): Promise<{ id: string; name: string }>;
  readonly auditLog: AuditLogUseCases;
  readonly connections: ConnectionUseCases;
  readonly flows: FlowUseCases;
  readonly feedback: FeedbackUseCases;
  readonly feedbackLog: FeedbackLogUseCases;
  readonly installations: InstallationUseCases;
  readonly policy: PolicyUseCases;
  readonly quotas: QuotaUseCases;
  readonly runs: RunUseCases;
  readonly serviceAccounts: ServiceAccountUseCases;
  /** Metered usage (calls, runs, tokens) of this workspace only. */
  readonly usage: UsageUseCases;
}

/**
 * Cheap: builds closures only; nothing is read until a use case runs. Mutations record their audit events through
 * `scope.audit` when the opener gives one (docs/architecture.md, "Audit").
 */
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
    auditLog: auditLogUseCases(ctx),
    connections: connectionUseCases(ctx),
    flows: flowUseCases(ctx),
    feedback: feedbackUseCases(ctx),
    feedbackLog: feedbackLogUseCases(ctx),
    installations: installationUseCases(ctx),
    policy: policyUseCases(ctx),
    quotas: quotaUseCases(ctx),
    runs: auditedRuns(ctx, runUseCases(ctx)),
    serviceAccounts: serviceAccountUseCases(ctx),
    usage: usageUseCases(ctx),
  };
}
