import { createDb, databaseState } from '@flowgate/db';
import { createLogger, createUsageMeter, loadConfig } from '@flowgate/gateway';
import { createSecretBox, parseEncryptionKey } from '@flowgate/secrets';
import { startTelemetry } from '@flowgate/telemetry';
import { createWorker, type WorkerLog } from '@flowgate/worker';
import type { CliIo } from './cli-io.js';
import { waitForDatabase } from './database.js';
import { waitForShutdownSignal } from './lifecycle.js';

export interface WorkerHooks {
  /** Resolves when the worker should stop (default: the first SIGINT or SIGTERM). */
  shutdown?: Promise<unknown>;
  /** Where log lines go (default: JSON lines on stdout at FLOWGATE_LOG_LEVEL). */
  log?: WorkerLog;
  /** Called once the worker claims runs (tests wait for it). */
  onStarted?: () => void;
}

/**
 * `flowgate worker`: executes queued runs from the shared Postgres database, next to any number of gateways and
 * other workers. Configuration comes from the same environment as `serve` (DATABASE_URL, FLOWGATE_ENCRYPTION_KEY,
 * FLOWGATE_RUN_*). It waits for a database that is down or not yet migrated. SIGINT/SIGTERM stop claiming, let
 * running runs finish for a grace period, and hand the rest back.
 */
export async function runWorker(
  options: { concurrency?: number | undefined },
  io: CliIo,
  hooks: WorkerHooks = {},
): Promise<void> {
  const config = loadConfig(io.env, {
    requireDatabaseUrl:
      'flowgate worker needs Postgres: the embedded database belongs to the one process that opened it, and ' +
      '`flowgate serve` and `flowgate dev` run their own worker',
  });
  const url = config.databaseUrl ?? '';
  const encryptionKey = config.encryptionKey ?? '';
  const logger = hooks.log ?? createLogger(config.logLevel);
  const shutdown = hooks.shutdown ?? waitForShutdownSignal();
  const stopWaiting = new AbortController();
  void shutdown.then(() => stopWaiting.abort());
  // Only when an OTEL_* variable is set: run spans continue the traces of the requests that started them.
  const telemetry = await startTelemetry({ env: io.env, serviceName: 'flowgate-worker' });
  const concurrency = options.concurrency ?? config.workerConcurrency;
  const db = await createDb({ url, maxConnections: Math.max(4, concurrency + 2) });
  try {
    const ready = await waitForDatabase({
      url,
      probe: () => databaseState(db),
      log: logger,
      signal: stopWaiting.signal,
    });
    if (!ready) return;
    // Runs this worker ends are counted here and written like a gateway's (same tables, batch ids).
    const usage = createUsageMeter(db.db, logger, { enabled: config.usageMetering, flushIntervalMs: 1_000 });
    const worker = createWorker({
      db,
      secretBox: createSecretBox(parseEncryptionKey(encryptionKey)),
      concurrency,
      leaseMs: config.runLeaseMs,
      allowPrivateNetwork: config.allowPrivateNetwork,
      limits: config.runLimits,
      log: logger,
      usage,
    });
    await worker.start();
    hooks.onStarted?.();
    const signal = await shutdown;
    logger.info({ signal, workerId: worker.id }, 'flowgate worker shutting down');
    await worker.stop();
    await usage.close();
  } finally {
    await db.close();
    await telemetry?.shutdown().catch(() => {});
  }
}
