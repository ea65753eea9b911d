import type { Authenticator } from '@flowgate/auth';
import { AppError } from '@flowgate/core';
import type { DbHandle } from '@flowgate/db';
import type { SecretBox } from '@flowgate/secrets';
import type { RunBroker } from '@flowgate/worker';
import type { WorkspaceDeps } from '@flowgate/workspace';
import type { ListenHub, WaitGate } from '@flowgate/workspace-mcp';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import { adminRoutes } from './admin/routes.js';
import type { KeyUsageTracker } from './audit/key-usage.js';
import type { AuditSink } from './audit/queue.js';
import type { GatewayConfig } from './config.js';
import type { AppEnv } from './context.js';
import { protectedResourcesOf } from './discovery/protected-resource.js';
import { installDiscovery } from './discovery/routes.js';
import type { ChangeFeed } from './mcp/change-feed.js';
import { authenticate } from './middleware/authenticate.js';
import { mcpCors } from './middleware/cors.js';
import { createErrorHandler, errorResponse } from './middleware/errors.js';
import { ipAllowlist } from './middleware/ip.js';
import { originCheck } from './middleware/origin.js';
import { ipRateLimit, principalRateLimit } from './middleware/rate-limit.js';
import { requestIds } from './middleware/request-id.js';
import { requestLog } from './middleware/request-log.js';
import { requestTelemetry } from './middleware/telemetry.js';
import { workspaceAccess } from './middleware/workspace-access.js';
import type { RateLimiter } from './rate-limit/bucket.js';
import type { WorkspaceCache } from './workspace-cache.js';

export interface GatewayDeps {
  config: GatewayConfig;
  db: DbHandle;
  logger: Logger;
  authenticator: Authenticator;
  secretBox: SecretBox;
  audit: AuditSink;
  keyUsage: KeyUsageTracker;
  /** HMAC key for opaque pagination cursors; the same on every replica of a deployment. */
  cursorKey: Uint8Array;
  workspaces: WorkspaceCache;
  /** What the workspace use cases run on (the MCP tools and the admin API open them per request). */
  workspaceDeps: WorkspaceDeps;
  /** How runs reach workers, and the in-process worker. */
  /** The run broker (`@flowgate/worker`): the workspace's run port and the in-process worker. */
  runWorkers: RunBroker;
  /** Request-rate buckets (in-process, or Redis when REDIS_URL is set). */
  rateLimiter: RateLimiter;
  /** Bounds the MCP requests parked waiting on runs, per key and for the process. */
  mcpWaits: WaitGate;
  /** Bounds subscriptions/listen streams, per key and for the process, and ends them all at shutdown. */
  mcpListens: ListenHub;
  /** Changes made on any replica: this process's caches and listen streams hear them (LISTEN where it can). */
  changeFeed: ChangeFeed;
  /** Names of the catalog's tools (what a workspace policy may disable). */
  toolNames: readonly string[];
  version: string;
}

/** Route plug-ins (MCP endpoint, discovery documents) register themselves through this hook. */
export type RouteInstaller = (app: Hono<AppEnv>, deps: GatewayDeps) => void;

/**
 * The one Hono app. It uses only web-standard Request/Response, so the same object serves Node
 * (`startGateway`) and edge runtimes; Node-only details (client address) degrade gracefully.
 */
export function createApp(deps: GatewayDeps, installers: RouteInstaller[] = []): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(createErrorHandler(deps.logger));
  app.notFound((c) => errorResponse(c, new AppError('not_found', 'no such route')));
  app.use('*', requestTelemetry(), requestIds(), requestLog(deps.logger));

  app.get('/healthz', (c) => c.json({ status: 'ok', version: deps.version }));
  app.get('/readyz', async (c) => {
    const ready = await deps.db.ready();
    // Degraded rate limiting is shown, not failed: the gateway still limits, per process (README, Rate limits).
    return c.json(
      { status: ready ? 'ready' : 'not_ready', rateLimitStore: deps.rateLimiter.store() },
      ready ? 200 : 503,
    );
  });

  // Per client address before anything else under /api (body reads, token lookups, JSON-RPC).
  app.use(
    '/api/*',
    ipRateLimit({
      limiter: deps.rateLimiter,
      perMinute: deps.config.rateLimits.ipPerMinute,
      trustProxy: deps.config.trustProxy,
    }),
  );
  const keyLimit = principalRateLimit({
    limiter: deps.rateLimiter,
    perMinute: deps.config.rateLimits.keyPerMinute,
  });

  // Public documents first, so the workspace guard below never runs for them.
  installDiscovery(app, deps);

  const tooLarge = () =>
    new AppError('payload_too_large', `request body exceeds ${deps.config.maxBodyBytes} bytes`);
  const streamingLimit = bodyLimit({
    maxSize: deps.config.maxBodyBytes,
    onError: () => {
      throw tooLarge();
    },
  });
  // Hono's bodyLimit reads `c.req.raw.body`, which makes @hono/node-server build a full web Request and stream
  // the body through it; with a Content-Length the header alone decides, and the route's `c.req.text()` keeps
  // node-server's direct read. Everything else (chunked bodies, or requests built in-process without a
  // Content-Length) goes through the streaming limit.
  app.use('/api/*', async (c, next) => {
    const length = c.req.header('content-length');
    if (length === undefined || c.req.header('transfer-encoding') !== undefined)
      return streamingLimit(c, next);
    if (!/^\d+$/.test(length) || Number(length) > deps.config.maxBodyBytes) throw tooLarge();
    return next();
  });
  // Browsers at allowed origins: preflights are answered before the bearer token is asked for.
  const corsForMcp = mcpCors({
    publicUrl: deps.config.publicUrl,
    allowedOrigins: deps.config.allowedOrigins,
    workspaces: deps.workspaces,
  });
  app.use('/api/workspaces/:ws/mcp', corsForMcp);
  app.use('/api/workspaces/:ws/flows/:slug/mcp', corsForMcp);
  // Where a request to a workspace is let in, in this order: bearer token (401), access to the workspace (403,
  // without revealing whether it exists), the caller's request rate (429, the workspace's own limit when its policy
  // sets one), Origin (403), IP allowlist (403).
  app.use(
    '/api/workspaces/:ws/*',
    authenticate(deps.authenticator, { resources: protectedResourcesOf(deps.config) }),
    workspaceAccess({ authenticator: deps.authenticator, workspaces: deps.workspaces }),
    keyLimit,
    originCheck({ publicUrl: deps.config.publicUrl, allowedOrigins: deps.config.allowedOrigins }),
    ipAllowlist(deps.config.trustProxy),
  );

  for (const install of installers) install(app, deps);
  app.route('/', adminRoutes(deps));
  return app;
}
