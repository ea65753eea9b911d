import { resolve } from 'node:path';
import { AppError } from '@flowgate/core';
import { createDb } from '@flowgate/db';
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
 * `flowgate db migrate`: applies pending migrations and exits. Postgres migrations take an advisory lock,
 * so running this while replicas start is safe; the embedded database is locked against a running server.
 */
export async function runMigrate(io: CliIo): Promise<void> {
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
    } finally {
      await handle.close();
    }
    io.stdout(`migrations applied (postgres ${redactUrl(url)})\n`);
    return;
  }
  const dataDir = resolveDataDir(io.env, io.cwd);
  ensurePrivateDir(dataDir);
  const unlock = lockDataDir(dataDir);
  try {
    const handle = await createDb({ dataDir: embeddedDbDir(dataDir) });
    try {
      await handle.migrate();
    } finally {
      await handle.close();
    }
  } finally {
    unlock();
  }
  io.stdout(`migrations applied (embedded database in ${embeddedDbDir(dataDir)})\n`);
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
