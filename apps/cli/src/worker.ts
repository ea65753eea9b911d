import { AppError } from '@flowgate/core';
import { createDb } from '@flowgate/db';
import { createLogger, loadConfig } from '@flowgate/gateway';
import { createSecretBox, parseEncryptionKey } from '@flowgate/secrets';
import { startTelemetry } from '@flowgate/telemetry';
import { createWorker } from '@flowgate/worker';
import type { CliIo } from './cli-io.js';
import { waitForShutdownSignal } from './lifecycle.js';

/**
 * `flowgate worker`: executes queued runs from the shared Postgres database, next to any number of gateways and
 * other workers. Configuration comes from the same environment as `serve` (DATABASE_URL, FLOWGATE_ENCRYPTION_KEY,
 * FLOWGATE_RUN_*). SIGINT/SIGTERM stop claiming, let running runs finish for a grace period, and hand the rest back.
 */
export async function runWorker(options: { concurrency?: number | undefined }, io: CliIo): Promise<void> {
  const config = loadConfig(io.env);
  if (!config.databaseUrl) {
    throw new AppError(
      'invalid_request',
      'flowgate worker needs DATABASE_URL (Postgres): the embedded database belongs to the one process that opened ' +
        'it, and `flowgate serve` and `flowgate dev` run their own worker',
    );
  }
  if (!config.encryptionKey) throw new AppError('invalid_request', 'FLOWGATE_ENCRYPTION_KEY is required');
  const logger = createLogger(config.logLevel);
  const shutdown = waitForShutdownSignal();
  // Only when an OTEL_* variable is set: run spans continue the traces of the requests that started them.
  const telemetry = await startTelemetry({ env: io.env, serviceName: 'flowgate-worker' });
  const db = await createDb({
    url: config.databaseUrl,
    maxConnections: Math.max(4, (options.concurrency ?? config.workerConcurrency) + 2),
  });
  try {
    if (!(await db.ready())) {
      throw new AppError(
        'unavailable',
        'the database is not reachable or not migrated; run `flowgate db migrate` (or start a gateway) first',
      );
    }
    const worker = createWorker({
      db,
      secretBox: createSecretBox(parseEncryptionKey(config.encryptionKey)),
      concurrency: options.concurrency ?? config.workerConcurrency,
      leaseMs: config.runLeaseMs,
      allowPrivateNetwork: config.allowPrivateNetwork,
      limits: config.runLimits,
      log: logger,
    });
    await worker.start();
    const signal = await shutdown;
    logger.info({ signal, workerId: worker.id }, 'flowgate worker shutting down');
    await worker.stop();
  } finally {
    await db.close();
    await telemetry?.shutdown().catch(() => {});
  }
}
