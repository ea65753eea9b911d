import type { checkConnectionsTool } from '../catalog.js';
import { safeText } from './sanitize.js';
import { openToolCursor, sealToolCursor, type ToolHandler } from './types.js';

export const checkConnections: ToolHandler<typeof checkConnectionsTool> = async (args, ctx) => {
  const after = openToolCursor(ctx, 'check_connections', args.cursor);
  const connectionIds = args.connection_ids ? [...new Set(args.connection_ids)] : null;
  const result = await ctx.request.services.checkConnections({ connectionIds, limit: args.limit, after });
  const checks = result.items.map((c) => ({ ...c, message: safeText(c.message) }));
  const count = (status: string) => checks.filter((c) => c.status === status).length;
  return {
    output: {
      checks,
      unknownConnectionIds: result.unknownConnectionIds,
      summary: {
        checked: checks.length,
        healthy: count('healthy'),
        unhealthy: count('unhealthy'),
        disabled: count('disabled'),
      },
      // Explicit ids are checked in one go; only the browse mode pages.
      nextCursor: connectionIds ? null : sealToolCursor(ctx, 'check_connections', result.nextAfter),
    },
  };
};
