/**
 * A worker: claims runs from the shared queue and executes up to `concurrency` at a time. Any number of workers, in
 * any number of processes, share one database (run-queue.ts says why no run executes twice at once and none is
 * lost). A worker wakes when a run is queued (a direct `wake()` in process, NOTIFY on the channel across
 * processes), when the next sleep or expired lease is due, and on a slow fallback poll — never a busy loop.
 */
import { hostname } from 'node:os';
import { randomBytes, toHex } from '@flowgate/core';
import { type DbHandle, repos } from '@flowgate/db';
import { connectRemoteMcp } from '@flowgate/mcp-remote';
import type { McpConnector, RunLimits } from '@flowgate/run-engine';
import type { SecretBox } from '@flowgate/secrets';
import { observeQueueDepth } from '@flowgate/telemetry';
import { endedRunUsage, type RunUsageHooks } from '@flowgate/workspace';
import { AttemptAbandoned, type AttemptResult, type ExecuteDeps, executeAttempt } from './execute.js';
import { tracedAttempt } from './telemetry.js';

/** NOTIFY channel: a run became claimable (queued, or a concurrency slot was freed). */
export const RUNS_CHANNEL = 'flowgate_runs';
/** NOTIFY channel: a running run was asked to stop; the payload is its id. */
export const CANCEL_CHANNEL = 'flowgate_run_cancel';
/** NOTIFY channel: a run ended or went to sleep; the payload is its id (callers waiting for a result listen). */
export const ENDED_CHANNEL = 'flowgate_run_ended';
/** NOTIFY channel: a running run wrote events; the payload is its id (listen streams following the run read them). */
export const EVENTS_CHANNEL = 'flowgate_run_events';

export interface WorkerLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface WorkerOptions {
  db: DbHandle;
  secretBox: SecretBox;
  /** Runs executed at the same time by this worker. */
  concurrency: number;
  /** How long a claim holds a run without renewal; a worker that dies loses its runs after this. */
  leaseMs?: number;
  /** The slow fallback poll (missed notifications, clock drift). */
  pollMs?: number;
  allowPrivateNetwork?: boolean;
  limits?: Partial<RunLimits>;
  maxAttempts?: number;
  /** Opens sessions with remote MCP servers for :mcp steps and :llm :tools; the official SDK's client by default. */
  mcp?: McpConnector;
  log?: WorkerLog;
  /** Identifies the worker in leases (and logs); unique per process by default. */
  id?: string;
  /** A run ended or parked itself (waiting), as it now is: in-process callers waiting for it learn at once. */
  onSettled?: (runId: string, run: repos.RunRow) => void;
  /** Told of every run this worker ends (not a sleep), with its usage: the usage meter. Must not throw. */
  usage?: Pick<RunUsageHooks, 'runEnded'>;
  /** Called after every attempt (tests and metrics). */
  onAttempt?: (runId: string, result: AttemptResult | { kind: 'error' }) => void;
}

export interface Worker {
  readonly id: string;
  /** Runs executing now. */
  readonly active: number;
  start(): Promise<void>;
  /** A run may be claimable now (a start in this process, a freed slot). */
  wake(): void;
  /**
   * Reserves a free slot for a run this process is about to insert already leased to this worker (a caller waits for
   * it): `take` runs it at once, `release` gives the slot back. Null when every slot is busy, runs may be queued
   * (first come, first served: the queue goes first) or the worker stops.
   */
  reserve(): Reservation | null;
  /**
   * Stops claiming, lets in-flight attempts finish for up to `graceMs`, then abandons the rest and hands their leases
   * back so another worker resumes them at once.
   */
  stop(options?: { graceMs?: number }): Promise<void>;
}

export interface Reservation {
  owner: string;
  leaseMs: number;
  take(run: repos.RunRow): void;
  release(): void;
}

export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_POLL_MS = 30_000;
export const DEFAULT_MAX_ATTEMPTS = 25;

const silent: WorkerLog = { info: () => {}, warn: () => {}, error: () => {} };

interface InFlight {
  lease: repos.Lease;
  controller: AbortController;
  done: Promise<void>;
}

