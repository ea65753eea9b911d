import type { listConnectionsTool } from '../catalog.js';
import { safeBaseUrl, safeText } from './sanitize.js';
import { openToolCursor, sealToolCursor, type ToolHandler } from './types.js';

export const listConnections: ToolHandler<typeof listConnectionsTool> = async (args, ctx) => {
  const after = openToolCursor(ctx, 'list_connections', args.cursor);
  const page = await ctx.request.services.listConnections({ limit: args.limit, after });
  const connections = page.items.slice(0, args.limit).map((c) => ({
    ...c,
    baseUrl: safeBaseUrl(c.baseUrl),
    health: c.health ? { ...c.health, message: safeText(c.health.message) } : null,
  }));
  return { output: { connections, nextCursor: sealToolCursor(ctx, 'list_connections', page.nextAfter) } };
};
