import type { DbHandle } from '@flowgate/db';
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
  /** Callers waiting for a run to settle, by run id. */
  const waiting = new Map<string, Set<() => void>>();
  /**
   * Runs that settled with nobody waiting yet: a run handed to the in-process worker may end before its caller starts
   * waiting. The next wait for one returns at once (and consumes it); bounded, oldest dropped first.
   */
  const early = new Set<string>();
  const EARLY_MAX = 1_024;
  const settle = (runId: string) => {
    const set = waiting.get(runId);
    if (!set) {
      early.add(runId);
      if (early.size > EARLY_MAX) early.delete(early.values().next().value as string);
      return;
    }
    waiting.delete(runId);
    for (const wake of set) wake();
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
        if (early.delete(runId)) return Promise.resolve();
        return new Promise<void>((resolve) => {
          let set = waiting.get(runId);
          if (!set) {
            set = new Set();
            waiting.set(runId, set);
          }
          const timer = setTimeout(done, timeoutMs);
          function done() {
            clearTimeout(timer);
            waiting.get(runId)?.delete(done);
            if (waiting.get(runId)?.size === 0) waiting.delete(runId);
            resolve();
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
      unlisten ??= await options.db.listen(ENDED_CHANNEL, settle);
    },
    async stop() {
      await local?.stop();
      await unlisten?.().catch(() => {});
      unlisten = null;
    },
  };
}
