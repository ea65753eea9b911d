import { type JwtConfig, jwtConfigSchema } from '@flowgate/auth';
import { AppError } from '@flowgate/core';
import {
  DEFAULT_LISTEN_MAX_MS,
  DEFAULT_LISTEN_RECHECK_MS,
  DEFAULT_LISTEN_SAFETY_POLL_MS,
  DEFAULT_MAX_LISTENS,
  DEFAULT_MAX_LISTENS_PER_KEY,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_WAITS,
  DEFAULT_MAX_WAITS_PER_KEY,
  MIN_MAX_RESULT_BYTES,
} from '@flowgate/workspace-mcp';
import { z } from 'zod';

const bool = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['true', '1', 'yes', 'on', 'false', '0', 'no', 'off', ''].includes(v), 'expected true/false')
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));

const list = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

const envSchema = z.object({
  FLOWGATE_HOST: z.string().min(1).default('127.0.0.1'),
  FLOWGATE_PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  FLOWGATE_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  FLOWGATE_DATA_DIR: z.string().min(1).default('./.flowgate'),
  FLOWGATE_EMBEDDED_SHARED_BUFFERS_MB: z.coerce.number().int().min(1).max(4096).default(16),
  FLOWGATE_ADMIN_TOKEN: z.string().min(24, 'must be at least 24 characters').optional(),
  FLOWGATE_ENCRYPTION_KEY: z.string().min(1).optional(),
  FLOWGATE_ALLOWED_ORIGINS: list.default([]),
  FLOWGATE_TRUST_PROXY: z
    .string()
    .trim()
    .toLowerCase()
    .refine(
      (v) => /^(true|yes|on|1|false|no|off|0|)$/.test(v) || /^[1-9]$/.test(v),
      'expected false, true or a hop count 1-9',
    )
    .transform((v) =>
      ['false', 'no', 'off', '0', ''].includes(v) ? 0 : ['true', 'yes', 'on'].includes(v) ? 1 : Number(v),
    )
    .default(0),
  FLOWGATE_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024)
    .default(1024 * 1024),
  FLOWGATE_REQUEST_BODY_TIMEOUT_MS: z.coerce.number().int().min(500).max(300_000).default(30_000),
  FLOWGATE_MCP_MAX_RESULT_BYTES: z.coerce
    .number()
    .int()
    .min(MIN_MAX_RESULT_BYTES)
    .max(16 * 1024 * 1024)
    .default(DEFAULT_MAX_RESULT_BYTES),
  FLOWGATE_MCP_MAX_WAITS_PER_KEY: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(DEFAULT_MAX_WAITS_PER_KEY),
  FLOWGATE_MCP_MAX_WAITS: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_MAX_WAITS),
  FLOWGATE_MCP_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(1_000_000).default(1_024),
  FLOWGATE_MCP_MAX_LISTENS_PER_KEY: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(DEFAULT_MAX_LISTENS_PER_KEY),
  FLOWGATE_MCP_MAX_LISTENS: z.coerce.number().int().min(1).max(1_000_000).default(DEFAULT_MAX_LISTENS),
  FLOWGATE_MCP_LISTEN_MAX_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 3600)
    .default(DEFAULT_LISTEN_MAX_MS / 1000),
  FLOWGATE_MCP_LISTEN_RECHECK_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(DEFAULT_LISTEN_RECHECK_MS / 1000),
  FLOWGATE_MCP_LISTEN_SAFETY_POLL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(DEFAULT_LISTEN_SAFETY_POLL_MS / 1000),
  FLOWGATE_AUTH_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  FLOWGATE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  FLOWGATE_JWT_ISSUER: z.string().min(1).optional(),
  FLOWGATE_JWT_AUDIENCE: z.string().min(1).optional(),
  FLOWGATE_JWT_JWKS_URL: z.url({ protocol: /^https?$/ }).optional(),
  FLOWGATE_JWT_PUBLIC_KEY: z.string().min(1).optional(),
  FLOWGATE_JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  FLOWGATE_JWT_ALGORITHMS: list.optional(),
  FLOWGATE_OAUTH_AUTHORIZATION_SERVERS: list.pipe(z.array(z.url({ protocol: /^https?$/ }))).default([]),
  FLOWGATE_WORKER: bool.default(true),
  FLOWGATE_ALLOW_PRIVATE_NETWORK: bool.default(false),
  FLOWGATE_CONNECTION_CHECK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
  FLOWGATE_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  FLOWGATE_RUN_LEASE_MS: z.coerce.number().int().min(500).max(600_000).default(30_000),
  FLOWGATE_RUN_MAX_STEPS: z.coerce.number().int().min(1).max(100_000).default(1_000),
  FLOWGATE_RUN_MAX_HTTP_CALLS: z.coerce.number().int().min(0).max(100_000).default(500),
  FLOWGATE_RUN_MAX_LLM_TOKENS: z.coerce.number().int().min(0).max(100_000_000).default(200_000),
  FLOWGATE_RUN_WALL_TIME_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(24 * 3600_000)
    .default(15 * 60_000),
  FLOWGATE_RUN_MAX_DURATION_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(30 * 24 * 3600_000)
    .default(24 * 3600_000),
  FLOWGATE_RUN_MAX_RESULT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  FLOWGATE_RUN_MAX_LIVE_PER_WORKSPACE: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  FLOWGATE_RATE_LIMIT_KEY_PER_MIN: z.coerce.number().int().min(0).max(1_000_000).default(1_200),
  FLOWGATE_RATE_LIMIT_IP_PER_MIN: z.coerce.number().int().min(0).max(1_000_000).default(6_000),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  FLOWGATE_REDIS_PREFIX: z.string().min(1).max(100).default('flowgate:'),
  FLOWGATE_AUDIT_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(90),
  FLOWGATE_AUDIT_MAX_ROWS_PER_WORKSPACE: z.coerce.number().int().min(0).max(1_000_000_000).default(1_000_000),
  FLOWGATE_USAGE_METERING: bool.default(true),
  FLOWGATE_USAGE_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(400),
});

