export type { GeneratedApiKey } from './api-keys.js';
export {
  API_KEY_ID_LENGTH,
  API_KEY_PREFIX,
  API_KEY_SECRET_LENGTH,
  generateApiKey,
  hashSecret,
  parseApiKey,
  verifySecret,
} from './api-keys.js';
export type {
  AccessResult,
  ApiKeyRecord,
  Authenticator,
  AuthenticatorOptions,
  AuthResult,
} from './authenticator.js';
export {
  createAuthenticator,
  DEFAULT_CACHE_MAX_ENTRIES,
  DEFAULT_CACHE_TTL_MS,
  MAX_TOKEN_LENGTH,
} from './authenticator.js';
export type { Capability, Role } from './capabilities.js';
export {
  CAPABILITIES,
  capabilitySchema,
  effectiveCapabilities,
  GRANTED_BY_FULL,
  ROLE_CAPABILITIES,
  roleSchema,
} from './capabilities.js';
export type {
  ClaimsResult,
  JwtAlgorithm,
  JwtClaims,
  JwtConfig,
  JwtVerification,
  JwtVerifier,
} from './jwt.js';
export {
  ASYMMETRIC_JWT_ALGORITHMS,
  createJwtVerifier,
  DEFAULT_ASYMMETRIC_ALGORITHMS,
  jwtClaimsSchema,
  jwtConfigSchema,
  looksLikeJwt,
  principalFromClaims,
  SYMMETRIC_JWT_ALGORITHMS,
} from './jwt.js';
export type {
  OperatorPrincipal,
  Principal,
  ServiceAccountPrincipal,
  UserPrincipal,
  WorkspaceAccess,
} from './principal.js';
