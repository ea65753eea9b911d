import { connect } from 'cloudflare:sockets';
import { createPerRequestDb, type PerRequestDb, type RequestDb } from '@flowgate/db/postgres';
import { parseEncryptionKey } from '@flowgate/secrets';
import type { Hono } from 'hono';
import { createApp, type GatewayDeps } from '../app.js';
import { type GatewayConfig, loadConfig } from '../config.js';
import type { AppEnv, RuntimeBindings } from '../context.js';
import { composeDeps } from '../deps.js';
import { DEFAULT_INSTALLERS } from '../installers.js';
import { createLogger } from '../logger.js';
import { createMemoryLimiter, type RateLimiter } from '../rate-limit/bucket.js';
import { createSocketRedisLimiter } from '../rate-limit/redis-socket.js';
import { DRAIN_PATH, DRAIN_TOKEN_BINDING } from './workerd-drain.js';

/**
 * The gateway as a Cloudflare Worker (`pnpm serve:workerd` locally, `infra/cloudflare/` deployed): the same app and
 * environment variables as `flowgate serve`, as bindings, on Postgres only. Runs are executed by `flowgate worker`
 * processes (Node) on the same database; migrations by `flowgate db migrate`.
 *
 * workerd forbids using a socket opened by one request from another, so the app and its caches are built once per
 * isolate but each request gets its own postgres.js client (connected only if a statement runs), closed after the
 * response. Nothing runs between requests: the audit and key-usage queues are flushed after each response
 * (`waitUntil`), and a caller waiting on a run polls its status (no LISTEN).
 */

/** What the Workers runtime passes as `ctx`. */
export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * Bindings: the environment variables of `flowgate serve` (vars and secrets are strings), and optionally a Hyperdrive
 * binding `HYPERDRIVE` in place of DATABASE_URL.
 */
export type WorkerEnv = Record<string, unknown>;

/** How often a waited `call_flow_tool` reads its run's status. */
const RUN_POLL_MS = 200;

interface Gateway {
  app: Hono<AppEnv>;
  deps: GatewayDeps;
  database: PerRequestDb;
}

function configOf(env: WorkerEnv, request: Request): GatewayConfig {
  const strings: Record<string, string> = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  // A Hyperdrive binding named HYPERDRIVE (infra/cloudflare) stands for DATABASE_URL: its pooled address.
  const hyperdrive = env.HYPERDRIVE as { connectionString?: unknown } | undefined;
  if (typeof hyperdrive?.connectionString === 'string') strings.DATABASE_URL = hyperdrive.connectionString;
  const config = loadConfig(strings, {
    requireDatabaseUrl: 'required on Workers (the embedded database runs on Node only)',
  });
  // Runs are executed by `flowgate worker` processes on the same database.
  config.worker = false;
  // Without FLOWGATE_PUBLIC_URL, links point at the address the first request reached.
  if (!config.publicUrlConfigured) config.publicUrl = new URL(request.url).origin;
  return config;
}

/**
 * With REDIS_URL, the buckets every replica shares (Node, Bun, Deno and Workers alike), over a TCP connection per
 * bucket step. Without it, per isolate: Workers spreads requests over many isolates, so a limit then holds per
 * isolate, not per deployment.
 */
function rateLimiterOf(config: GatewayConfig, logger: ReturnType<typeof createLogger>): RateLimiter {
  if (!config.redisUrl) return createMemoryLimiter();
  return createSocketRedisLimiter({ url: config.redisUrl, prefix: config.redisPrefix, logger, connect });
}

function build(env: WorkerEnv, request: Request): Gateway {
  const config = configOf(env, request);
  if (!config.databaseUrl || !config.encryptionKey)
    throw new Error('DATABASE_URL and FLOWGATE_ENCRYPTION_KEY');
  const logger = createLogger(config.logLevel);
  const database = createPerRequestDb(config.databaseUrl);
  const deps = composeDeps({
    config,
    db: database.handle,
    logger,
    encryptionKey: parseEncryptionKey(config.encryptionKey),
    rateLimiter: rateLimiterOf(config, logger),
    perRequest: { pollMs: RUN_POLL_MS },
  });
  return { app: createApp(deps, DEFAULT_INSTALLERS), deps, database };
}

let gateway: Gateway | null = null;

/**
 * Requests of this isolate not finished yet: answered or not, until what they leave behind is written (`finish`).
 * The local runner asks for a drain before it stops workerd (serve-workerd.ts), which kills what is still running.
 */
let unfinished = 0;

const DRAIN_LIMIT_MS = 10_000;

async function drain(request: Request, token: string): Promise<Response | null> {
  // The header first: every request of a local Worker passes here, and only the runner's drain carries the token.
  if (token.length < 32 || request.headers.get('authorization') !== `Bearer ${token}`) return null;
  if (new URL(request.url).pathname !== DRAIN_PATH) return null;
  const deadline = Date.now() + DRAIN_LIMIT_MS;
  // Polled: a promise resolved from another request's context is not allowed on Workers.
  while (unfinished > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  return new Response(JSON.stringify({ unfinished }), { status: unfinished === 0 ? 200 : 503 });
}

/** What each request leaves behind is written, then its database client closed. */
function finish(g: Gateway, scope: RequestDb): Promise<void> {
  return scope
    .run(async () => {
      await g.deps.audit.flush();
      await g.deps.keyUsage.flushDue();
    })
    .catch((error: unknown) => {
      g.deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'flush failed');
    })
    .finally(() => scope.close());
}

/**
 * A streamed body (SSE) may still run statements after `fetch` returns: the request's work ends when its body does.
 */
function afterBody(response: Response, then: () => Promise<void>, ctx: ExecutionContext): Response {
  const streamed = response.body && response.headers.get('content-type')?.startsWith('text/event-stream');
  if (!streamed || !response.body) {
    ctx.waitUntil(then());
    return response;
  }
  const { readable, writable } = new TransformStream();
  ctx.waitUntil(
    response.body
      .pipeTo(writable)
      .catch(() => {})
      .then(then),
  );
  return new Response(readable, response);
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Promise<Response> {
    const drainToken = env[DRAIN_TOKEN_BINDING];
    if (typeof drainToken === 'string') {
      const drained = await drain(request, drainToken);
      if (drained) return drained;
    }
    try {
      gateway ??= build(env, request);
    } catch (error) {
      // A configuration problem: one line per variable in the Worker's log (like `flowgate serve` at start), not
      // in the response.
      console.error(`flowgate: ${error instanceof Error ? error.message : String(error)}`);
      return new Response('flowgate: configuration error (see the log)\n', { status: 500 });
    }
    const g = gateway;
    const scope = g.database.open();
    const bindings: RuntimeBindings = { remoteAddress: request.headers.get('cf-connecting-ip') ?? undefined };
    unfinished++;
    const finished = () =>
      finish(g, scope).finally(() => {
        unfinished--;
      });
    let response: Response;
    try {
      response = await scope.run(() => g.app.fetch(request, bindings));
    } catch (error) {
      ctx.waitUntil(finished());
      throw error;
    }
    return afterBody(response, finished, ctx);
  },
};
