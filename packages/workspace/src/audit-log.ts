/** Reading a workspace's audit log: what its callers and admins did, newest first. */
import { repos } from '@flowgate/db';
import type { UseCaseContext } from './scope.js';

export const AUDIT_OUTCOMES = ['ok', 'error', 'blocked', 'denied'] as const;
export type AuditEntryOutcome = (typeof AUDIT_OUTCOMES)[number];

/** One row of the log as stored (arguments were redacted on the way in). */
export interface AuditEntryRecord {
  id: number;
  workspaceId: string;
  at: string;
  requestId: string | null;
  principalType: string;
  principalId: string;
  keyId: string | null;
  /** `tools/call`, `resources/read`, `prompts/get` or `admin`. */
  kind: string;
  /** Tool name, resource URI or admin action name. */
  action: string;
  arguments: unknown;
  outcome: AuditEntryOutcome;
  errorCode: string | null;
  blockers: unknown;
  runId: string | null;
  resourceUris: string[] | null;
  reason: string | null;
  clientName: string | null;
  clientVersion: string | null;
  protocolVersion: string | null;
  durationMs: number | null;
  /** Identical refused calls folded into this row. */
  count: number;
}

/** Optional narrowing; every field is an exact match, `since` inclusive and `until` exclusive. */
export interface AuditQuery {
  keyId?: string | undefined;
  /** The action: a tool name, resource URI or admin action name. */
  action?: string | undefined;
  outcome?: AuditEntryOutcome | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

export interface AuditLogUseCases {
  /** Newest first; `before` is the id a previous page ended at. */
  list(input: {
    limit: number;
    before: number | null;
    filter?: AuditQuery;
  }): Promise<{ items: AuditEntryRecord[]; nextBefore: number | null }>;
}

export function auditLogUseCases(ctx: UseCaseContext): AuditLogUseCases {
  return {
    async list({ limit, before, filter }) {
      const rows = await repos.listAuditEntries(
        ctx.db,
        ctx.workspaceId,
        { limit: limit + 1, beforeId: before ?? undefined },
        filter ?? {},
      );
      const items = rows.slice(0, limit).map((r) => ({ ...r, at: r.at.toISOString() }));
      return { items, nextBefore: rows.length > limit ? (items.at(-1)?.id ?? null) : null };
    },
  };
}
