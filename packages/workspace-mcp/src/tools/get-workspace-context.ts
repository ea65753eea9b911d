import type { getWorkspaceContextTool } from '../catalog.js';
import { workspaceResourceUri } from '../resource-catalog.js';
import { buildWorkspaceContext } from '../workspace-context.js';
import type { ToolHandler } from './types.js';

export const getWorkspaceContext: ToolHandler<typeof getWorkspaceContextTool> = async (_args, ctx) => ({
  output: await buildWorkspaceContext(ctx),
  resourceUris: [workspaceResourceUri(ctx.request.workspaceId)],
});
