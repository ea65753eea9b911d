import { AppError, workspaceIdSchema, zodIssues } from '@flowgate/core';
import {
  createRemoteJWKSet,
  errors,
  importSPKI,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  jwtVerify,
} from 'jose';
import { z } from 'zod';
import {
  CAPABILITIES,
  type Capability,
  capabilitySchema,
  effectiveCapabilities,
  ROLE_CAPABILITIES,
  type Role,
  roleSchema,
} from './capabilities.js';
import type { UserPrincipal } from './principal.js';
import { type PublicKeyKind, readPublicKeyPem } from './public-key-pem.js';

export const ASYMMETRIC_JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;
export const SYMMETRIC_JWT_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export type JwtAlgorithm =
  | (typeof ASYMMETRIC_JWT_ALGORITHMS)[number]
  | (typeof SYMMETRIC_JWT_ALGORITHMS)[number];

/** Used for a JWKS URL when no algorithms are configured; a PEM key defaults to the one algorithm its type implies. */
export const DEFAULT_ASYMMETRIC_ALGORITHMS: readonly JwtAlgorithm[] = ['RS256', 'ES256', 'EdDSA'];

const SYMMETRIC = new Set<string>(SYMMETRIC_JWT_ALGORITHMS);

export const jwtConfigSchema = z
  .strictObject({
    issuer: z.string().min(1),
    audience: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    jwksUrl: z.url({ protocol: /^https?$/ }).optional(),
    publicKeyPem: z.string().min(1).optional(),
    /** HS256 shared secret; RFC 7518 asks for a key at least as long as the hash (256 bits). */
    secret: z.string().min(32, 'the shared secret must be at least 32 characters').optional(),
    algorithms: z
      .array(z.enum([...ASYMMETRIC_JWT_ALGORITHMS, ...SYMMETRIC_JWT_ALGORITHMS]))
      .min(1)
      .optional(),
    clockToleranceSeconds: z.number().int().min(0).max(300).default(30),
    /** A slow identity provider must not hold requests: fetches of the key set give up after this. */
    jwksTimeoutMs: z.number().int().positive().max(30_000).default(3_000),
    jwksCacheMaxAgeMs: z.number().int().positive().default(600_000),
  })
  .superRefine((c, ctx) => {
    const sources = [c.jwksUrl, c.publicKeyPem, c.secret].filter((s) => s !== undefined).length;
    if (sources !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'configure exactly one of jwksUrl, publicKeyPem or secret',
      });
      return;
    }
    if (!c.algorithms) return;
    // Mixing families would let a public key be used as an HMAC secret (algorithm confusion).
    const wantSymmetric = c.secret !== undefined;
    c.algorithms.forEach((alg, i) => {
      if (SYMMETRIC.has(alg) !== wantSymmetric) {
        ctx.addIssue({
          code: 'custom',
          path: ['algorithms', i],
          message: wantSymmetric
            ? 'a shared secret only verifies HS* algorithms'
            : 'a public key or JWKS only verifies asymmetric algorithms',
        });
      }
    });
  });

export type JwtConfig = z.input<typeof jwtConfigSchema>;

const capabilityListSchema = z.array(capabilitySchema).max(CAPABILITIES.length * 4);

const workspaceClaimSchema = z
  .object({
    id: workspaceIdSchema,
    role: roleSchema.optional(),
    capabilities: capabilityListSchema.optional(),
  })
  .refine((w) => w.role !== undefined || w.capabilities !== undefined, {
    message: 'needs a role or capabilities',
  });

/** Flowgate's claims inside a verified JWT. Unknown capability or role names reject the token. */
export const jwtClaimsSchema = z
  .object({
    sub: z.string().min(1).max(256),
    exp: z.number(),
    workspaces: z.array(workspaceClaimSchema).max(256).optional(),
    workspace_id: workspaceIdSchema.optional(),
    role: roleSchema.optional(),
    capabilities: capabilityListSchema.optional(),
  })
  .refine((c) => c.workspace_id === undefined || c.role !== undefined || c.capabilities !== undefined, {
    message: 'workspace_id needs a role or capabilities',
    path: ['workspace_id'],
  });

export type JwtClaims = z.infer<typeof jwtClaimsSchema>;

export type ClaimsResult = { ok: true; principal: UserPrincipal } | { ok: false; message: string };