export type JwtSettings = JwtConfig;

export interface GatewayConfig {
  host: string;
  port: number;
  /** Externally visible base URL (links, server card); defaults to http://host:port. */
  publicUrl: string;
  /** False when publicUrl was derived from host and port (then the real port replaces a `0` at listen time). */
  publicUrlConfigured: boolean;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Shared buffers of the embedded database in MB: what bounds its memory. */
  embeddedSharedBuffersMb: number;
  adminToken: string | undefined;
  encryptionKey: string | undefined;
  allowedOrigins: string[];
  /** Proxies in front of the gateway that append to X-Forwarded-For (0 = ignore the header). */
  trustProxy: number;
  maxBodyBytes: number;
  /** How long a client may take to send a whole request (headers and body) before it is answered 408. */
  requestBodyTimeoutMs: number;
  /** Cap on one MCP tools/call result in bytes (text blocks plus structuredContent). */
  mcpMaxResultBytes: number;
  /** MCP requests parked waiting on runs (wait_ms, per-flow tools, tasks/result): per key, and for the process. */
  mcpMaxWaitsPerKey: number;
  mcpMaxWaits: number;
  /** MCP requests that reach the database in progress at once in this process; past it `busy` (503). */
  mcpMaxInFlight: number;
  /** subscriptions/listen streams: per key, for the process, and how long one lasts at most. */
  mcpMaxListensPerKey: number;
  mcpMaxListens: number;
  mcpListenMaxMs: number;
  /** How often an open listen stream verifies the caller's access and tool list again. */
  mcpListenRecheckMs: number;
  /**
   * Where NOTIFY wakes listen streams (a long-lived process): how often each still reads what it watches, for a
   * missed notification. Without LISTEN (Workers) streams read every 500 ms.
   */
  mcpListenSafetyPollMs: number;
  authCacheTtlMs: number;
  logLevel: string;
  jwt: JwtSettings | undefined;
  /** Issuer URLs the protected-resource metadata names; empty = the JWT issuer. */
  oauthAuthorizationServers: string[];
  worker: boolean;
  /** Let outbound calls (health checks, HTTP steps) reach loopback and private addresses: dev and tests only. */
  allowPrivateNetwork: boolean;
  /** Bound on one connection health-check request. */
  connectionCheckTimeoutMs: number;
  /** Runs one worker executes at once (the in-process worker and `flowgate worker`). */
  workerConcurrency: number;
  /** How long a worker's claim on a run lasts without renewal (how fast a dead worker's runs are taken over). */
  runLeaseMs: number;
  /** Per-run limits (the run engine's defaults otherwise). */
  runLimits: {
    maxSteps: number;
    maxHttpCalls: number;
    maxLlmTokens: number;
    wallTimeMs: number;
    maxResultBytes: number;
  };
  /** A run's whole-life bound, sleeps included. */
  runMaxDurationMs: number;
  maxLiveRunsPerWorkspace: number;
  /** Requests per minute (token bucket, a minute's allowance as burst); 0 turns a limit off. */
  rateLimits: { keyPerMinute: number; ipPerMinute: number };
  /** Shared rate-limit buckets across replicas; per-process buckets without it. */
  redisUrl: string | undefined;
  redisPrefix: string;
  /** Audit entries older than this are pruned (0 = kept forever). */
  auditRetentionDays: number;
  /** Each workspace keeps at most this many newest audit entries (0 = no cap). */
  auditMaxRowsPerWorkspace: number;
  /** Whether MCP requests and runs are counted into the usage rollups (off: for cost comparisons). */
  usageMetering: boolean;
  /** Usage rollup hours older than this are pruned (0 = kept forever). */
  usageRetentionDays: number;
}

