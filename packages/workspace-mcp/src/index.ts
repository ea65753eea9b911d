// Transport-independent MCP surface of a Flowgate workspace: catalog, policy, dispatch, resources, prompts,
// docs and the server card. The gateway supplies auth results, parsed headers and WorkspaceServices.

export type { TruncatedPreview } from './audit-preview.js';
export { AUDIT_PREVIEW_LIMITS, auditPreview, auditText, OMITTED, storableText } from './audit-preview.js';
export type {
  AnyToolDefinition,
  CatalogTool,
  ConnectionCheck,
  ConnectionSummary,
  JsonSchemaObject,
  ToolAnnotations,
  ToolDefinition,
  ToolDescriptor,
  ToolName,
} from './catalog.js';
export {
  CAPABILITY_GROUPS,
  CATALOG,
  checkConnectionsTool,
  checkFlowReadinessTool,
  connectionCheckSchema,
  connectionSummarySchema,
  createFlowDraftTool,
  defineTool,
  FEEDBACK_AREAS,
  getFlowDefinitionTool,
  getStepReferenceTool,
  getTool,
  getWorkspaceContextTool,
  inspectFlowToolTool,
  isToolName,
  listConnectionsTool,
  releaseFlowTool,
  searchFlowsTool,
  searchFlowToolsTool,
  sendFeedbackTool,
  TOOL_NAMES,
  TOOLS_BY_TOOLSET,
  textArg,
  UNSTORABLE_TEXT_MESSAGE,
  validateFlowDefinitionTool,
} from './catalog.js';
export type {
  ClientInfo,
  FeedbackArea,
  FeedbackInput,
  FlowDefinitionRecord,
  FlowInstallationRecord,
  FlowRecord,
  FlowSelector,
  FlowSource,
  FlowToolHit,
  McpAuditEntry,
  McpPrincipal,
  McpRequestContext,
  SlotBindingRecord,
  ToolContext,
  WorkspaceServices,
} from './context.js';
export {
  DEFAULT_PUBLIC_BASE_URL,
  DEFAULT_SERVER_VERSION,
  FLOW_SOURCES,
  principalFromAccess,
  SERVER_NAME,
  SERVER_TITLE,
} from './context.js';
export type { CursorCodec } from './cursor.js';
export { createCursorCodec } from './cursor.js';
export { handleMcpMessage, MAX_BATCH_SIZE, SUPPORTED_METHODS } from './dispatch.js';
export type { DocId, DocMeta, DocRenderOptions } from './docs/index.js';
export { DOC_IDS, DOCS_LAST_MODIFIED, DOCS_META, docUri, renderAllDocs, renderDoc } from './docs/index.js';
export type {
  FlowAuthoredMetadata,
  FlowDefinitionOutput,
  FlowEntry,
  FlowToolDescriptor,
  FlowToolEntry,
  MetadataSafety,
  ReadinessReport,
  TemplateEntry,
} from './flow-schemas.js';
export { CONTENT_TRUST, FLOW_AUTHORED_METADATA, READINESS_CHECKS } from './flow-schemas.js';
export {
  flowDefinitionUri,
  flowToolUri,
  flowUri,
  flowVersionUri,
  metadataSafety,
  trustDecision,
} from './flow-views.js';
export type { Limits } from './limits.js';
export { LIMITS } from './limits.js';
export type {
  HeaderGetter,
  Narrowing,
  NarrowingError,
  NarrowingHeaders,
  NarrowingProblem,
  NarrowingResult,
} from './narrowing.js';
export {
  describeNarrowing,
  FALSE_VALUES,
  MAX_NARROWING_ENTRIES,
  MAX_NARROWING_ENTRY_CHARS,
  NO_NARROWING,
  narrowingHeadersFrom,
  parseNarrowingHeaders,
  parseNarrowingParams,
  TRUE_VALUES,
} from './narrowing.js';
export type { PolicyContext, ToolEvaluation, WorkspacePolicy } from './policy.js';
export { describeBlockers, evaluateTool, OPEN_WORKSPACE_POLICY, visibleTools } from './policy.js';
export type { PromptDefinition } from './prompts.js';
export { AVAILABLE_PROMPTS, isPromptAvailable, PROMPTS } from './prompts.js';
export type { ContentBlock, McpHttpResult, ProtocolVersion, ResourceLinkContent } from './protocol.js';
export {
  adaptContentForVersion,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  isSupportedProtocolVersion,
  LATEST_PROTOCOL_VERSION,
  parseErrorResult,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol.js';
export { DIRECT_RESOURCES, RESOURCE_TEMPLATES, workspaceResourceUri } from './resource-catalog.js';
export type { Blocker, BlockerReason, ToolErrorContent, Toolset } from './schemas.js';
export {
  BLOCKER_REASONS,
  blockerSchema,
  TOOLSET_DESCRIPTIONS,
  TOOLSETS,
  toolErrorSchema,
} from './schemas.js';
export type { ServerCard } from './server-card.js';
export {
  buildServerCard,
  SERVER_CARD_DEFAULT_BASE_URL,
  SERVER_CARD_DESCRIPTION,
  SERVER_CARD_NAME,
  SERVER_CARD_SCHEMA,
  serializeServerCard,
} from './server-card.js';
export type { ToolHandler, ToolOutcome } from './tools/index.js';
export { InvalidArguments, ToolFailure } from './tools/index.js';
