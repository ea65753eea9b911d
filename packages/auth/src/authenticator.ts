import { timingSafeEqualText, WORKSPACE_ID_PATTERN } from '@flowgate/core';
import { z } from 'zod';
import { API_KEY_PREFIX, parseApiKey, verifySecret } from './api-keys.js';
import { type Capability, capabilitySchema, effectiveCapabilities, GRANTED_BY_FULL } from './capabilities.js';
import {
  AUDIENCE_REFUSED,
  createJwtVerifier,
  type JwtConfig,
  type JwtVerifier,
  looksLikeJwt,
} from './jwt.js';
import type { Principal, ServiceAccountPrincipal, WorkspaceAccess } from './principal.js';
import { TokenCache } from './token-cache.js';

/** What the key store returns for a key id; the authenticator never sees the secret, only its hash. */
export interface ApiKeyRecord {
  keyId: string;
  workspaceId: string;
  serviceAccountId: string;
  serviceAccountName: string;
  serviceAccountStatus: 'active' | 'disabled';
  capabilities: string[];
  secretHash: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

export interface AuthenticatorOptions {
  lookupApiKey(keyId: string): Promise<ApiKeyRecord | null>;
  /** Called on every successful key authentication, cached or not; the caller batches `lastUsedAt` writes. */
  onKeyUsed?(keyId: string, at: Date): void;
  /** Absent: JWTs are refused as `invalid_token`. */
  jwt?: JwtConfig;
  /** FLOWGATE_ADMIN_TOKEN; compared in constant time. An empty string disables it. */
  operatorToken?: string;
  /**
   * How long a verified token is trusted without looking at the key store again. This is the documented bound
   * on how late a revocation or disabling done on another replica takes effect. Default 30 s.
   */
  cacheTtlMs?: number;
  /** Default 10 000; least recently used entries go first. */
  cacheMaxEntries?: number;
  /**
   * How long a key id the store does not know is refused without asking the store again (default 30 s), so a
   * flood of made-up `fgk_` keys costs no lookups. Safe because key ids are random: no real key is created
   * under an id someone probed before.
   */
  unknownKeyTtlMs?: number;
  /** Default 10 000 unknown ids; the oldest go first. */
  unknownKeyMaxEntries?: number;
  now?: () => number;
}

export interface AuthenticateOptions {
  resource?: string | undefined;
}

export type AuthResult =
  | { ok: true; principal: Principal }
  | { ok: false; code: 'invalid_token'; message: string };
export type AccessResult =
  | { ok: true; access: WorkspaceAccess }
  | { ok: false; code: 'forbidden'; message: string };

export interface Authenticator {
  /**
   * Resolves `ok: false` for every token that must get a 401. Throws only for infrastructure failures:
   * `lookupApiKey` errors as they are, and `AppError('unavailable')` when the JWKS cannot be fetched.
   * `resource` is the absolute URL of the endpoint the token is presented to: a JWT must name it, or a configured
   * audience, in `aud`.
   */
  authenticate(token: string, options?: AuthenticateOptions): Promise<AuthResult>;
  /** Drops cached entries of a key at once (revoke, capability change in this process). */
  invalidateKey(keyId: string): void;
  /** Drops cached entries of every key of a service account (disable, delete, capability change). */
  invalidateServiceAccount(serviceAccountId: string): void;
  clear(): void;
  /** What a principal may do inside one workspace. */
  resolveAccess(principal: Principal, workspaceId: string): AccessResult;
  cacheSize(): number;
}

export const DEFAULT_CACHE_TTL_MS = 30_000;
export const DEFAULT_CACHE_MAX_ENTRIES = 10_000;
export const DEFAULT_UNKNOWN_KEY_TTL_MS = 30_000;
export const DEFAULT_UNKNOWN_KEY_MAX_ENTRIES = 10_000;
/** Longer than any realistic JWT; keeps hashing and parsing of hostile input bounded. */
export const MAX_TOKEN_LENGTH = 16_384;

const tuningSchema = z.object({
  cacheTtlMs: z.number().int().min(0).max(3_600_000).default(DEFAULT_CACHE_TTL_MS),
  cacheMaxEntries: z.number().int().min(0).max(10_000_000).default(DEFAULT_CACHE_MAX_ENTRIES),
  unknownKeyTtlMs: z.number().int().min(0).max(3_600_000).default(DEFAULT_UNKNOWN_KEY_TTL_MS),
  unknownKeyMaxEntries: z.number().int().min(0).max(10_000_000).default(DEFAULT_UNKNOWN_KEY_MAX_ENTRIES),
});

function invalid(message: string): AuthResult {
  return { ok: false, code: 'invalid_token', message };
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { cacheTtlMs, cacheMaxEntries, unknownKeyTtlMs, unknownKeyMaxEntries } = tuningSchema.parse({
    cacheTtlMs: options.cacheTtlMs,
    cacheMaxEntries: options.cacheMaxEntries,
    unknownKeyTtlMs: options.unknownKeyTtlMs,
    unknownKeyMaxEntries: options.unknownKeyMaxEntries,
  });
  // Key id → when the "unknown" answer stops being trusted. Insertion order makes the first entry the oldest.
  const unknownKeys = new Map<string, number>();

  function knownUnknown(keyId: string): boolean {
    const until = unknownKeys.get(keyId);
    if (until === undefined) return false;
    if (until > now()) return true;
    unknownKeys.delete(keyId);
    return false;
  }

  function rememberUnknown(keyId: string): void {
    if (unknownKeyTtlMs === 0 || unknownKeyMaxEntries === 0) return;
    unknownKeys.delete(keyId);
    unknownKeys.set(keyId, now() + unknownKeyTtlMs);
    while (unknownKeys.size > unknownKeyMaxEntries) {
      const oldest = unknownKeys.keys().next().value;
      if (oldest === undefined) break;
      unknownKeys.delete(oldest);
    }
  }
  const now = options.now ?? Date.now;
  const cache = new TokenCache<Principal>(cacheMaxEntries, now);
  const jwt: JwtVerifier | null = options.jwt ? createJwtVerifier(options.jwt, now) : null;
  // Compared as digests (equal length), so the comparison's time says nothing about the presented token's length.
  const operatorDigest = options.operatorToken ? TokenCache.keyOf(options.operatorToken) : null;

  // Concurrent first uses of one token share a single lookup. Invalidation bumps the epoch so a lookup that
  // started before a revocation cannot put its (stale) result into the cache afterwards.
  const inFlight = new Map<string, Promise<AuthResult>>();
  let epoch = 0;

  function keyUsed(keyId: string): void {
    if (!options.onKeyUsed) return;
    try {
      options.onKeyUsed(keyId, new Date(now()));
    } catch {
      // Bookkeeping must never fail an otherwise valid request.
    }
  }

  function cacheUntil(
    token: string,
    principal: Principal,
    expiresAt: Date | null,
    startedEpoch: number,
  ): void {
    if (startedEpoch !== epoch) return;
    const bound = now() + cacheTtlMs;
    cache.set(token, principal, expiresAt ? Math.min(bound, expiresAt.getTime()) : bound);
  }

  async function authenticateApiKey(token: string, startedEpoch: number): Promise<AuthResult> {
    const parts = parseApiKey(token);
    if (!parts) return invalid('API key is malformed');
    if (knownUnknown(parts.keyId)) return invalid('API key is not valid');
    const record = await options.lookupApiKey(parts.keyId);
    if (!record) rememberUnknown(parts.keyId);
    // Unknown id and wrong secret read the same, so key ids cannot be probed.
    if (!record || record.keyId !== parts.keyId || !verifySecret(parts.secret, record.secretHash)) {
      return invalid('API key is not valid');
    }
    if (record.revokedAt !== null) return invalid('API key has been revoked');
    if (record.expiresAt !== null && record.expiresAt.getTime() <= now())
      return invalid('API key has expired');

    const granted: Capability[] = [];
    for (const name of record.capabilities) {
      const c = capabilitySchema.safeParse(name);
      if (c.success) granted.push(c.data);
    }
    const principal: ServiceAccountPrincipal = {
      kind: 'service_account',
      id: record.serviceAccountId,
      workspaceId: record.workspaceId,
      keyId: record.keyId,
      name: record.serviceAccountName,
      status: record.serviceAccountStatus,
      capabilities: effectiveCapabilities(granted),
      expiresAt: record.expiresAt,
    };
    cacheUntil(token, principal, principal.expiresAt, startedEpoch);
    keyUsed(principal.keyId);
    return { ok: true, principal };
  }

  async function authenticateJwt(token: string, startedEpoch: number): Promise<AuthResult> {
    if (!jwt) return invalid('JWT bearer tokens are not accepted by this gateway');
    // Cached without the audience binding, which `authenticate` checks at every use against that use's endpoint.
    const result = await jwt.verifyUnbound(token);
    if (!result.ok) return invalid(result.message);
    cacheUntil(token, result.principal, result.principal.expiresAt, startedEpoch);
    return { ok: true, principal: result.principal };
  }

  function verifyUncached(token: string): Promise<AuthResult> {
    const startedEpoch = epoch;
    if (token.startsWith(API_KEY_PREFIX)) return authenticateApiKey(token, startedEpoch);
    if (looksLikeJwt(token)) return authenticateJwt(token, startedEpoch);
    return Promise.resolve(invalid('bearer token is not recognised'));
  }

  function dropWhere(predicate: (p: Principal) => boolean): void {
    epoch++;
    cache.deleteWhere(predicate);
  }

  function boundToResource(result: AuthResult, resource: string | undefined): AuthResult {
    if (!result.ok || result.principal.kind !== 'user' || !jwt) return result;
    return jwt.acceptsAudience(result.principal, resource) ? result : invalid(AUDIENCE_REFUSED);
  }

  async function authenticateAnywhere(token: string): Promise<AuthResult> {
    if (typeof token !== 'string' || token.length === 0) return invalid('bearer token is missing');
    if (token.length > MAX_TOKEN_LENGTH) return invalid('bearer token is too long');

    // One sha256 per request: the operator comparison and the cache both use it.
    const key = TokenCache.keyOf(token);
    if (operatorDigest && timingSafeEqualText(key, operatorDigest)) {
      return { ok: true, principal: { kind: 'operator', id: 'operator' } };
    }

    const cached = cache.getByKey(key);
    if (cached) {
      if (cached.kind === 'service_account') keyUsed(cached.keyId);
      return { ok: true, principal: cached };
    }

    const flightKey = key;
    const pending = inFlight.get(flightKey);
    if (pending) {
      const shared = await pending;
      if (shared.ok && shared.principal.kind === 'service_account') keyUsed(shared.principal.keyId);
      return shared;
    }
    const started = verifyUncached(token);
    inFlight.set(flightKey, started);
    try {
      return await started;
    } finally {
      inFlight.delete(flightKey);
    }
  }

  return {
    async authenticate(token: string, options: AuthenticateOptions = {}): Promise<AuthResult> {
      return boundToResource(await authenticateAnywhere(token), options.resource);
    },

    invalidateKey(keyId: string): void {
      dropWhere((p) => p.kind === 'service_account' && p.keyId === keyId);
    },

    invalidateServiceAccount(serviceAccountId: string): void {
      dropWhere((p) => p.kind === 'service_account' && p.id === serviceAccountId);
    },

    clear(): void {
      epoch++;
      cache.clear();
      unknownKeys.clear();
    },

    resolveAccess(principal: Principal, workspaceId: string): AccessResult {
      const noAccess: AccessResult = {
        ok: false,
        code: 'forbidden',
        // Same text whether or not the workspace exists; only a well-formed id is repeated back.
        message: `this token has no access to ${WORKSPACE_ID_PATTERN.test(workspaceId) ? `workspace ${workspaceId}` : 'that workspace'}`,
      };
      switch (principal.kind) {
        case 'operator':
          return {
            ok: true,
            access: {
              workspaceId,
              principal,
              capabilities: new Set(GRANTED_BY_FULL),
              isAdmin: true,
              keyId: null,
            },
          };
        case 'service_account':
          if (principal.workspaceId !== workspaceId) return noAccess;
          if (principal.status !== 'active') {
            return { ok: false, code: 'forbidden', message: 'the service account of this key is disabled' };
          }
          // workspace.full deliberately does not make a key an admin: keys never manage accounts or keys.
          return {
            ok: true,
            access: {
              workspaceId,
              principal,
              capabilities: principal.capabilities,
              isAdmin: false,
              keyId: principal.keyId,
            },
          };
        case 'user': {
          const membership = principal.workspaces.get(workspaceId);
          if (!membership) return noAccess;
          return {
            ok: true,
            access: {
              workspaceId,
              principal,
              capabilities: membership.capabilities,
              isAdmin: membership.role === 'admin',
              keyId: null,
            },
          };
        }
      }
    },

    cacheSize(): number {
      return cache.size;
    },
  };
}
