import { isFinalRunStatus } from '@flowgate/core';
import type { DbHandle, repos } from '@flowgate/db';
import type { SecretBox } from '@flowgate/secrets';
import { CANCEL_CHANNEL, createWorker, ENDED_CHANNEL, RUNS_CHANNEL, type Worker } from '@flowgate/worker';
import type { RunHooks } from '@flowgate/workspace';
import type { Logger } from 'pino';
import type { GatewayConfig } from './config.js';

/**
 * The gateway's side of runs: how starts and cancellations reach workers (a direct wake for the in-process worker,
 * NOTIFY for every other worker process), and the in-process worker itself when this process runs one.
 */
export interface RunWorkers {
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

/** How long a run that settled with nobody waiting is kept for its caller: it only covers the start/wait race. */
const EARLY_TTL_MS = 5_000;
const EARLY_MAX = 1_024;

export function createRunWorkers(options: {
  db: DbHandle;
  secretBox: SecretBox;
  config: GatewayConfig;
  logger: Logger;
}): RunWorkers {
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
  let unlisten: (() => Promise<void>) | null = null;
  const notify = (channel: string, payload: string) => {
    options.db.notify(channel, payload).catch((error: unknown) => {
      options.logger.warn(
        { channel, err: error instanceof Error ? error.message.slice(0, 200) : 'unknown' },
        'run notification failed',
      );
    });
  };
  return {
    hooks: {
      queued() {
        local?.wake();
        // Named as the local worker's, which was just woken directly and skips the echo.
        notify(RUNS_CHANNEL, local?.id ?? '');
      },
      cancelRequested(runId) {
        notify(CANCEL_CHANNEL, runId);
      },
      settled(runId, timeoutMs, signal) {
        const held = early.get(runId);
        if (held) {
          early.delete(runId);
          return Promise.resolve(held.run);
        }
        if (signal?.aborted) return Promise.resolve(null);
        return new Promise<repos.RunRow | null>((resolve) => {
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
            resolve(run);
          }
          set.add(done);
          signal?.addEventListener('abort', aborted, { once: true });
        });
      },
      handoff() {
        return local?.reserve() ?? null;
      },
      maxLiveRuns: options.config.maxLiveRunsPerWorkspace,
      maxRunDurationMs: options.config.runMaxDurationMs,
    },
    async startLocal() {
      if (local) return local;
      local = createWorker({
        db: options.db,
        secretBox: options.secretBox,
        concurrency: options.config.workerConcurrency,
        leaseMs: options.config.runLeaseMs,
        allowPrivateNetwork: options.config.allowPrivateNetwork,
        limits: options.config.runLimits,
        log: options.logger,
        onSettled: settle,
      });
      await local.start();
      return local;
    },
    get local() {
      return local;
    },
    async listen() {
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
