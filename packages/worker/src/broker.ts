/**
 * The run broker: the workers' side of the workspace domain's run port (`RunHooks` of `@flowgate/workspace`). It tells
 * workers of starts and cancellations (a direct wake for the in-process worker, NOTIFY for every other worker
 * process), hands a waited run to the in-process worker at its insert, and wakes callers waiting for a run when it
 * settles — with the run in the domain's terms (`SettledRun`), mapped here, so no database row crosses the port.
 *
 * This package depends on `@flowgate/workspace` (the port and its mapping), never the reverse: the domain declares
 * what it needs, the worker implements it, and the app only composes the two.
 */
import { isFinalRunStatus } from '@flowgate/core';
import { type Database, type DbHandle, repos } from '@flowgate/db';
import type { SecretBox } from '@flowgate/secrets';
import {
  type HandedOffRun,
  type RunHandoff,
  type RunHooks,
  type RunUsageHooks,
  type SettledRun,
  settledRunOf,
} from '@flowgate/workspace';
import {
  CANCEL_CHANNEL,
  createWorker,
  ENDED_CHANNEL,
  type Reservation,
  RUNS_CHANNEL,
  type Worker,
  type WorkerLog,
  type WorkerOptions,
} from './worker.js';

export interface RunBroker {
  /** The domain's run port, given to `openWorkspace` as `deps.runs`. */
  hooks: RunHooks;
  /** Listens for runs ending in other processes (callers waiting for a result). */
  listen(): Promise<void>;
  /** Starts the in-process worker (serve and dev unless told not to). */
  startLocal(): Promise<Worker>;
  readonly local: Worker | null;
  stop(): Promise<void>;
  /** Entries held for callers waiting on runs (tests check that every ended wait left none behind). */
  pending(): { waiters: number; early: number };
}

export interface RunBrokerOptions {
  db: DbHandle;
  secretBox: SecretBox;
  log: WorkerLog;
  /** How the in-process worker runs, when this process starts one. */
  worker: Pick<WorkerOptions, 'concurrency' | 'leaseMs' | 'allowPrivateNetwork' | 'limits'>;
  /** Told of every run the in-process worker ends (the usage meter). */
  usage?: Pick<RunUsageHooks, 'runEnded'> | undefined;
  /** Live runs one workspace may have. */
  maxLiveRuns?: number;
  /** Whole-life bound of a run in ms, sleeps included. */
  maxRunDurationMs?: number;
  /**
   * Where no connection outlives a request (Workers) there is no LISTEN: a waiting caller reads the run's status
   * every `pollMs` instead of being woken by the NOTIFY of the worker that ran it. `listen()` then does nothing;
   * NOTIFY for queued runs and cancellations is still sent, so worker processes react at once.
   */
  wakeUps?: { pollMs: number };
}

