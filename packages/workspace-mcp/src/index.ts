/**
 * @flowgate/workspace-mcp — the MCP surface of a Flowgate workspace, independent of the transport: the tool catalog
 * (one module per tool in tools/), the policy that decides what a caller sees (capabilities ∩ narrowing ∩ workspace
 * policy), JSON-RPC dispatch, resources, prompts, the agent docs and the server card. The gateway authenticates,
 * parses headers and opens the caller's `Workspace`; everything else happens here.
 */
export { CATALOG, iconsForTools, TOOL_NAMES, toolIcons, toolIconUrls } from './catalog.js';
export type {
  ClientInfo,
  McpAuditEntry,
  McpRequestContext,
  McpResponseStream,
  McpUsageEntry,
} from './context.js';
export { principalFromAccess, SERVER_TITLE } from './context.js';
export { handleMcpMessage, SUPPORTED_METHODS } from './dispatch.js';
export { FLOW_TOOL_WAIT_MS, flowSurface } from './flow-surface.js';
export {
  type Icon,
  SERVER_ICON_SVG,
  serverIcons,
  TOOLSET_ICON_SVGS,
  toolsetIconPath,
  toolsetIcons,
} from './icons.js';
export {
  createListenHub,
  DEFAULT_LISTEN_MAX_MS,
  DEFAULT_LISTEN_RECHECK_MS,
  DEFAULT_LISTEN_SAFETY_POLL_MS,
  DEFAULT_MAX_LISTENS,
  DEFAULT_MAX_LISTENS_PER_KEY,
  type ListenChange,
  type ListenHub,
  TOO_MANY_LISTENS,
} from './listen.js';
export { narrowingHeadersFrom, parseNarrowingHeaders } from './narrowing.js';
export { evaluateTool, OPEN_WORKSPACE_POLICY } from './policy.js';
export { MAX_PROGRESS_NOTIFICATIONS, PROGRESS_POLL_MS } from './progress.js';
export { AVAILABLE_PROMPTS, PROMPTS } from './prompts.js';
export type { McpHttpResult } from './protocol.js';
export {
  LATEST_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSION,
  parseErrorResult,
  SERVED_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol.js';
export { DIRECT_RESOURCES, RESOURCE_TEMPLATES } from './resource-catalog.js';
export { DEFAULT_MAX_RESULT_BYTES, MIN_MAX_RESULT_BYTES } from './result.js';
export {
  HEADER_MISMATCH,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  modernRequestHeaders,
  UNSUPPORTED_PROTOCOL_VERSION,
} from './revision.js';
export type { Toolset } from './schemas.js';
export { TOOLSETS } from './schemas.js';
export {
  buildEndpointServerCards,
  buildServerCard,
  type EndpointServerCard,
  FLOW_SERVER_CARD_NAME,
  SERVER_CARD_DEFAULT_BASE_URL,
  SERVER_CARD_DESCRIPTION,
  SERVER_CARD_MEDIA_TYPE,
  SERVER_CARD_NAME,
  SERVER_CARD_SCHEMA,
  serializeServerCard,
} from './server-card.js';
export { type McpSurface, WORKSPACE_SURFACE } from './surface.js';
export {
  fullToolsListJson,
  MODEL_FACING_TOKEN_BUDGET,
  modelFacingJson,
  TOOLS_LIST_TOKEN_BUDGET,
} from './token-budget.js';
export {
  createWaitGate,
  DEFAULT_MAX_WAITS,
  DEFAULT_MAX_WAITS_PER_KEY,
  TOO_MANY_WAITS,
  type WaitGate,
} from './waits.js';