/** Maps verified claims to a user principal; both claim forms may appear and are merged by union. */
export function principalFromClaims(payload: unknown): ClaimsResult {
  const parsed = jwtClaimsSchema.safeParse(payload);
  if (!parsed.success) {
    // Paths only: the values are the caller's and may be arbitrary.
    const paths = zodIssues(parsed.error).map((i) => i.path);
    return { ok: false, message: `token claims are invalid: ${[...new Set(paths)].join(', ')}` };
  }
  const claims = parsed.data;
  const entries: { id: string; role?: Role | undefined; capabilities?: Capability[] | undefined }[] = [
    ...(claims.workspaces ?? []),
  ];
  if (claims.workspace_id !== undefined) {
    entries.push({ id: claims.workspace_id, role: claims.role, capabilities: claims.capabilities });
  }

  const merged = new Map<string, { role: Role | null; granted: Capability[] }>();
  for (const e of entries) {
    const prev = merged.get(e.id) ?? { role: null, granted: [] };
    const granted = [
      ...prev.granted,
      ...(e.role ? ROLE_CAPABILITIES[e.role] : []),
      ...(e.capabilities ?? []),
    ];
    merged.set(e.id, { role: strongerRole(prev.role, e.role ?? null), granted });
  }
  const workspaces = new Map<string, { role: Role | null; capabilities: ReadonlySet<Capability> }>();
  for (const [id, m] of merged)
    workspaces.set(id, { role: m.role, capabilities: effectiveCapabilities(m.granted) });

  return {
    ok: true,
    principal: { kind: 'user', id: claims.sub, workspaces, expiresAt: new Date(claims.exp * 1000) },
  };
}

const ROLE_RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2 };
function strongerRole(a: Role | null, b: Role | null): Role | null {
  if (a === null) return b;
  if (b === null) return a;
  return ROLE_RANK[b] > ROLE_RANK[a] ? b : a;
}

/** Three base64url segments; the signature may be empty so that `alg: none` tokens reach jose and are refused there. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
export function looksLikeJwt(token: string): boolean {
  return JWT_SHAPE.test(token);
}

export type JwtVerification = { ok: true; principal: UserPrincipal } | { ok: false; message: string };

export interface JwtVerifier {
  /**
   * Resolves `ok: false` for any bad token; throws `AppError('unavailable')` only when the JWKS cannot be fetched.
   * `resource` is the URL of the endpoint the token is presented to (see `acceptsAudience`).
   */
  verify(token: string, resource?: string): Promise<JwtVerification>;
  /**
   * Everything but the audience binding, for callers that cache one verification across endpoints and check
   * `acceptsAudience` at each use.
   */
  verifyUnbound(token: string): Promise<JwtVerification>;
  /**
   * A token is accepted where its `aud` names a configured audience (valid on every endpoint) or exactly the
   * resource it is presented to (RFC 8707 / MCP authorization: a token for one MCP URL is refused on any other).
   */
  acceptsAudience(principal: UserPrincipal, resource?: string): boolean;
  readonly algorithms: readonly JwtAlgorithm[];
}

export const AUDIENCE_REFUSED = 'token audience is not accepted';

/** Marks failures of the key source itself, which are not the caller's fault. */
class KeySourceUnavailable extends Error {}

