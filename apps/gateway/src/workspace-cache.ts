import { type Database, repos, type WorkspacePolicy } from '@flowgate/db';

export interface WorkspaceState {
  exists: boolean;
  policy: WorkspacePolicy;
}

/**
 * Per-replica cache of workspace existence and MCP policy. Entries live `ttlMs` (default 5 s) so a policy
 * change made on another replica applies within that bound; this replica invalidates at once on write.
 */
export function createWorkspaceCache(db: Database, ttlMs = 5_000, maxEntries = 10_000) {
  const entries = new Map<string, { state: WorkspaceState; until: number }>();
  return {
    /** How stale a policy this replica serves may be (the MCP lists' cache hints follow it). */
    ttlMs,
    /**
     * The cached state while it is fresh, else undefined (then `get`). The same object until the entry is replaced
     * (expiry, invalidation), so what a caller derived from it stays valid exactly as long as it is returned.
     */
    peek(workspaceId: string): WorkspaceState | undefined {
      const hit = entries.get(workspaceId);
      return hit && hit.until > Date.now() ? hit.state : undefined;
    },
    async get(workspaceId: string): Promise<WorkspaceState> {
      const now = Date.now();
      const hit = entries.get(workspaceId);
      if (hit && hit.until > now) return hit.state;
      const ws = await repos.getWorkspace(db, workspaceId);
      const state: WorkspaceState = ws
        ? { exists: true, policy: await repos.getPolicy(db, workspaceId) }
        : { exists: false, policy: repos.DEFAULT_POLICY };
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(workspaceId, { state, until: now + ttlMs });
      return state;
    },
    invalidate(workspaceId: string) {
      entries.delete(workspaceId);
    },
  };
}
export type WorkspaceCache = ReturnType<typeof createWorkspaceCache>;
