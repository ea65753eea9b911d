import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAuthenticator } from '@flowgate/auth';
import { hkdfSha256 } from '@flowgate/core';
import { createDb, type DbHandle, repos } from '@flowgate/db';
import { createSecretBox, generateEncryptionKey, parseEncryptionKey } from '@flowgate/secrets';
import { startTelemetry } from '@flowgate/telemetry';
import { createRunBroker } from '@flowgate/worker';
import { createWaitGate } from '@flowgate/workspace-mcp';
import { type ServerType, serve } from '@hono/node-server';
import pino, { type DestinationStream, type Logger } from 'pino';
import { createApp, type GatewayDeps, type RouteInstaller } from './app.js';
import { createKeyUsageTracker } from './audit/key-usage.js';
import { startAuditPruner } from './audit/prune.js';
import { createAuditQueue } from './audit/queue.js';
import { type GatewayConfig, hostForUrl } from './config.js';
import type { RuntimeBindings } from './context.js';
import { DEFAULT_INSTALLERS, TOOL_NAMES } from './installers.js';
import { createMemoryLimiter, type RateLimiter } from './rate-limit/bucket.js';
import { createWorkspaceCache } from './workspace-cache.js';

export { VERSION } from './version.js';

import { VERSION } from './version.js';

/** What a runtime's HTTP server gives back once it listens. */
export interface ListeningServer {
  port: number;
  /** Stops accepting; in-flight requests finish. */
  stop(): Promise<void>;
}

export type Listen = (options: {
  hostname: string;
  port: number;
  fetch: (request: Request, bindings: RuntimeBindings) => Response | Promise<Response>;
}) => Promise<ListeningServer>;

export interface RunningGateway {
  url: string;
  port: number;
  deps: GatewayDeps;
  close(): Promise<void>;
}

export interface StartOptions {
  config: GatewayConfig;
  logger?: Logger;
  /** Reuse an open database (tests); otherwise one is opened from the config. */
  db?: DbHandle;
  installers?: RouteInstaller[];
  /** The clock in ms since the epoch (tests inject one to cross TTLs and expiries without waiting). */
  now?: () => number;
  /** How to listen: Node's HTTP server when absent (the Bun and Deno entries pass theirs). */
  listen?: Listen;
  /** Named in the "listening" log line. */
  runtime?: 'node' | 'bun' | 'deno';
}

/**
 * The embedded database keeps its encryption key next to its data (mode 0600) when none is configured, so a
 * fresh `flowgate serve` works without setup. With Postgres a configured key is required (see loadConfig).
 */
