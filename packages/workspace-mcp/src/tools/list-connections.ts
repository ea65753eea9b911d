import { z } from 'zod';
import { cursorArg, pageLimitArg } from '../args.js';
import { connectionSummarySchema, summaryOutput } from '../connection-outputs.js';
import { LIMITS } from '../limits.js';
import { defineTool, openToolCursor, sealToolCursor } from '../tool.js';

export const listConnectionsTool = defineTool({
  name: 'list_connections',
  title: 'List connections',
  description:
    "List the workspace's connections to outside systems (HTTP APIs, LLM providers, MCP servers, secrets), a " +
    'page at a time: id, name, type, base URL, auth kind, status, last health, config key names and bound flow ' +
    'slots; never ' +
    'credentials. Use before building or debugging a flow that calls one (then check_connections).',
  toolsets: ['read', 'setup'],
  capabilities: ['connections.read'],
  input: z.strictObject({
    limit: pageLimitArg(LIMITS.listConnectionsMaxLimit, LIMITS.listConnectionsDefaultLimit),
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
      connections: page.items.slice(0, args.limit).map(summaryOutput),
      nextCursor: sealToolCursor(ctx, 'list_connections', page.nextAfter),
    },
  };
});
