import type { CatalogTool, ToolName } from '../catalog.js';
import { checkConnections } from './check-connections.js';
import { checkFlowReadiness } from './check-flow-readiness.js';
import { createFlowDraft } from './create-flow-draft.js';
import { getFlowDefinition } from './get-flow-definition.js';
import { getStepReference } from './get-step-reference.js';
import { getWorkspaceContext } from './get-workspace-context.js';
import { inspectFlowTool } from './inspect-flow-tool.js';
import { listConnections } from './list-connections.js';
import { releaseFlow } from './release-flow.js';
import { searchFlowTools } from './search-flow-tools.js';
import { searchFlows } from './search-flows.js';
import { sendFeedback } from './send-feedback.js';
import type { ToolHandler } from './types.js';
import { validateFlowDefinition } from './validate-flow-definition.js';

/** One handler per catalog entry; a catalog tool without a handler fails to compile. */
export const TOOL_HANDLERS: { readonly [N in ToolName]: ToolHandler<Extract<CatalogTool, { name: N }>> } =
  Object.freeze({
    get_workspace_context: getWorkspaceContext,
    search_flows: searchFlows,
    search_flow_tools: searchFlowTools,
    list_connections: listConnections,
    check_connections: checkConnections,
    inspect_flow_tool: inspectFlowTool,
    check_flow_readiness: checkFlowReadiness,
    get_step_reference: getStepReference,
    send_feedback: sendFeedback,
    validate_flow_definition: validateFlowDefinition,
    get_flow_definition: getFlowDefinition,
    create_flow_draft: createFlowDraft,
    release_flow: releaseFlow,
  });

export type { ToolHandler, ToolOutcome } from './types.js';
export { InvalidArguments, ToolFailure } from './types.js';
