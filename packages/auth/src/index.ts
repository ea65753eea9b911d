/**
 * @flowgate/auth — who is calling and what they may do: capabilities and roles, service-account API keys, JWT
 * verification, and the authenticator (with its bounded cache) that turns a bearer token into workspace access.
 */
export { generateApiKey, parseApiKey } from './api-keys.js';
export type { AuthenticateOptions, Authenticator, AuthResult } from './authenticator.js';
export { createAuthenticator } from './authenticator.js';
export type { Capability } from './capabilities.js';
export {
  CAPABILITIES,
  capabilitySchema,
  effectiveCapabilities,
  GRANTED_BY_FULL,
  ROLE_CAPABILITIES,
} from './capabilities.js';
export type { JwtConfig } from './jwt.js';
export { jwtConfigSchema, looksLikeJwt } from './jwt.js';
export type { Principal, WorkspaceAccess } from './principal.js';
