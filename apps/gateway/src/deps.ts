import { createAuthenticator } from '@flowgate/auth';
import { hkdfSha256 } from '@flowgate/core';
import { type DbHandle, repos } from '@flowgate/db';
import { checkMcpServer } from '@flowgate/mcp-remote';
import { createSecretBox } from '@flowgate/secrets';
import { createRunBroker } from '@flowgate/worker';
import type { McpCheck } from '@flowgate/workspace';
import { createListenHub, createWaitGate } from '@flowgate/workspace-mcp';
import type { Logger } from 'pino';
import type { GatewayDeps } from './app.js';
import { createKeyUsageTracker } from './audit/key-usage.js';
import { createAuditQueue } from './audit/queue.js';
import { createUsageMeter } from './audit/usage-meter.js';
import { createChangeFeed } from './change-feed.js';
import type { GatewayConfig } from './config.js';
import { TOOL_NAMES } from './installers.js';
import type { RateLimiter } from './rate-limit/bucket.js';
import { VERSION } from './version.js';
import { createWorkspaceCache } from './workspace-cache.js';

/**
 * The gateway's dependencies from its ports, on any runtime: the entries open the database, the logger and the
 * rate-limit store their runtime allows and pass them in (Node: `buildDeps` in server.ts; Workers: entries/workerd.ts).
 */
export interface ComposeOptions {
  config: GatewayConfig;
  db: DbHandle;
  logger: Logger;
  encryptionKey: Uint8Array;
  rateLimiter: RateLimiter;
  /** The clock in ms since the epoch (tests). */
  now?: (() => number) | undefined;
  /**
   * Where nothing may outlive a request (Workers): no flush timers (the entry flushes the audit and key-usage queues
   * after each response) and run wake-ups by polling the run every `pollMs` (no LISTEN).
   */
  perRequest?: { pollMs: number } | undefined;
  /**
   * The health check of `mcp-server` connections (a session that lists the tools, under the outbound address
   * policy); the official SDK's client through the run engine's guarded fetch by default.
   */
  mcpCheck?: McpCheck | undefined;
}

export function composeDeps(options: ComposeOptions): GatewayDeps {
  const { config, db, logger, rateLimiter, now, perRequest } = options;
  const secretBox = createSecretBox(options.encryptionKey);
  // A separate key for signing cursors, derived so the encryption key itself is never used for two jobs.
  const cursorKey = hkdfSha256(options.encryptionKey, 'flowgate/cursor-signing/v1', 32);
  const keyUsage = createKeyUsageTracker(db.db, logger, perRequest ? { timer: false } : {});
  const authenticator = createAuthenticator({
    lookupApiKey: (keyId) => repos.lookupApiKey(db.db, keyId),
    onKeyUsed: (keyId) => keyUsage.used(keyId),
    jwt: config.jwt,
    operatorToken: config.adminToken,
    cacheTtlMs: config.authCacheTtlMs,
    ...(now ? { now } : {}),
  });
  const usage = createUsageMeter(db.db, logger, { enabled: config.usageMetering, ...(now ? { now } : {}) });
  const audit = createAuditQueue(db.db, logger, { ...(perRequest ? { flushIntervalMs: 0 } : {}), usage });
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
    usage,
    maxLiveRuns: config.maxLiveRunsPerWorkspace,
    maxRunDurationMs: config.runMaxDurationMs,
    ...(perRequest ? { wakeUps: { pollMs: perRequest.pollMs } } : {}),
  });
  const workspaces = createWorkspaceCache(db.db);
  const mcpListens = createListenHub({
    maxPerKey: config.mcpMaxListensPerKey,
    maxTotal: config.mcpMaxListens,
    maxMs: config.mcpListenMaxMs,
    recheckMs: config.mcpListenRecheckMs,
    safetyPollMs: config.mcpListenSafetyPollMs,
  });
  // This replica forgets cached keys, accounts and policies at once, others when they hear the notification (within
  // their cache bounds if they miss it), and open listen streams of the workspace check what they may see again.
  const changeFeed = createChangeFeed({
    db,
    hub: mcpListens,
    log: logger,
    caches: {
      serviceAccountChanged: (id) => authenticator.invalidateServiceAccount(id),
      keyRevoked: (id) => authenticator.invalidateKey(id),
      workspaceChanged: (id) => workspaces.invalidate(id),
    },
  });
  return {
    config,
    db,
    logger,
    authenticator,
    secretBox,
    audit,
    keyUsage,
    usage,
    cursorKey,
    workspaces,
    workspaceDeps: {
      db: db.db,
      secretBox,
      outbound: {
        allowPrivateNetwork: config.allowPrivateNetwork,
        timeoutMs: config.connectionCheckTimeoutMs,
      },
      mcpCheck: options.mcpCheck ?? checkMcpServer,
      runs: runWorkers.hooks,
      changes: changeFeed.changes,
      usage,
    },
    runWorkers,
    rateLimiter,
    mcpWaits: createWaitGate({ maxPerKey: config.mcpMaxWaitsPerKey, maxTotal: config.mcpMaxWaits }),
    mcpListens,
    changeFeed,
    toolNames: TOOL_NAMES,
    version: VERSION,
  };
}
