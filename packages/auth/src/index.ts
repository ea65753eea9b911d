export {
  CAPABILITIES,
  GRANTED_BY_FULL,
  ROLE_CAPABILITIES,
  capabilitySchema,
  effectiveCapabilities,
  roleSchema,
} from './capabilities.js';
export type { Capability, Role } from './capabilities.js';
export type { Principal, WorkspaceAccess } from './principal.js';