export function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export interface LoadConfigOptions {
  /** Set when the caller cannot run without Postgres: why (a problem under DATABASE_URL when it is unset). */
  requireDatabaseUrl?: string;
}

/**
 * Reads and validates the environment. A bad configuration stops the start with every problem at once, one line
 * per variable, so a deployment is fixed in one round instead of one variable per restart.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  options: LoadConfigOptions = {},
): GatewayConfig {
  const cleaned = Object.fromEntries(
    Object.entries(env).filter(([k, v]) => k in envSchema.shape && v !== undefined),
  );
  const problems: string[] = [];
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    problems.push(...parsed.error.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`));
  }
  // Cross-variable rules look at what was set, so they are reported even when a value above is malformed.
  const set = (name: keyof typeof envSchema.shape) => (cleaned[name] ?? '') !== '';
  const jwtKeys = (
    ['FLOWGATE_JWT_JWKS_URL', 'FLOWGATE_JWT_PUBLIC_KEY', 'FLOWGATE_JWT_SECRET'] as const
  ).filter(set).length;
  const jwtWanted = jwtKeys > 0 || set('FLOWGATE_JWT_ISSUER') || set('FLOWGATE_JWT_AUDIENCE');
  if (jwtWanted) {
    if (jwtKeys !== 1)
      problems.push('set exactly one of FLOWGATE_JWT_JWKS_URL, FLOWGATE_JWT_PUBLIC_KEY, FLOWGATE_JWT_SECRET');
    if (!set('FLOWGATE_JWT_ISSUER'))
      problems.push('FLOWGATE_JWT_ISSUER is required when JWT auth is configured');
    if (!set('FLOWGATE_JWT_AUDIENCE'))
      problems.push('FLOWGATE_JWT_AUDIENCE is required when JWT auth is configured');
  }
  if (options.requireDatabaseUrl !== undefined && !set('DATABASE_URL')) {
    problems.push(`DATABASE_URL: ${options.requireDatabaseUrl}`);
  }
  if ((set('DATABASE_URL') || options.requireDatabaseUrl !== undefined) && !set('FLOWGATE_ENCRYPTION_KEY')) {
    problems.push('FLOWGATE_ENCRYPTION_KEY is required with DATABASE_URL (32 bytes, base64 or hex)');
  }
  let jwt: JwtSettings | undefined;
  if (parsed.success && jwtWanted && problems.length === 0) {
    const e = parsed.data;
    const candidate = {
      issuer: e.FLOWGATE_JWT_ISSUER,
      audience: e.FLOWGATE_JWT_AUDIENCE,
      ...(e.FLOWGATE_JWT_JWKS_URL ? { jwksUrl: e.FLOWGATE_JWT_JWKS_URL } : {}),
      ...(e.FLOWGATE_JWT_PUBLIC_KEY ? { publicKeyPem: e.FLOWGATE_JWT_PUBLIC_KEY.replace(/\\n/g, '\n') } : {}),
      ...(e.FLOWGATE_JWT_SECRET ? { secret: e.FLOWGATE_JWT_SECRET } : {}),
      ...(e.FLOWGATE_JWT_ALGORITHMS ? { algorithms: e.FLOWGATE_JWT_ALGORITHMS } : {}),
    };
    const checked = jwtConfigSchema.safeParse(candidate);
    if (checked.success) jwt = candidate as JwtSettings;
    else
      problems.push(
        ...checked.error.issues.map((i) => `FLOWGATE_JWT (${i.path.join('.') || 'config'}): ${i.message}`),
      );
  }
  if (!parsed.success || problems.length > 0) {
    throw new AppError('invalid_request', `invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const e = parsed.data;
  return {
    host: e.FLOWGATE_HOST,
    port: e.FLOWGATE_PORT,
    publicUrl: (e.FLOWGATE_PUBLIC_URL ?? `http://${hostForUrl(e.FLOWGATE_HOST)}:${e.FLOWGATE_PORT}`).replace(
      /\/+$/,
      '',
    ),
    publicUrlConfigured: e.FLOWGATE_PUBLIC_URL !== undefined,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.FLOWGATE_DATA_DIR,
    embeddedSharedBuffersMb: e.FLOWGATE_EMBEDDED_SHARED_BUFFERS_MB,
    adminToken: e.FLOWGATE_ADMIN_TOKEN,
    encryptionKey: e.FLOWGATE_ENCRYPTION_KEY,
    allowedOrigins: e.FLOWGATE_ALLOWED_ORIGINS,
    trustProxy: e.FLOWGATE_TRUST_PROXY,
    maxBodyBytes: e.FLOWGATE_MAX_BODY_BYTES,
    requestBodyTimeoutMs: e.FLOWGATE_REQUEST_BODY_TIMEOUT_MS,
    mcpMaxResultBytes: e.FLOWGATE_MCP_MAX_RESULT_BYTES,
    mcpMaxWaitsPerKey: e.FLOWGATE_MCP_MAX_WAITS_PER_KEY,
    mcpMaxWaits: e.FLOWGATE_MCP_MAX_WAITS,
    mcpMaxInFlight: e.FLOWGATE_MCP_MAX_IN_FLIGHT,
    mcpMaxListensPerKey: e.FLOWGATE_MCP_MAX_LISTENS_PER_KEY,
    mcpMaxListens: e.FLOWGATE_MCP_MAX_LISTENS,
    mcpListenMaxMs: e.FLOWGATE_MCP_LISTEN_MAX_SECONDS * 1000,
    mcpListenRecheckMs: e.FLOWGATE_MCP_LISTEN_RECHECK_SECONDS * 1000,
    mcpListenSafetyPollMs: e.FLOWGATE_MCP_LISTEN_SAFETY_POLL_SECONDS * 1000,
    authCacheTtlMs: e.FLOWGATE_AUTH_CACHE_TTL_SECONDS * 1000,
    logLevel: e.FLOWGATE_LOG_LEVEL,
    jwt,
    oauthAuthorizationServers: e.FLOWGATE_OAUTH_AUTHORIZATION_SERVERS,
    worker: e.FLOWGATE_WORKER,
    allowPrivateNetwork: e.FLOWGATE_ALLOW_PRIVATE_NETWORK,
    connectionCheckTimeoutMs: e.FLOWGATE_CONNECTION_CHECK_TIMEOUT_MS,
    workerConcurrency: e.FLOWGATE_WORKER_CONCURRENCY,
    runLeaseMs: e.FLOWGATE_RUN_LEASE_MS,
    runLimits: {
      maxSteps: e.FLOWGATE_RUN_MAX_STEPS,
      maxHttpCalls: e.FLOWGATE_RUN_MAX_HTTP_CALLS,
      maxLlmTokens: e.FLOWGATE_RUN_MAX_LLM_TOKENS,
      wallTimeMs: e.FLOWGATE_RUN_WALL_TIME_MS,
      maxResultBytes: e.FLOWGATE_RUN_MAX_RESULT_BYTES,
    },
    runMaxDurationMs: e.FLOWGATE_RUN_MAX_DURATION_MS,
    maxLiveRunsPerWorkspace: e.FLOWGATE_RUN_MAX_LIVE_PER_WORKSPACE,
    rateLimits: {
      keyPerMinute: e.FLOWGATE_RATE_LIMIT_KEY_PER_MIN,
      ipPerMinute: e.FLOWGATE_RATE_LIMIT_IP_PER_MIN,
    },
    redisUrl: e.REDIS_URL,
    redisPrefix: e.FLOWGATE_REDIS_PREFIX,
    auditRetentionDays: e.FLOWGATE_AUDIT_RETENTION_DAYS,
    auditMaxRowsPerWorkspace: e.FLOWGATE_AUDIT_MAX_ROWS_PER_WORKSPACE,
    usageMetering: e.FLOWGATE_USAGE_METERING,
    usageRetentionDays: e.FLOWGATE_USAGE_RETENTION_DAYS,
  };
}