export function createJwtVerifier(input: JwtConfig, now: () => number = Date.now): JwtVerifier {
  const parsed = jwtConfigSchema.safeParse(input);
  if (!parsed.success)
    throw new AppError('validation_failed', 'invalid JWT configuration', zodIssues(parsed.error));
  const config = parsed.data;

  let key: Uint8Array | JWTVerifyGetKey;
  let algorithms: readonly JwtAlgorithm[];
  if (config.secret !== undefined) {
    key = new TextEncoder().encode(config.secret);
    algorithms = config.algorithms ?? ['HS256'];
  } else if (config.publicKeyPem !== undefined) {
    const imported = importPublicKeyPem(config.publicKeyPem);
    key = imported.key;
    algorithms = config.algorithms ?? [imported.algorithm];
  } else {
    const remote = createRemoteJWKSet(new URL(config.jwksUrl as string), {
      timeoutDuration: config.jwksTimeoutMs,
      cacheMaxAge: config.jwksCacheMaxAgeMs,
    });
    key = async (header, token) => {
      try {
        return await remote(header, token);
      } catch (err) {
        if (
          err instanceof errors.JWKSNoMatchingKey ||
          err instanceof errors.JWKSMultipleMatchingKeys ||
          err instanceof errors.JOSENotSupported
        ) {
          throw err;
        }
        throw new KeySourceUnavailable('key set unavailable', { cause: err });
      }
    };
    algorithms = config.algorithms ?? DEFAULT_ASYMMETRIC_ALGORITHMS;
  }

  // The audience is checked after verification (acceptsAudience), because which values are accepted depends on
  // the endpoint the token is presented to.
  const baseOptions = {
    issuer: config.issuer,
    algorithms: [...algorithms],
    clockTolerance: config.clockToleranceSeconds,
    requiredClaims: ['exp', 'sub', 'aud'],
  } satisfies JWTVerifyOptions;
  const configuredAudiences = new Set(
    typeof config.audience === 'string' ? [config.audience] : config.audience,
  );

  function acceptsAudience(principal: UserPrincipal, resource?: string): boolean {
    return (principal.audiences ?? []).some(
      (a) => configuredAudiences.has(a) || (resource !== undefined && a === resource),
    );
  }

  async function verifyWith(token: string): Promise<JWTPayload> {
    const options: JWTVerifyOptions = { ...baseOptions, currentDate: new Date(now()) };
    try {
      // Overloads differ only in the key's type; this call covers all three sources.
      const { payload } = await jwtVerify(token, key as Parameters<typeof jwtVerify>[1], options);
      return payload;
    } catch (err) {
      if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
      // Several keys fit a token without `kid`: try each; the last failure is the one reported.
      let last: unknown = err;
      for await (const candidate of err) {
        try {
          return (await jwtVerify(token, candidate, options)).payload;
        } catch (inner) {
          last = inner;
        }
      }
      throw last;
    }
  }

  async function verifyUnbound(token: string): Promise<JwtVerification> {
    let payload: JWTPayload;
    try {
      payload = await verifyWith(token);
    } catch (err) {
      if (err instanceof KeySourceUnavailable) {
        throw new AppError(
          'unavailable',
          'the identity provider keys could not be fetched; try again shortly',
        );
      }
      return { ok: false, message: describeJoseError(err) };
    }
    const audiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
    if (!audiences.every((a) => typeof a === 'string')) return { ok: false, message: AUDIENCE_REFUSED };
    const mapped = principalFromClaims(payload);
    return mapped.ok ? { ok: true, principal: { ...mapped.principal, audiences } } : mapped;
  }

  return {
    algorithms,
    verifyUnbound,
    acceptsAudience,
    async verify(token: string, resource?: string): Promise<JwtVerification> {
      const result = await verifyUnbound(token);
      if (result.ok && !acceptsAudience(result.principal, resource))
        return { ok: false, message: AUDIENCE_REFUSED };
      return result;
    },
  };
}

const ALGORITHM_OF_KIND: Partial<Record<PublicKeyKind, JwtAlgorithm>> = {
  rsa: 'RS256',
  'rsa-pss': 'PS256',
  ed25519: 'EdDSA',
  'P-256': 'ES256',
  'P-384': 'ES384',
  'P-521': 'ES512',
};

/**
 * The configured key and the algorithm it implies. Web Crypto binds an imported key to one algorithm and imports
 * asynchronously, so the key is imported per token algorithm on first use (jose has already refused an algorithm
 * that is not allowed) and kept.
 */
function importPublicKeyPem(pem: string): { key: JWTVerifyGetKey; algorithm: JwtAlgorithm } {
  if (pem.includes('PRIVATE KEY')) {
    throw new AppError(
      'validation_failed',
      'publicKeyPem must be a public key (SPKI PEM), not a private key',
    );
  }
  const read = readPublicKeyPem(pem);
  if (!read) throw new AppError('validation_failed', 'publicKeyPem is not a readable SPKI public key');
  const algorithm = ALGORITHM_OF_KIND[read.kind];
  if (algorithm) {
    const imported = new Map<string, ReturnType<typeof importSPKI>>();
    const key: JWTVerifyGetKey = ({ alg }) => {
      let k = imported.get(alg);
      if (!k) {
        k = importSPKI(read.spkiPem, alg);
        imported.set(alg, k);
      }
      return k;
    };
    return { key, algorithm };
  }
  throw new AppError(
    'validation_failed',
    'publicKeyPem has a key type that needs an explicit algorithms list',
  );
}

/** Fixed messages per failure: jose's own texts are safe today, but nothing from the token should reach a response. */
function describeJoseError(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    switch (err.claim) {
      case 'nbf':
        return 'token is not yet valid';
      case 'iss':
        return 'token issuer is not accepted';
      case 'aud':
        return AUDIENCE_REFUSED;
      case 'exp':
        return 'token must carry a valid exp claim';
      case 'sub':
        return 'token must carry a sub claim';
      case 'iat':
        return 'token iat claim is invalid';
      default:
        return 'token claims are invalid';
    }
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return 'token algorithm is not allowed';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'token signature is invalid';
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) {
    return 'no trusted key matches this token';
  }
  if (err instanceof errors.JOSENotSupported) return 'token algorithm is not supported';
  return 'token is malformed or cannot be verified';
}
