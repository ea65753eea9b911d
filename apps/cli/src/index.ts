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
export { CliError, CliExit, DEFAULT_API_URL } from './cli-io.js';
export type { BridgeIo, BridgeOptions } from './mcp/bridge.js';
export { BRIDGE_ERRORS, MAX_LINE_BYTES, StdioBridge } from './mcp/bridge.js';
export type { ConfigFormat, ConfigInput, RenderedConfig } from './mcp/config.js';
export { envReference, renderConfig, sanitizeServerName } from './mcp/config.js';
export type { DoctorFailure, DoctorInput, DoctorReport, DoctorStage } from './mcp/doctor.js';
export { renderDoctorReport, runDoctor } from './mcp/doctor.js';
export type { NarrowingFlags } from './mcp/narrowing-flags.js';
export type { Provider, Transport } from './mcp/providers.js';
export { PROVIDERS, TRANSPORTS } from './mcp/providers.js';
export { renderError, runCli } from './program.js';
export type { SeedOptions, SeedResult } from './seed.js';
export { DEMO_ACCOUNTS, DEMO_WORKSPACE_ID, seedDemo } from './seed.js';
