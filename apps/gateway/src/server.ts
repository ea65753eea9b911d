import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { type BytesLike, useNativeSha256 } from '@flowgate/core';
import { createDb, type DbHandle, type DbOptions } from '@flowgate/db';
import { generateEncryptionKey, parseEncryptionKey } from '@flowgate/secrets';
import { startTelemetry } from '@flowgate/telemetry';
import { type ServerType, serve } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { Logger } from 'pino';
import { createApp, type GatewayDeps, type RouteInstaller } from './app.js';
import { startAuditPruner } from './audit/prune.js';
import { type GatewayConfig, hostForUrl } from './config.js';
import type { RuntimeBindings } from './context.js';
import { composeDeps } from './deps.js';
import { DEFAULT_INSTALLERS } from './installers.js';
import { createLogger } from './logger.js';
import { BODY_PARTS_HEADER } from './mcp/body-parts.js';
import { createMemoryLimiter, type RateLimiter } from './rate-limit/bucket.js';

// Every authenticated request hashes its bearer token: on Node (and Bun, Deno) with node:crypto's native SHA-256,
// ≈15× cheaper than the pure-JS one the app would use on its own, which reaches no node:crypto (runtime-neutral).
const nodeSha256 = (data: BytesLike) => createHash('sha256').update(data);
useNativeSha256({
  bytes: (data) => {
    const digest = nodeSha256(data).digest();
    return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
  },
  hex: (data) => nodeSha256(data).digest('hex'),
});

export { createLogger } from './logger.js';
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

/** The database a configuration names: Postgres at `DATABASE_URL`, else the embedded one under the data directory. */
export function databaseOptions(config: GatewayConfig): DbOptions {
  return config.databaseUrl
    ? { url: config.databaseUrl }
    : { dataDir: join(config.dataDir, 'pgdata'), embeddedSharedBuffersMb: config.embeddedSharedBuffersMb };
}

export async function buildDeps(options: StartOptions): Promise<GatewayDeps & { close(): Promise<void> }> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.logLevel);
  const ownsDb = !options.db;
  const db = options.db ?? (await createDb(databaseOptions(config)));
  if (ownsDb) await db.migrate();
  // Loaded only with REDIS_URL: the Redis client is ≈ 270 kB of code a gateway without Redis never needs.
  const rateLimiter: RateLimiter = config.redisUrl
    ? await (await import('./rate-limit/redis.js')).createRedisLimiter({
        url: config.redisUrl,
        prefix: config.redisPrefix,
        logger,
      })
    : createMemoryLimiter(options.now ? { now: options.now } : {});
  const deps = composeDeps({
    config,
    db,
    logger,
    encryptionKey: resolveEncryptionKey(config),
    rateLimiter,
    now: options.now,
  });
  const { audit, keyUsage, runWorkers } = deps;
  const auditPruner = startAuditPruner({
    db: db.db,
    logger,
    retentionDays: config.auditRetentionDays,
    maxRowsPerWorkspace: config.auditMaxRowsPerWorkspace,
    usageRetentionDays: config.usageRetentionDays,
  });
  await runWorkers.listen();
  await deps.changeFeed.listen();
  return {
    ...deps,
    async close() {
      // In-flight runs finish or are handed back before the database goes away.
      await runWorkers.stop();
      await deps.changeFeed.stop();
      await auditPruner.stop();
      await audit.close();
      await keyUsage.close();
      await rateLimiter.close();
      if (ownsDb) await db.close();
    },
  };
}

/**
 * The answer of `respondWithParts`: the final status and headers (the marker left out, the length set), then the
 * pieces, corked into one `writev`. Node holds each piece by reference until it is written; nothing changes them.
 */
function writeParts(outgoing: ServerResponse, res: Response, parts: readonly Uint8Array[]): void {
  let length = 0;
  for (const part of parts) length += part.byteLength;
  const headers: Record<string, string | string[]> = {};
  res.headers.forEach((value, name) => {
    if (name !== BODY_PARTS_HEADER) headers[name] = value;
  });
  const cookies = res.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  headers['content-length'] = String(length);
  outgoing.writeHead(res.status, headers);
  outgoing.cork();
  for (const part of parts) outgoing.write(part);
  outgoing.end();
  outgoing.uncork();
}

/** Node's HTTP server (`@hono/node-server`), the default way `startGateway` listens. */
export function listenOnNode(requestBodyTimeoutMs: number): Listen {
  return ({ hostname, port, fetch }) =>
    new Promise<ListeningServer>((resolve, reject) => {
      const server: ServerType = serve(
        {
          fetch: async (request, env) => {
            const outgoing = env.outgoing instanceof ServerResponse ? env.outgoing : null;
            const bindings: RuntimeBindings = {
              ...(env as RuntimeBindings),
              writesBodyParts: outgoing !== null,
            };
            const res = await fetch(request, bindings);
            const parts = bindings.bodyParts;
            // Without the marker, something answered in place of the route (an error after it ran, say).
            if (outgoing === null || parts === undefined || !res.headers.has(BODY_PARTS_HEADER)) return res;
            writeParts(outgoing, res, parts);
            return RESPONSE_ALREADY_SENT;
          },
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
        // Open listen streams end with their graceful result first: the server waits for in-flight requests.
        deps.mcpListens.close();
        await server.stop();
        await deps.close();
        await stopTelemetry();
        deps.logger.info('flowgate gateway stopped');
      })();
      return closing;
    },
  };
}