export function createWorker(options: WorkerOptions): Worker {
  const id = options.id ?? `${hostname()}-${process.pid}-${toHex(randomBytes(4))}`;
  const db = options.db.db;
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const log = options.log ?? silent;
  const deps: ExecuteDeps = {
    db,
    secretBox: options.secretBox,
    allowPrivateNetwork: options.allowPrivateNetwork ?? false,
    limits: options.limits ?? {},
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    endedChannel: ENDED_CHANNEL,
    eventsChannel: EVENTS_CHANNEL,
    mcp: options.mcp ?? connectRemoteMcp,
  };
  const inFlight = new Map<string, InFlight>();
  /** Slots promised to runs being inserted already leased to this worker. */
  let reserved = 0;
  const free = () => options.concurrency - inFlight.size - reserved;
  /**
   * The last pump ran out of slots (or failed), so runs may be waiting that no wake will announce again: an attempt's
   * end must look for them. Otherwise every claimable run was taken, and a run queued since woke the worker.
   */
  let saturated = false;
  let stopping = false;
  let started = false;
  let pumping: Promise<void> | null = null;
  let again = false;
  let timer: NodeJS.Timeout | null = null;
  let renewTimer: NodeJS.Timeout | null = null;
  const unlisten: Array<() => Promise<void>> = [];

  // The payload names the sender, so a worker skips the echo of its own notification (it has already pumped).
  const notifyOthers = () => {
    options.db.notify(RUNS_CHANNEL, id).catch(() => {});
  };

  /** One line per run this worker ends: what an operator tails to see work flowing (a sleep is not an end). */
  function logFinished(run: repos.RunRow): void {
    const from = run.startedAt ?? run.createdAt;
    const ms = run.finishedAt ? Math.max(0, run.finishedAt.getTime() - from.getTime()) : null;
    log.info({ runId: run.id, flow: run.flowSlug, status: run.status, ms }, 'run finished');
  }

  function schedule(ms: number): void {
    if (stopping) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void pump(), Math.max(10, Math.min(ms, pollMs)));
    timer.unref?.();
  }

  function launch(run: repos.RunRow): void {
    const lease: repos.Lease = { runId: run.id, workspaceId: run.workspaceId, owner: id };
    const controller = new AbortController();
    const done = (async () => {
      // An attempt that ended without parking a run or freeing a slot changed nothing another claim could take.
      let quiet = false;
      try {
        const result = await tracedAttempt(run, () => executeAttempt(deps, run, id, controller.signal));
        options.onAttempt?.(run.id, result);
        if (result.kind === 'abandoned' && result.why === 'shutdown') await repos.releaseLease(db, lease);
        if (result.kind === 'finished') {
          // ENDED_CHANNEL was notified by the finishing statement itself.
          options.onSettled?.(run.id, result.run);
          if (result.status !== 'waiting') {
            logFinished(result.run);
            options.usage?.runEnded(endedRunUsage({ ...result.run, status: result.status }));
          }
          if (result.freedSlot) notifyOthers();
          quiet = result.status !== 'waiting' && !result.freedSlot;
        }
      } catch (error) {
        options.onAttempt?.(run.id, { kind: 'error' });
        // The database or a port failed mid-attempt: hand the run back, it resumes by replay.
        log.error(
          { runId: run.id, err: error instanceof Error ? error.message.slice(0, 300) : 'unknown' },
          'run attempt failed',
        );
        await repos.releaseLease(db, lease).catch(() => {});
      } finally {
        inFlight.delete(run.id);
        if (!stopping && (saturated || !quiet)) void pump();
      }
    })();
    inFlight.set(run.id, { lease, controller, done });
  }

  async function pumpOnce(): Promise<void> {
    while (!stopping && free() > 0) {
      const want = free();
      const claimed = await repos.claimRuns(db, { owner: id, leaseMs, limit: want });
      for (const run of claimed) launch(run);
      // Fewer than asked for: nothing else is claimable now (a claim already skips what others hold).
      if (claimed.length < want) break;
    }
    if (stopping) return;
    if (free() <= 0) {
      saturated = true;
      schedule(pollMs);
      return;
    }
    const due = await repos.nextDueAt(db);
    saturated = false;
    schedule(due === null ? pollMs : due.getTime() - Date.now());
  }

  /** One pump at a time; a wake during a pump runs another right after. */
  async function pump(): Promise<void> {
    if (stopping) return;
    if (pumping) {
      again = true;
      return pumping;
    }
    pumping = (async () => {
      do {
        again = false;
        try {
          await pumpOnce();
        } catch (error) {
          saturated = true;
          log.error(
            { err: error instanceof Error ? error.message.slice(0, 300) : 'unknown' },
            'run claim failed',
          );
          schedule(Math.min(pollMs, 1_000));
        }
      } while (again && !stopping);
    })();
    try {
      await pumping;
    } finally {
      pumping = null;
    }
  }

  /** Renews every lease held; a lost lease abandons its attempt, a cancellation request stops the run. */
  async function renewAll(only?: string): Promise<void> {
    for (const [runId, f] of inFlight) {
      if (only !== undefined && runId !== only) continue;
      if (f.controller.signal.aborted) continue;
      try {
        const renewed = await repos.renewLease(db, f.lease, leaseMs);
        if (!renewed) f.controller.abort(new AttemptAbandoned('lease_lost'));
        else if (renewed.cancelRequested) f.controller.abort(new Error('the run was cancelled'));
      } catch (error) {
        log.warn(
          { runId, err: error instanceof Error ? error.message.slice(0, 300) : 'unknown' },
          'lease renewal failed',
        );
      }
    }
  }

  return {
    id,
    get active() {
      return inFlight.size;
    },
    async start() {
      if (started) return;
      started = true;
      unlisten.push(
        await options.db.listen(RUNS_CHANNEL, (from) => {
          if (from !== id) void pump();
        }),
      );
      unlisten.push(
        await options.db.listen(CANCEL_CHANNEL, (runId) => {
          if (inFlight.has(runId)) void renewAll(runId);
        }),
      );
      const unobserve = observeQueueDepth(() => repos.countClaimable(db));
      unlisten.push(async () => unobserve());
      renewTimer = setInterval(() => void renewAll(), Math.max(50, Math.floor(leaseMs / 3)));
      renewTimer.unref?.();
      log.info({ workerId: id, concurrency: options.concurrency }, 'worker started');
      void pump();
    },
    wake() {
      if (started && !stopping) void pump();
    },
    reserve() {
      // While runs may be queued (the last pump ran out of slots), a new run queues behind them: handed a freed slot
      // ahead of them, the newest calls would answer fast while the oldest waited on (a tail of seconds under load).
      if (!started || stopping || saturated || free() <= 0) return null;
      reserved++;
      let open = true;
      return {
        owner: id,
        leaseMs,
        take(run) {
          if (!open) return;
          open = false;
          reserved--;
          // Stopping meanwhile: hand the run back so any worker resumes it at once instead of after the lease.
          if (stopping) {
            void repos
              .releaseLease(db, { runId: run.id, workspaceId: run.workspaceId, owner: id })
              .catch(() => {});
            return;
          }
          launch(run);
        },
        release() {
          if (!open) return;
          open = false;
          reserved--;
          // Runs queued while the slot was promised would otherwise wait for the next attempt's end or the poll.
          if (saturated) void pump();
        },
      };
    },
    async stop(stopOptions = {}) {
      if (stopping) return;
      stopping = true;
      if (timer) clearTimeout(timer);
      await pumping?.catch(() => {});
      const grace = stopOptions.graceMs ?? 10_000;
      const all = Promise.all([...inFlight.values()].map((f) => f.done));
      let timeout: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        all.then(() => false),
        new Promise<boolean>((resolve) => {
          timeout = setTimeout(() => resolve(true), grace);
        }),
      ]);
      if (timeout) clearTimeout(timeout);
      if (timedOut) {
        for (const f of inFlight.values()) f.controller.abort(new AttemptAbandoned('shutdown'));
        await all;
      }
      // Leases stay renewed while attempts finish, so a slow shutdown never looks like a dead worker.
      if (renewTimer) clearInterval(renewTimer);
      for (const u of unlisten.splice(0)) await u().catch(() => {});
      log.info({ workerId: id }, 'worker stopped');
    },
  };
}
