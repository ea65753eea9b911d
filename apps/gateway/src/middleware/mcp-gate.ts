import type { Authenticator, Principal, WorkspaceAccess } from '@flowgate/auth';
import { AppError, WORKSPACE_ID_PATTERN } from '@flowgate/core';
import { SUPPORTED_METHODS } from '@flowgate/workspace-mcp';
import type { Context, MiddlewareHandler, Next } from 'hono';
import { type UsageMeter, usagePrincipal } from '../audit/usage-meter.js';
import type { AppEnv } from '../context.js';
import type { ProtectedResources } from '../discovery/protected-resource.js';
import type { BucketSpec, RateLimiter } from '../rate-limit/bucket.js';
import type { WorkspaceCache, WorkspaceState } from '../workspace-cache.js';
import { principalOf } from './authenticate.js';
import { requestBodyLimit } from './body-limit.js';
import { mcpCors } from './cors.js';
import { clientIp, ipAllowed } from './ip.js';
import { bucketOf, perMinute, rateLimitedResponse } from './rate-limit.js';

export interface McpGateOptions {
  authenticator: Authenticator;
  workspaces: WorkspaceCache;
  limiter: RateLimiter;
  publicUrl: string;
  /** `FLOWGATE_ALLOWED_ORIGINS`; the workspace policy adds its own. */
  allowedOrigins: readonly string[];
  trustProxy: number;
  maxBodyBytes: number;
  rateLimits: { ipPerMinute: number; keyPerMinute: number };
  /** The OAuth protected resources when an identity provider is configured. */
  resources?: ProtectedResources | undefined;
  /** Counts requests the gate refuses for a known caller (rate-limited; blocked by Origin or IP policy). */
  usage?: Pick<UsageMeter, 'enabled' | 'call'> | undefined;
}

const KNOWN_METHODS: ReadonlySet<string> = new Set(SUPPORTED_METHODS);

/**
 * What one principal may do in one workspace, derived once from the authenticator's cached principal and the
 * workspace cache's state. Kept against the principal object (a WeakMap), and used only while the workspace cache
 * still returns the very state it was built from: a revoked or changed key gets a new principal object from the
 * authenticator and a changed policy a new state from the workspace cache, so this cache is never fresher or staler
 * than those two (their TTLs and invalidation are the bound, as for the separate guards).
 */
interface GateEntry {
  workspaceId: string;
  state: WorkspaceState;
  access: WorkspaceAccess;
  /** The principal's rate bucket and its size under this policy; null when it has none (operator, or 0). */
  bucket: string | null;
  spec: BucketSpec;
}

/**
 * One gate in front of the MCP endpoints, doing what the separate `/api` middlewares do for every other route, in
 * the same order and with the same answers: the client address's rate (429), the body bound (413), CORS (a
 * preflight is answered before the token is asked for), the bearer token (401 with its challenge), access to the
 * workspace (403, or 404 to the operator), the caller's rate (429, the policy's own limit when it sets one),
 * Origin (403), IP allowlist (403). The MCP routes are mounted behind it ahead of those middlewares, so they never
 * run for them: one frame per request instead of eleven.
 */
