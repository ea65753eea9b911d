export type {
  AdminClientOptions,
  AuditPage,
  Connection,
  ConnectionInput,
  CreatedKey,
  KeyInfo,
  McpPolicy,
  McpPolicyInput,
  ServiceAccount,
  ServiceAccountPatch,
  Workspace,
} from './admin-client.js';
export { AdminApiError, AdminClient } from './admin-client.js';
export type { CliIo } from './cli-io.js';
export { CliError, DEFAULT_API_URL } from './cli-io.js';
export { renderError, runCli } from './program.js';
export type { SeedOptions, SeedResult } from './seed.js';
export { DEMO_ACCOUNTS, DEMO_WORKSPACE_ID, seedDemo } from './seed.js';