function resolveEncryptionKey(config: GatewayConfig): Uint8Array {
  if (config.encryptionKey) return parseEncryptionKey(config.encryptionKey);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const file = join(config.dataDir, 'encryption.key');
  if (!existsSync(file)) {
    writeFileSync(file, generateEncryptionKey(), { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return parseEncryptionKey(readFileSync(file, 'utf8').trim());
}

/** `destination` defaults to stdout; tests pass one to read every line the gateway logs. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'flowgate' },
    // Belt and braces: these paths never reach a log line even if a caller passes them.
    redact: {
      paths: ['token', 'apiKey', 'authorization', 'headers.authorization', 'secret', '*.secret'],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export async function buildDeps(options: StartOptions): Promise<GatewayDeps & { close(): Promise<void> }> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.logLevel);
  const ownsDb = !options.db;
  const db =
    options.db ??
    (await createDb(
      config.databaseUrl
        ? { url: config.databaseUrl }
        : {
            dataDir: join(config.dataDir, 'pgdata'),
            embeddedSharedBuffersMb: config.embeddedSharedBuffersMb,
          },
    ));
  if (ownsDb) await db.migrate();
  const encryptionKey = resolveEncryptionKey(config);
  const secretBox = createSecretBox(encryptionKey);
  // A separate key for signing cursors, derived so the encryption key itself is never used for two jobs.
  const cursorKey = hkdfSha256(encryptionKey, 'flowgate/cursor-signing/v1', 32);
  const keyUsage = createKeyUsageTracker(db.db, logger);
  const authenticator = createAuthenticator({
    lookupApiKey: (keyId) => repos.lookupApiKey(db.db, keyId),
    onKeyUsed: (keyId) => keyUsage.used(keyId),
    jwt: config.jwt,
    operatorToken: config.adminToken,
    cacheTtlMs: config.authCacheTtlMs,
    ...(options.now ? { now: options.now } : {}),
  });
  // Loaded only with REDIS_URL: the Redis client is ≈ 270 kB of code a gateway without Redis never needs.
  const rateLimiter: RateLimiter = config.redisUrl
    ? await (await import('./rate-limit/redis.js')).createRedisLimiter({
        url: config.redisUrl,
        prefix: config.redisPrefix,
        logger,
      })
    : createMemoryLimiter(options.now ? { now: options.now } : {});
  const audit = createAuditQueue(db.db, logger);
  const auditPruner = startAuditPruner({
    db: db.db,
    logger,
    retentionDays: config.auditRetentionDays,
    maxRowsPerWorkspace: config.auditMaxRowsPerWorkspace,
  });
  const runWorkers = createRunBroker({
    db,
    secretBox,
    log: logger,
    worker: {
      concurrency: config.workerConcurrency,
      leaseMs: config.runLeaseMs,
      allowPrivateNetwork: config.allowPrivateNetwork,
      limits: config.runLimits,
    },
    maxLiveRuns: config.maxLiveRunsPerWorkspace,
    maxRunDurationMs: config.runMaxDurationMs,
  });
  await runWorkers.listen();
  const workspaces = createWorkspaceCache(db.db);
  const deps: GatewayDeps = {
    config,
    db,
    logger,
    authenticator,
    secretBox,
    audit,
    keyUsage,
    cursorKey,
    workspaces,
    workspaceDeps: {
      db: db.db,
      secretBox,
      outbound: {
        allowPrivateNetwork: config.allowPrivateNetwork,
        timeoutMs: config.connectionCheckTimeoutMs,
      },
      runs: runWorkers.hooks,
      // This replica forgets cached keys, accounts and policies at once; others within their cache bounds.
      changes: {
        serviceAccountChanged: (id) => authenticator.invalidateServiceAccount(id),
        keyRevoked: (id) => authenticator.invalidateKey(id),
        workspaceChanged: (id) => workspaces.invalidate(id),
      },
    },
    runWorkers,
    rateLimiter,
    mcpWaits: createWaitGate({ maxPerKey: config.mcpMaxWaitsPerKey, maxTotal: config.mcpMaxWaits }),
    toolNames: TOOL_NAMES,
    version: VERSION,
  };
  return {
    ...deps,
    async close() {
      // In-flight runs finish or are handed back before the database goes away.
      await runWorkers.stop();
      await auditPruner.stop();
      await audit.close();
      await keyUsage.close();
      await rateLimiter.close();
      if (ownsDb) await db.close();
    },
  };
}

/** Node's HTTP server (`@hono/node-server`), the default way `startGateway` listens. */
export function listenOnNode(requestBodyTimeoutMs: number): Listen {
  return ({ hostname, port, fetch }) =>
    new Promise<ListeningServer>((resolve, reject) => {
      const server: ServerType = serve(
        {
          fetch: (request, env) => fetch(request, env as RuntimeBindings),
          hostname,
          port,
          // Node enforces requestTimeout only when it sweeps connections; sweep often enough to honour a short one.
          serverOptions: {
            requestTimeout: requestBodyTimeoutMs,
            headersTimeout: Math.min(requestBodyTimeoutMs, 60_000),
            connectionsCheckingInterval: Math.min(1_000, requestBodyTimeoutMs),
          },
        },
        (info) =>
          resolve({
            port: info.port,
            stop: () =>
              new Promise<void>((done) => {
                server.close(() => done());
                // Idle keep-alive sockets would hold close() open; in-flight requests still complete.
                if ('closeIdleConnections' in server) server.closeIdleConnections();
              }),
          }),
      );
      server.once('error', reject);
    });
}

/**
 * Starts the gateway in a long-lived process: on Node by default, or on the server `listen` opens (Bun, Deno).
 * `close()` stops accepting, lets in-flight requests finish, flushes, then closes the database.
 */
export async function startGateway(options: StartOptions): Promise<RunningGateway> {
  // Only when an OTEL_* variable is set; null (nothing loaded) otherwise.
  const telemetry = await startTelemetry({ serviceVersion: VERSION });
  const stopTelemetry = () => telemetry?.shutdown().catch(() => {});
  const deps = await buildDeps(options).catch(async (err: unknown) => {
    await stopTelemetry();
    throw err;
  });
  // The app is built once the port is known, so a `FLOWGATE_PORT=0` deployment links to its real address.
  let fetchHandler: ((request: Request, env: RuntimeBindings) => Response | Promise<Response>) | null = null;
  const listen = options.listen ?? listenOnNode(options.config.requestBodyTimeoutMs);
  let server: ListeningServer;
  try {
    server = await listen({
      hostname: options.config.host,
      port: options.config.port,
      fetch: (request, env) =>
        fetchHandler
          ? fetchHandler(request, env)
          : new Response('starting', { status: 503, headers: { 'retry-after': '1' } }),
    });
  } catch (err) {
    // e.g. EADDRINUSE: release what buildDeps opened before reporting.
    await deps.close().catch(() => {});
    await stopTelemetry();
    throw err;
  }
  const { port } = server;
  const url = `http://${hostForUrl(options.config.host)}:${port}`;
  if (!options.config.publicUrlConfigured) deps.config = { ...deps.config, publicUrl: url };
  const app = createApp(deps, options.installers ?? DEFAULT_INSTALLERS);
  fetchHandler = (request, env) => app.fetch(request, env);
  if (deps.config.worker) await deps.runWorkers.startLocal();
  const runtime = options.runtime ?? 'node';
  deps.logger.info(
    { url, runtime, driver: deps.db.driver, worker: deps.config.worker },
    'flowgate gateway listening',
  );
  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    deps,
    close() {
      closing ??= (async () => {
        await server.stop();
        await deps.close();
        await stopTelemetry();
        deps.logger.info('flowgate gateway stopped');
      })();
      return closing;
    },
  };
}