export function mcpGate(options: McpGateOptions): MiddlewareHandler<AppEnv> {
  const { authenticator, workspaces, limiter, trustProxy } = options;
  const publicOrigin = new URL(options.publicUrl).origin;
  const ipSpec = perMinute(options.rateLimits.ipPerMinute);
  const bodyLimit = requestBodyLimit(options.maxBodyBytes);
  const cors = mcpCors({
    publicUrl: options.publicUrl,
    allowedOrigins: options.allowedOrigins,
    workspaces,
  });
  const entries = new WeakMap<Principal, GateEntry>();
  // One message for every denial, so the answer never hints at why (disabled, other tenant, no such workspace).
  const denied = () =>
    new AppError('forbidden', 'this token does not grant access to the requested workspace');

  async function entryFor(principal: Principal, workspaceId: string): Promise<GateEntry> {
    const fresh = workspaces.peek(workspaceId);
    const known = entries.get(principal);
    if (fresh !== undefined && known?.workspaceId === workspaceId && known.state === fresh) return known;
    if (!WORKSPACE_ID_PATTERN.test(workspaceId)) throw denied();
    const resolved = authenticator.resolveAccess(principal, workspaceId);
    if (!resolved.ok) throw denied();
    const state = fresh ?? (await workspaces.get(workspaceId));
    if (!state.exists) {
      // Only the operator may learn that a workspace does not exist.
      if (principal.kind === 'operator') throw new AppError('not_found', 'workspace not found');
      throw denied();
    }
    const limit = state.policy.rateLimitPerMinute ?? options.rateLimits.keyPerMinute;
    const entry: GateEntry = {
      workspaceId,
      state,
      access: resolved.access,
      bucket: limit > 0 ? bucketOf(principal) : null,
      spec: perMinute(limit),
    };
    entries.set(principal, entry);
    return entry;
  }

  const usage = options.usage?.enabled ? options.usage : null;
  /**
   * A refusal of a caller whose workspace is known, for usage. The body is not read here: the method is the
   * `Mcp-Method` header when it names a method served, else `(unknown)`; no tool or client is taken from the request.
   */
  const meterRefusal = (c: Context<AppEnv>, access: WorkspaceAccess, outcome: 'rate_limited' | 'blocked') => {
    const header = c.req.header('mcp-method');
    usage?.call({
      workspaceId: access.workspaceId,
      method: header !== undefined && KNOWN_METHODS.has(header) ? header : '(unknown)',
      tool: null,
      principal: usagePrincipal({ ...access.principal, keyId: access.keyId }),
      client: null,
      outcome,
      durationMs: 0,
    });
  };

  /** Everything after CORS: who is calling, and whether they may come in from where they are. */
  const guards = async (c: Context<AppEnv>, next: Next): Promise<void> => {
    const principal = await principalOf(c, authenticator, options.resources);
    c.set('principal', principal);
    const entry = await entryFor(principal, c.req.param('ws') ?? '');
    const { policy } = entry.state;
    c.set('access', entry.access);
    c.set('policy', policy);
    if (entry.bucket !== null) {
      const taken = await limiter.take(entry.bucket, entry.spec);
      // Set, not returned: this runs as CORS's `next`, which answers with the context's response.
      if (!taken.allowed) {
        meterRefusal(c, entry.access, 'rate_limited');
        c.res = rateLimitedResponse(c, 'key', taken.retryAfterMs);
        return;
      }
    }
    const origin = c.req.header('origin');
    if (
      origin !== undefined &&
      origin !== publicOrigin &&
      !options.allowedOrigins.includes(origin) &&
      !policy.allowedOrigins.includes(origin)
    ) {
      meterRefusal(c, entry.access, 'blocked');
      throw new AppError('origin_not_allowed', 'this Origin is not allowed');
    }
    // The allowlist covers MCP traffic from anyone, the operator included.
    const ip = c.get('clientIp');
    if (policy.allowedIps.length > 0 && (ip === null || !ipAllowed(ip, policy.allowedIps))) {
      meterRefusal(c, entry.access, 'blocked');
      throw new AppError('ip_not_allowed', "the client address is not in this workspace's IP allowlist");
    }
    await next();
  };

  return async (c, next) => {
    const ip = clientIp(c, trustProxy);
    c.set('clientIp', ip);
    if (options.rateLimits.ipPerMinute > 0 && ip !== null) {
      const taken = await limiter.take(`ip:${ip}`, ipSpec);
      if (!taken.allowed) return rateLimitedResponse(c, 'ip', taken.retryAfterMs);
    }
    return bodyLimit(c, async () => {
      // A preflight is answered by CORS itself; as the body limit's `next`, its answer becomes the context's.
      const answered = await cors(c, () => guards(c, next));
      if (answered) c.res = answered;
    });
  };
}
