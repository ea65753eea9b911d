import { resolve } from 'node:path';
import { AppError } from '@flowgate/core';
import { type BackfillOutcome, createDb, type DbHandle, runBackfills } from '@flowgate/db';
import { createLogger, type GatewayConfig, loadConfig, startGateway } from '@flowgate/gateway';
import type { CliIo } from './cli-io.js';
import { embeddedDbDir, ensurePrivateDir, resolveDataDir } from './data-dir.js';
import { databaseErrorInWords } from './database.js';
import { describeListenError, lockDataDir, waitForShutdownSignal } from './lifecycle.js';

/**
 * `flowgate serve`: configuration from the environment only. The gateway logs one JSON line with its URL
 * once it listens; SIGINT/SIGTERM close it gracefully (stop accepting, finish in-flight, flush audit).
 */
export interface ServeOptions {
  worker: boolean;
  port?: number | undefined;
}

/** The gateway configuration `serve` starts with: the environment, then the flags. */
export function serveConfig(options: ServeOptions, io: Pick<CliIo, 'env' | 'cwd'>): GatewayConfig {
  // --port wins over FLOWGATE_PORT, as for `dev`; it goes through the same validation as the variable.
  const config = loadConfig(
    options.port === undefined ? io.env : { ...io.env, FLOWGATE_PORT: String(options.port) },
  );
  config.dataDir = resolve(io.cwd, config.dataDir);
  if (!options.worker) config.worker = false;
  return config;
}

export async function runServe(options: ServeOptions, io: CliIo): Promise<void> {
  const config = serveConfig(options, io);
  const logger = createLogger(config.logLevel);
  let unlock = () => {};
  if (!config.databaseUrl) {
    ensurePrivateDir(config.dataDir);
    unlock = lockDataDir(config.dataDir);
  }
  // Listen for signals before starting: one that arrives mid-start is then honoured right after the start.
  const shutdown = waitForShutdownSignal();
  try {
    const gateway = await startGateway({ config, logger }).catch((error: unknown) => {
      const url = config.databaseUrl;
      throw describeListenError(url ? databaseErrorInWords(error, url) : error, config.host, config.port);
    });
    const signal = await shutdown;
    logger.info({ signal }, 'flowgate shutting down');
    await gateway.close();
  } finally {
    unlock();
  }
}

const databaseUrlSchema = /^postgres(ql)?:\/\//;

/**
 * `flowgate db migrate`: applies pending migrations (and the backfills this database has not had) and exits.
 * Postgres migrations take an advisory lock, so running this while replicas start is safe; the embedded database is
 * locked against a running server.
 */
export async function runMigrate(io: CliIo): Promise<void> {
  const where = await withMigratedDb(io, async () => {});
  io.stdout(`migrations applied (${where})\n`);
}

/**
 * `flowgate db backfill`: migrates, then runs every backfill again whether or not it completed before. `migrate`
 * runs each once per database; this is for rows an older replica wrote after that, during a rolling upgrade.
 */
export async function runBackfill(io: CliIo): Promise<void> {
  const outcomes: BackfillOutcome[] = [];
  const where = await withMigratedDb(io, async (handle) => {
    outcomes.push(...(await runBackfills(handle.db, { force: true })));
  });
  for (const o of outcomes) io.stdout(`${o.name}: ${o.rowsFilled} rows filled\n`);
  io.stdout(`backfills complete (${where})\n`);
}

/**
 * Opens the database `DATABASE_URL` names (else the embedded one in the data directory, locked against a running
 * server), migrates it, runs `work` and closes it. Returns where the database is, in words without a password.
 */
async function withMigratedDb(io: CliIo, work: (handle: DbHandle) => Promise<void>): Promise<string> {
  const url = io.env.DATABASE_URL;
  if (url !== undefined && url !== '' && !databaseUrlSchema.test(url)) {
    throw new AppError(
      'invalid_request',
      'invalid configuration:\n  DATABASE_URL: must be a postgres:// or postgresql:// URL',
    );
  }
  if (url) {
    const handle = await createDb({ url, maxConnections: 1 });
    try {
      await handle.migrate().catch((error: unknown) => {
        throw databaseErrorInWords(error, url);
      });
      await work(handle);
    } finally {
      await handle.close();
    }
    return `postgres ${redactUrl(url)}`;
  }
  const dataDir = resolveDataDir(io.env, io.cwd);
  ensurePrivateDir(dataDir);
  const unlock = lockDataDir(dataDir);
  try {
    const handle = await createDb({ dataDir: embeddedDbDir(dataDir) });
    try {
      await handle.migrate();
      await work(handle);
    } finally {
      await handle.close();
    }
  } finally {
    unlock();
  }
  return `embedded database in ${embeddedDbDir(dataDir)}`;
}

/** Host and database only: a URL may carry a password. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {
    return '(unparseable URL)';
  }
}
