/**
 * What one replica changes, every replica hears: the domain's change listener applied to this process's caches at
 * once and published as a NOTIFY, and this process's LISTEN connection (one per process: postgres.js and PGlite keep
 * every channel on one) turning notifications from any replica into cache invalidations and wakes of the open
 * `subscriptions/listen` streams (`ListenHub`).
 *
 * Channels and payloads carry ids only, never data or secrets: the runs' channels (`@flowgate/worker`) the run id,
 * ACCESS_CHANNEL `{k, w, id?}` (kind, workspace id, account or key id). A woken stream reads through its own
 * workspace-scoped queries, so a notification — even a forged one — causes at most a read the stream was entitled to.
 * Where nothing may listen (a per-request database on Workers) notifications are still sent, so long-lived replicas
 * hear that runtime's changes, and its own streams read on their short poll.
 */
import type { DbHandle } from '@flowgate/db';
import { ENDED_CHANNEL, EVENTS_CHANNEL } from '@flowgate/worker';
import type { ChangeListener } from '@flowgate/workspace';
import type { ListenHub } from '@flowgate/workspace-mcp';
import { z } from 'zod';

/** NOTIFY channel: what a workspace's principals may see changed (policy, an account or key, a flow's live version). */
export const ACCESS_CHANNEL = 'flowgate_access_changed';

/** Ids as the gateway issues them; anything longer or stranger in a payload is dropped. */
const Id = z.string().regex(/^[A-Za-z0-9_.:-]{1,200}$/);

const AccessChange = z.discriminatedUnion('k', [
  z.object({ k: z.literal('workspace'), w: Id }),
  z.object({ k: z.literal('flows'), w: Id }),
  z.object({ k: z.literal('account'), w: Id, id: Id }),
  z.object({ k: z.literal('key'), w: Id, id: Id }),
]);
export type AccessChange = z.infer<typeof AccessChange>;

/** This process's caches of what a change may have made stale. */
export interface LocalCaches {
  serviceAccountChanged(serviceAccountId: string): void;
  keyRevoked(keyId: string): void;
  workspaceChanged(workspaceId: string): void;
}

export interface ChangeFeed {
  /** The domain's change listener (`WorkspaceDeps.changes`). */
  readonly changes: ChangeListener;
  /** Starts hearing every replica's changes; without a LISTEN (per-request database) streams keep their short poll. */
  listen(): Promise<void>;
  stop(): Promise<void>;
}

export interface ChangeFeedLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

export function createChangeFeed(options: {
  db: DbHandle;
  hub: ListenHub;
  caches: LocalCaches;
  log: ChangeFeedLog;
}): ChangeFeed {
  const { db, hub, caches, log } = options;
  const unlisten: Array<() => Promise<void>> = [];
  const failed = (what: string) => (error: unknown) =>
    log.warn({ err: error instanceof Error ? error.message.slice(0, 200) : 'unknown' }, what);

  const apply = (change: AccessChange) => {
    if (change.k === 'workspace') caches.workspaceChanged(change.w);
    else if (change.k === 'account') caches.serviceAccountChanged(change.id);
    else if (change.k === 'key') caches.keyRevoked(change.id);
    hub.wake({ kind: 'access', workspaceId: change.w });
  };
  const publish = (change: AccessChange) => {
    // Heard back through LISTEN when it is up (the echo wakes this process's streams); else woken here directly.
    if (hub.live) {
      if (change.k === 'workspace') caches.workspaceChanged(change.w);
      else if (change.k === 'account') caches.serviceAccountChanged(change.id);
      else if (change.k === 'key') caches.keyRevoked(change.id);
    } else apply(change);
    db.notify(ACCESS_CHANNEL, JSON.stringify(change)).catch(failed('change notification failed'));
  };
  const heard = (payload: string) => {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return;
    }
    const change = AccessChange.safeParse(json);
    if (change.success) apply(change.data);
  };
  const runWoke = (runId: string) => {
    if (Id.safeParse(runId).success) hub.wake({ kind: 'run', runId });
  };

  return {
    changes: {
      serviceAccountChanged: (id, workspaceId) => publish({ k: 'account', w: workspaceId, id }),
      keyRevoked: (id, workspaceId) => publish({ k: 'key', w: workspaceId, id }),
      workspaceChanged: (workspaceId) => publish({ k: 'workspace', w: workspaceId }),
      flowsChanged: (workspaceId) => publish({ k: 'flows', w: workspaceId }),
    },
    async listen() {
      if (unlisten.length > 0) return;
      try {
        unlisten.push(await db.listen(ENDED_CHANNEL, runWoke));
        unlisten.push(await db.listen(EVENTS_CHANNEL, runWoke));
        unlisten.push(await db.listen(ACCESS_CHANNEL, heard));
        hub.setLive(true);
      } catch (error) {
        failed('no LISTEN for listen streams: they read every poll interval')(error);
        await Promise.all(unlisten.splice(0).map((stop) => stop().catch(() => {})));
      }
    },
    async stop() {
      hub.setLive(false);
      await Promise.all(unlisten.splice(0).map((stop) => stop().catch(() => {})));
    },
  };
}
