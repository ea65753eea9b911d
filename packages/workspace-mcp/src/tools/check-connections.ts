import { z } from 'zod';
import { cursorArg, pageLimitArg } from '../args.js';
import { checkOutput, connectionCheckSchema } from '../connection-outputs.js';
import { LIMITS } from '../limits.js';
import { defineTool, opaqueArg, openToolCursor, sealToolCursor } from '../tool.js';

export const checkConnectionsTool = defineTool({
  name: 'check_connections',
  title: 'Check connections',
  description:
    `Health-check connections now: up to ${LIMITS.checkConnectionsMaxIds} connection_ids, or a page of all ` +
    '(limit, cursor). Per connection: ok, status, HTTP status and latency, a redacted message; unknown ids are ' +
    'listed in unknownConnectionIds. Never exposes credentials. Sends outbound requests: call it when setup ' +
    'matters, not in a loop.',
  toolsets: ['read', 'setup'],
  capabilities: ['connections.read'],
  input: z
    .strictObject({
      connection_ids: z
        .array(opaqueArg({ min: 1, max: LIMITS.connectionIdMaxChars }))
        .min(1)
        .max(LIMITS.checkConnectionsMaxIds)
        .optional()
        .describe('Connection ids (from list_connections); omit to check a page of all.'),
      limit: pageLimitArg(LIMITS.checkConnectionsMaxLimit, LIMITS.checkConnectionsDefaultLimit),
      cursor: cursorArg.optional(),
    })
    .refine((a) => !(a.connection_ids && a.cursor), {
      message: 'cursor pages through all connections; it cannot be combined with connection_ids',
      path: ['cursor'],
    }),
  output: z.strictObject({
    checks: z.array(connectionCheckSchema),
    unknownConnectionIds: z.array(z.string()),
    summary: z.strictObject({
      checked: z.number().int(),
      healthy: z.number().int(),
      unhealthy: z.number().int(),
      disabled: z.number().int(),
    }),
    nextCursor: z.string().nullable(),
  }),
  // Read-only for the workspace, but it reaches outside systems.
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
}).handle(async (args, ctx) => {
  const after = openToolCursor(ctx, 'check_connections', args.cursor);
  const connectionIds = args.connection_ids ? [...new Set(args.connection_ids)] : null;
  const result = await ctx.workspace.connections.check({ connectionIds, limit: args.limit, after });
  const checks = result.items;
  const count = (status: string) => checks.filter((c) => c.status === status).length;
  return {
    output: {
      checks: checks.map(checkOutput),
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
});