/** A poll round of `settled`: resolves null (read the run again) after `ms`, or at once when `signal` aborts. */
function pollRound(ms: number, signal: AbortSignal | undefined): Promise<null> {
  if (signal?.aborted) return Promise.resolve(null);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve(null);
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Whether the run the domain handed over is the stored row its insert returned (what `runs.start` passes): then the
 * worker starts it as it is. A check of the fields the worker reads, not a cast, so anything else is read first.
 */
function isStoredRun(run: HandedOffRun): run is repos.RunRow {
  return (
    'flowSlug' in run &&
    typeof run.flowSlug === 'string' &&
    'status' in run &&
    typeof run.status === 'string' &&
    'attempts' in run &&
    typeof run.attempts === 'number' &&
    'input' in run &&
    'secretInputs' in run &&
    'deadlineAt' in run
  );
}

/**
 * A worker's reserved slot as the domain's `RunHandoff`: the port names the run in domain terms; the stored row the
 * domain passes through is started at once, and a run named only by its ids is read under its lease first.
 */
export function handoffOf(db: Database, reservation: Reservation | null, log: WorkerLog): RunHandoff | null {
  if (!reservation) return null;
  return {
    owner: reservation.owner,
    leaseMs: reservation.leaseMs,
    take(run) {
      if (isStoredRun(run)) {
        reservation.take(run);
        return;
      }
      repos.getRun(db, run.workspaceId, run.id).then(
        (row) => (row ? reservation.take(row) : reservation.release()),
        (error: unknown) => {
          // Its lease runs out and any worker resumes it: a late start, not a lost run.
          reservation.release();
          log.warn(
            { runId: run.id, err: error instanceof Error ? error.message.slice(0, 200) : 'unknown' },
            'handed-off run read failed',
          );
        },
      );
    },
    release: () => reservation.release(),
  };
}

/** How long a run that settled with nobody waiting is kept for its caller: it only covers the start/wait race. */
const EARLY_TTL_MS = 5_000;
const EARLY_MAX = 1_024;

export function createRunBroker(options: RunBrokerOptions): RunBroker {
  let local: Worker | null = null;
  /** Callers waiting for a run to settle, by run id; given the run as it settled when the local worker ran it. */
  const waiting = new Map<string, Set<(run: repos.RunRow | null) => void>>();
  /**
   * Runs that settled with nobody waiting yet: a run handed to the in-process worker may end before its caller starts
   * waiting. The next wait for one returns at once (and consumes it), with the run only when it ended (a parked run
   * may be running again by then). Kept only EARLY_TTL_MS and at most EARLY_MAX: a run whose caller gave up before it
   * ended (a wait that timed out) would otherwise hold its whole row for good.
   */
  const early = new Map<string, { run: repos.RunRow | null; at: number }>();
  let sweep: NodeJS.Timeout | null = null;
  const prune = () => {
    const cutoff = Date.now() - EARLY_TTL_MS;
    // Insertion order is age order (an update re-inserts), so the expired ones are at the front.
    for (const [runId, entry] of early) {
      if (entry.at > cutoff && early.size <= EARLY_MAX) break;
      early.delete(runId);
    }
    if (sweep === null && early.size > 0) {
      sweep = setTimeout(() => {
        sweep = null;
        prune();
      }, EARLY_TTL_MS);
      sweep.unref();
    }
  };
  const settle = (runId: string, run?: repos.RunRow) => {
    const set = waiting.get(runId);
    if (!set) {
      // The NOTIFY echo of a run the local worker just reported keeps the run it reported (a final state is final).
      if (!run && early.get(runId)?.run) return;
      early.delete(runId);
      early.set(runId, {
        run: run && isFinalRunStatus(run.status) ? run : null,
        at: Date.now(),
      });
      prune();
      return;
    }
    waiting.delete(runId);
    for (const wake of set) wake(run ?? null);
  };
  // Rows are kept as the worker reported them and mapped only for a caller that gets one.
  const domain = (run: repos.RunRow | null): SettledRun | null => (run ? settledRunOf(run) : null);
  let unlisten: (() => Promise<void>) | null = null;
  const notify = (channel: string, payload: string) => {
    options.db.notify(channel, payload).catch((error: unknown) => {
      options.log.warn(
        { channel, err: error instanceof Error ? error.message.slice(0, 200) : 'unknown' },
        'run notification failed',
      );
    });
  };
  const hooks: RunHooks = {
    queued() {
      local?.wake();
      // Named as the local worker's, which was just woken directly and skips the echo.
      notify(RUNS_CHANNEL, local?.id ?? '');
    },
    cancelRequested(runId) {
      notify(CANCEL_CHANNEL, runId);
    },
    ended(runId) {
      // As a worker's ending statement does: waiting callers and listen streams on every replica re-read the run.
      notify(ENDED_CHANNEL, runId);
    },
    settled(runId, timeoutMs, signal) {
      // The domain's wait reads the run after each round, so a round that only sleeps is the poll.
      if (options.wakeUps) return pollRound(Math.min(options.wakeUps.pollMs, timeoutMs), signal);
      const held = early.get(runId);
      if (held) {
        early.delete(runId);
        return Promise.resolve(domain(held.run));
      }
      if (signal?.aborted) return Promise.resolve(null);
      return new Promise<SettledRun | null>((resolve) => {
        let set = waiting.get(runId);
        if (!set) {
          set = new Set();
          waiting.set(runId, set);
        }
        const timer = setTimeout(() => done(null), timeoutMs);
        const aborted = () => done(null);
        // Every way out releases the timer, the abort listener and the map entry: nothing outlives the wait.
        function done(run: repos.RunRow | null) {
          clearTimeout(timer);
          signal?.removeEventListener('abort', aborted);
          waiting.get(runId)?.delete(done);
          if (waiting.get(runId)?.size === 0) waiting.delete(runId);
          resolve(domain(run));
        }
        set.add(done);
        signal?.addEventListener('abort', aborted, { once: true });
      });
    },
    handoff() {
      return handoffOf(options.db.db, local?.reserve() ?? null, options.log);
    },
    ...(options.maxLiveRuns !== undefined ? { maxLiveRuns: options.maxLiveRuns } : {}),
    ...(options.maxRunDurationMs !== undefined ? { maxRunDurationMs: options.maxRunDurationMs } : {}),
  };
  return {
    hooks,
    async startLocal() {
      if (local) return local;
      local = createWorker({
        db: options.db,
        secretBox: options.secretBox,
        ...options.worker,
        log: options.log,
        onSettled: settle,
        ...(options.usage ? { usage: options.usage } : {}),
      });
      await local.start();
      return local;
    },
    get local() {
      return local;
    },
    async listen() {
      if (options.wakeUps) return;
      unlisten ??= await options.db.listen(ENDED_CHANNEL, (runId) => settle(runId));
    },
    pending() {
      let waiters = 0;
      for (const set of waiting.values()) waiters += set.size;
      return { waiters, early: early.size };
    },
    async stop() {
      if (sweep) clearTimeout(sweep);
      sweep = null;
      early.clear();
      await local?.stop();
      await unlisten?.().catch(() => {});
      unlisten = null;
    },
  };
}
