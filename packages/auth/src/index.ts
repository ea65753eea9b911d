export {
  CAPABILITIES,
  GRANTED_BY_FULL,
  ROLE_CAPABILITIES,
  capabilitySchema,
  effectiveCapabilities,
  roleSchema,
} from './capabilities.js';
export type { Capability, Role } from './capabilities.js';
export type {
  OperatorPrincipal,
  Principal,
  ServiceAccountPrincipal,
  UserPrincipal,
  WorkspaceAccess,
} from './principal.js';
export {
  API_KEY_ID_LENGTH,
  API_KEY_PREFIX,
  API_KEY_SECRET_LENGTH,
  generateApiKey,
  hashSecret,
  parseApiKey,
  verifySecret,
} from './api-keys.js';
export type { GeneratedApiKey } from './api-keys.js';
export {
  ASYMMETRIC_JWT_ALGORITHMS,
  DEFAULT_ASYMMETRIC_ALGORITHMS,
  SYMMETRIC_JWT_ALGORITHMS,
  createJwtVerifier,
  jwtClaimsSchema,
  jwtConfigSchema,
  looksLikeJwt,
  principalFromClaims,
} from './jwt.js';
export type { ClaimsResult, JwtAlgorithm, JwtClaims, JwtConfig, JwtVerification, JwtVerifier } from './jwt.js';
export {
  DEFAULT_CACHE_MAX_ENTRIES,
  DEFAULT_CACHE_TTL_MS,
  MAX_TOKEN_LENGTH,
  createAuthenticator,
} from './authenticator.js';
export type { AccessResult, ApiKeyRecord, AuthResult, Authenticator, AuthenticatorOptions } from './authenticator.js';
