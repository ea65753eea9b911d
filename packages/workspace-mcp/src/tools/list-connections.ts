import { z } from 'zod';
import { cursorArg } from '../args.js';
import { connectionSummarySchema } from '../connection-outputs.js';
import { LIMITS } from '../limits.js';
import { defineTool, openToolCursor, sealToolCursor } from '../tool.js';

export const listConnectionsTool = defineTool({
  name: 'list_connections',
  title: 'List connections',
  description:
    "List the workspace's connections to outside systems (HTTP APIs, LLM providers, stored secrets), in a " +
    'stable order, one bounded page at a time. Each entry has id, name, type, base URL, auth kind, status, last known ' +
    'health, the names (never the values) of its non-secret config keys, and the flow slots it is bound to. ' +
    'Credentials are never returned. Pass nextCursor back as cursor for the next page. Use it before building ' +
    'or debugging a flow that calls an outside system, then check_connections on the ones that matter.',
  toolsets: ['read', 'setup'],
  capabilities: ['connections.read'],
  input: z.strictObject({
    limit: z
      .number()
      .int()
      .min(1)
      .max(LIMITS.listConnectionsMaxLimit)
      .default(LIMITS.listConnectionsDefaultLimit)
      .describe(`Page size, 1–${LIMITS.listConnectionsMaxLimit}.`),
    cursor: cursorArg.optional(),
  }),
  output: z.strictObject({
    connections: z.array(connectionSummarySchema),
    nextCursor: z.string().nullable(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
}).handle(async (args, ctx) => {
  const after = openToolCursor(ctx, 'list_connections', args.cursor);
  const page = await ctx.workspace.connections.list({ limit: args.limit, after });
  return {
    output: {
      connections: page.items.slice(0, args.limit),
      nextCursor: sealToolCursor(ctx, 'list_connections', page.nextAfter),
    },
  };
});
