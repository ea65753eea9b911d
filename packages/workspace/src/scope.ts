import type { Database } from '@flowgate/db';
import type { SecretBox } from '@flowgate/secrets';
import type { AuditRecorder } from './audit.js';
import type { RunRecord, RunResult } from './runs/index.js';

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
  /**
   * The health check of `mcp-server` connections: opens a session, lists the tools, closes. Without it such checks
   * report unhealthy, saying the deployment cannot check MCP servers.
   */
  mcpCheck?: McpCheck;
  /** The clock (tests inject one). */
  now?: () => Date;
  /**
   * Told after a mutation that changes who may do what, so caches outside the domain (the gateway's authenticator
   * and workspace cache) drop what they hold at once, whichever edge made the change.
   */
  changes?: ChangeListener;
  /** How run starts and cancellations reach the workers; without it runs are queued and nobody is told. */
  runs?: RunHooks;
  /** Told of runs started and of runs the domain ends itself (the usage meter); nothing is told without it. */
  usage?: RunUsageHooks;
}

/**
 * Where run usage goes (the gateway's usage meter): starts from the domain, ends from whoever ended the run — the
 * worker that ran it, or the domain for a run cancelled before a worker had it. Must not throw or block.
 */
export interface RunUsageHooks {
  runStarted(run: { workspaceId: string; flowSlug: string }): void;
  runEnded(run: EndedRunUsage): void;
}

/** A run as it ended, with the usage it accumulated over all its attempts. */
export interface EndedRunUsage {
  workspaceId: string;
  flowSlug: string;
  status: 'completed' | 'failed' | 'cancelled' | 'timed-out';
  steps: number;
  httpCalls: number;
  llmTokens: number;
}

/** The usage record of a run that ended, from its stored counters. */
export function endedRunUsage(run: {
  workspaceId: string;
  flowSlug: string;
  status: EndedRunUsage['status'];
  usage: Record<string, number>;
}): EndedRunUsage {
  const count = (name: string) => {
    const n = run.usage[name];
    return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
  };
  return {
    workspaceId: run.workspaceId,
    flowSlug: run.flowSlug,
    status: run.status,
    steps: count('steps'),
    httpCalls: count('httpCalls'),
    llmTokens: count('llmTokens'),
  };
}

/** Where and how an `mcp-server` health check connects; the outbound address policy is the implementation's to apply. */
export interface McpCheckTarget {
  /** The Streamable HTTP endpoint (the connection's base URL). */
  url: URL;
  /** The connection's auth header and fixed headers; nothing else of ours is sent. */
  headers: Record<string, string>;
  /** Bound on each request of the check. */
  timeoutMs: number;
  /** Loopback and private addresses are refused unless this is set. */
  allowPrivateNetwork: boolean;
}

/** What a server said about itself: untrusted, bounded and stored by the caller. */
export interface McpCheckResult {
  /** The protocol revision agreed, e.g. `2025-06-18`. */
  protocolVersion: string;
  serverName: string;
  serverVersion?: string | undefined;
  /** Every tool name listed (all pages). */
  tools: string[];
}

/** Rejects with a clear message when the server cannot be used (refused address, HTTP error, protocol error). */
export type McpCheck = (target: McpCheckTarget) => Promise<McpCheckResult>;

/**
 * The domain's port to the workers, in the domain's own terms (run ids, `SettledRun`): `@flowgate/worker`'s run broker
 * implements it (`createRunBroker`) and maps its stored runs to these types itself, so no database row crosses it.
 */
/** What a committed mutation changed, for holders of cached copies; never throws. */
export interface ChangeListener {
  /** A service account's status or capabilities changed. */
  serviceAccountChanged(serviceAccountId: string, workspaceId: string): void;
  /** An API key was revoked. */
  keyRevoked(keyId: string, workspaceId: string): void;
  /** A workspace's settings changed (its MCP policy) or it was created. */
  workspaceChanged(workspaceId: string): void;
  /** A flow went live at a version, or an installation changed: what a per-flow endpoint lists may differ. */
  flowsChanged?(workspaceId: string): void;
}

export interface RunHooks {
  /** A run became claimable: wake the in-process worker and notify the others. */
  queued(): void;
  /** A running run was asked to stop: tell the worker holding it. */
  cancelRequested(runId: string): void;
  /** A run ended without a worker (cancelled while queued or asleep): tell whoever follows it. */
  ended?(runId: string): void;
  /**
   * Resolves when the run may have ended or parked (a notification from whichever worker ran it), after `timeoutMs`,
   * or when `signal` aborts (its timer and listener are released either way): with the run as it settled when a
   * worker of this process ran it (no read needed), else null (read it again).
   */
  settled?(runId: string, timeoutMs: number, signal?: AbortSignal): Promise<SettledRun | null>;
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

/** A run as the worker of this process that ran it left it: what a waiting caller is answered with. */
export interface SettledRun {
  /** The run's workspace: a wait takes it only for a run of its own workspace (tenancy). */
  workspaceId: string;
  run: RunRecord;
  result: RunResult | null;
}

/**
 * The run a handoff starts, named by what the domain knows of it. The domain passes the run exactly as its insert
 * returned it, unread; the worker package recognises its own stored row in it and starts it with no second read.
 */
export interface HandedOffRun {
  readonly id: string;
  readonly workspaceId: string;
}

/** A reserved slot of an in-process worker: `take` it with the run inserted under its lease, or `release` it. */
export interface RunHandoff {
  owner: string;
  leaseMs: number;
  /** A property, not a method: its parameter is checked strictly, so a worker's own reservation cannot stand in. */
  take: (run: HandedOffRun) => void;
  release(): void;
}

/** Who acts; recorded with what they write. */
export interface Actor {
  kind: 'service_account' | 'user' | 'operator';
  id: string;
  /** The API key they called with, when they did. */
  keyId?: string | null;
}

/** Every use case acts in exactly one workspace, for one actor. */
export interface WorkspaceScope {
  workspaceId: string;
  actor: Actor;
  /** The request acted for, named in audit events. */
  requestId?: string | null;
  /** Where mutations record their audit events; none recorded without it (see `audit.ts`). */
  audit?: AuditRecorder | undefined;
}

export interface UseCaseContext extends WorkspaceScope {
  deps: WorkspaceDeps;
  db: Database;
  now(): Date;
}
