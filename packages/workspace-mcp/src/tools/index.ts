import type { CatalogTool, ToolName } from '../catalog.js';
import { checkConnections } from './check-connections.js';
import { getWorkspaceContext } from './get-workspace-context.js';
import { listConnections } from './list-connections.js';
import { sendFeedback } from './send-feedback.js';
import type { ToolHandler } from './types.js';

/** One handler per catalog entry; a catalog tool without a handler fails to compile. */
export const TOOL_HANDLERS: { readonly [N in ToolName]: ToolHandler<Extract<CatalogTool, { name: N }>> } =
  Object.freeze({
    get_workspace_context: getWorkspaceContext,
    list_connections: listConnections,
    check_connections: checkConnections,
    send_feedback: sendFeedback,
  });

export type { ToolHandler, ToolOutcome } from './types.js';
export { InvalidArguments } from './types.js';
