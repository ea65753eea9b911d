import { type DbHandle, repos } from '@flowgate/db';
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
}

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
   * may be running again by then); bounded, oldest dropped first.
   */
  const early = new Map<string, repos.RunRow | null>();
  const EARLY_MAX = 1_024;
  const settle = (runId: string, run?: repos.RunRow) => {
    const set = waiting.get(runId);
    if (!set) {
      // The NOTIFY echo of a run the local worker just reported keeps the run it reported (a final state is final).
      if (!run && early.get(runId)) return;
      early.set(runId, run && repos.FINAL_RUN_STATUSES.includes(run.status) ? run : null);
      if (early.size > EARLY_MAX) early.delete(early.keys().next().value as string);
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
      settled(runId, timeoutMs) {
        if (early.has(runId)) {
          const run = early.get(runId) ?? null;
          early.delete(runId);
          return Promise.resolve(run);
        }
        return new Promise<repos.RunRow | null>((resolve) => {
          let set = waiting.get(runId);
          if (!set) {
            set = new Set();
            waiting.set(runId, set);
          }
          const timer = setTimeout(() => done(null), timeoutMs);
          function done(run: repos.RunRow | null) {
            clearTimeout(timer);
            waiting.get(runId)?.delete(done);
            if (waiting.get(runId)?.size === 0) waiting.delete(runId);
            resolve(run);
          }
          set.add(done);
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
    async stop() {
      await local?.stop();
      await unlisten?.().catch(() => {});
      unlisten = null;
    },
  };
}
