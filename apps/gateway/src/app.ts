import type { Authenticator } from '@flowgate/auth';
import { AppError } from '@flowgate/core';
import type { DbHandle } from '@flowgate/db';
import type { SecretBox } from '@flowgate/secrets';
import type { RunBroker } from '@flowgate/worker';
import type { WorkspaceDeps } from '@flowgate/workspace';
import type { ListenHub, WaitGate } from '@flowgate/workspace-mcp';
import { Hono, type MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { adminRoutes } from './admin/routes.js';
import type { KeyUsageTracker } from './audit/key-usage.js';
import type { AuditSink } from './audit/queue.js';
import type { UsageMeter } from './audit/usage-meter.js';
import type { ChangeFeed } from './change-feed.js';
import type { GatewayConfig } from './config.js';
import type { AppEnv } from './context.js';
import { protectedResourcesOf } from './discovery/protected-resource.js';
import { installDiscovery } from './discovery/routes.js';
import { authenticate } from './middleware/authenticate.js';
import { requestBodyLimit } from './middleware/body-limit.js';
import { mcpCors } from './middleware/cors.js';
import { createErrorHandler, errorResponse } from './middleware/errors.js';
import { ipAllowlist } from './middleware/ip.js';
import { mcpGate } from './middleware/mcp-gate.js';
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
  /** Usage rollups (MCP requests, runs), written with the audit queue's flushes. */
  usage: UsageMeter;
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

/** Routes createApp mounts itself (the public discovery documents). */
export type RouteMount = (app: Hono<AppEnv>, deps: GatewayDeps) => void;

/** Guards a route plug-in mounts its own routes behind. */
export interface RouteGuards {
  /** The MCP endpoints' one gate (middleware/mcp-gate.ts). */
  mcpGate: MiddlewareHandler<AppEnv>;
}

/** Route plug-ins (MCP endpoint, console) register themselves through this hook. */
export interface RouteInstaller {
  (app: Hono<AppEnv>, deps: GatewayDeps, guards: RouteGuards): void;
  /**
   * The methods and paths of its routes when every one of them carries a gate of its own: then it is mounted ahead
   * of the `/api` middlewares, and a request it answers never runs them. Otherwise mounted last, behind the
   * workspace guard.
   */
  readonly gated?: { methods: readonly string[]; paths: readonly string[] };
}

/**
 * The one Hono app. It uses only web-standard Request/Response, so the same object serves Node
 * (`startGateway`) and edge runtimes; Node-only details (client address) degrade gracefully.
 */
export function createApp(deps: GatewayDeps, installers: RouteInstaller[] = []): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(createErrorHandler(deps.logger));
  app.notFound((c) => errorResponse(c, new AppError('not_found', 'no such route')));
  // The gated routes (the MCP endpoints) carry the request's trace context explicitly.
  const explicitRoutes = new Set(installers.flatMap((install) => install.gated?.paths ?? []));
  app.use('*', requestTelemetry({ explicitRoutes }), requestIds(), requestLog(deps.logger));

  app.get('/healthz', (c) => c.json({ status: 'ok', version: deps.version }));
  app.get('/readyz', async (c) => {
    const ready = await deps.db.ready();
    // Degraded rate limiting is shown, not failed: the gateway still limits, per process (README, Rate limits).
    return c.json(
      { status: ready ? 'ready' : 'not_ready', rateLimitStore: deps.rateLimiter.store() },
      ready ? 200 : 503,
    );
  });

  // The MCP endpoints: one gate runs every check the middlewares below would, in their order (mcp-gate.ts).
  const guards: RouteGuards = {
    mcpGate: mcpGate({
      authenticator: deps.authenticator,
      workspaces: deps.workspaces,
      limiter: deps.rateLimiter,
      publicUrl: deps.config.publicUrl,
      allowedOrigins: deps.config.allowedOrigins,
      trustProxy: deps.config.trustProxy,
      maxBodyBytes: deps.config.maxBodyBytes,
      rateLimits: deps.config.rateLimits,
      resources: protectedResourcesOf(deps.config),
      usage: deps.usage,
    }),
  };
  for (const install of installers) if (install.gated) install(app, deps, guards);

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

  app.use('/api/*', requestBodyLimit(deps.config.maxBodyBytes));
  // Browsers at allowed origins: preflights are answered before the bearer token is asked for. The MCP routes have
  // this in their gate; here it covers the methods no route takes on those paths.
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

  for (const install of installers) if (!install.gated) install(app, deps, guards);
  // A request's span and metrics are named after the last route it matched (telemetry.ts), which for a gated path
  // would now be the workspace guard's `/api/workspaces/:ws/*`: the same paths again, last, keep the endpoint's name.
  // Never run: the gated routes answered first.
  for (const { gated } of installers) {
    if (!gated) continue;
    for (const path of gated.paths) app.on([...gated.methods], path, (c) => c.notFound());
  }
  app.route('/', adminRoutes(deps));
  return app;
}
