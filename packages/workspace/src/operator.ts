/**
 * What the deployment's operator does outside any one workspace: create workspaces, list them, rank their usage. Creating one is
 * recorded as the new workspace's first audit event.
 */
import { AppError } from '@flowgate/core';
import { repos } from '@flowgate/db';
import { type AuditRecorder, audited } from './audit.js';
import type { Page } from './flows/records.js';
import type { Actor, WorkspaceDeps } from './scope.js';
import { type UsageQuery, usageByWorkspace, type WorkspaceUsage } from './usage/index.js';

export interface WorkspaceRecord {
  id: string;
  name: string;
  createdAt: string;
}

export interface OperatorScope {
  actor: Actor;
  requestId?: string | null;
  audit?: AuditRecorder | undefined;
}

export interface Operator {
  readonly workspaces: {
    create(input: { id: string; name: string }): Promise<WorkspaceRecord>;
    /** In id order, so a cursor resumes exactly. */
    list(input: { limit: number; after: string | null }): Promise<Page<WorkspaceRecord>>;
  };
  /**
   * Workspaces with usage in the range (whole UTC days), most calls first, at most 200; `daily` is calls per day.
   * Rejects with `invalid_usage_query` when the range is out of bounds.
   */
  usageByWorkspace(query: Omit<UsageQuery, 'groupBy'>): Promise<WorkspaceUsage[]>;
}

const record = (row: repos.WorkspaceRow): WorkspaceRecord => ({
  id: row.id,
  name: row.name,
  createdAt: row.createdAt.toISOString(),
});

export function openOperator(deps: Pick<WorkspaceDeps, 'db' | 'changes'>, scope: OperatorScope): Operator {
  return {
    workspaces: {
      create(input) {
        return audited(
          { ...scope, workspaceId: input.id },
          'workspaces.create',
          { ok: () => ({ arguments: input }) },
          async () => {
            const row = await repos.createWorkspace(deps.db, input);
            if (!row) throw new AppError('conflict', `workspace ${input.id} already exists`);
            deps.changes?.workspaceChanged(row.id);
            return record(row);
          },
        );
      },
      async list({ limit, after }) {
        const rows = await repos.listWorkspaces(deps.db, { limit: limit + 1, afterId: after ?? undefined });
        const items = rows.slice(0, limit).map(record);
        return { items, nextAfter: rows.length > limit ? (items.at(-1)?.id ?? null) : null };
      },
    },
    usageByWorkspace: (query) => usageByWorkspace(deps.db, query),
  };
}
