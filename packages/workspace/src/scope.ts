import type { Database, repos } from '@flowgate/db';

type RunRow = repos.RunRow;

import type { SecretBox } from '@flowgate/secrets';

/** What the workspace use cases run on; one set per process. */
export interface WorkspaceDeps {
  db: Database;
  secretBox: SecretBox;
  /** Outbound requests to addresses users configured (connection health checks). */
  outbound: {
    /** Loopback, private and link-local addresses are refused unless this is set (development and tests). */
    allowPrivateNetwork: boolean;
    /** Bound on one health-check request. */
    timeoutMs: number;
  };
  /** The clock (tests inject one). */
  now?: () => Date;
  /** How run starts and cancellations reach the workers; without it runs are queued and nobody is told. */
  runs?: RunHooks;
}

export interface RunHooks {
  /** A run became claimable: wake the in-process worker and notify the others. */
  queued(): void;
  /** A running run was asked to stop: tell the worker holding it. */
  cancelRequested(runId: string): void;
  /**
   * Resolves when the run may have ended or parked (a notification from whichever worker ran it), after `timeoutMs`,
   * or when `signal` aborts (its timer and listener are released either way): with the run as it settled when a
   * worker of this process ran it (no read needed), else null (read it again).
   */
  settled?(runId: string, timeoutMs: number, signal?: AbortSignal): Promise<RunRow | null>;
  /**
   * A worker of this process with a free slot, reserved for a run about to start whose caller waits for its end: the
   * run is inserted already leased to it and runs at once, with no queue round. Null when there is none.
   */
  handoff?(): RunHandoff | null;
  /** Live runs one workspace may have (default 1,000). */
  maxLiveRuns?: number;
  /** Whole-life bound of a run in ms, sleeps included (default 24 h). */
  maxRunDurationMs?: number;
}

/** A reserved slot of an in-process worker: `take` it with the run inserted under its lease, or `release` it. */
export interface RunHandoff {
  owner: string;
  leaseMs: number;
  take(run: RunRow): void;
  release(): void;
}

/** Who acts; recorded with what they write. */
export interface Actor {
  kind: 'service_account' | 'user' | 'operator';
  id: string;
}

/** Every use case acts in exactly one workspace, for one actor. */
export interface WorkspaceScope {
  workspaceId: string;
  actor: Actor;
}

export interface UseCaseContext extends WorkspaceScope {
  deps: WorkspaceDeps;
  db: Database;
  now(): Date;
}
