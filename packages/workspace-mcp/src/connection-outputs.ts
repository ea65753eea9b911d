/** What the connection tools output: never a secret, a config value or credentials in a URL. */
import { CONNECTION_TYPES } from '@flowgate/core';
import { z } from 'zod';

const connectionTypeSchema = z.enum(CONNECTION_TYPES);

/**
 * An mcp-server's last successful check (what it speaks, who it is, how many tools it lists — never their names), as
 * the check's message: one line costs an agent far less in every tools/list than a nested output schema twice over.
 */
export function mcpCheckLine(mcp: {
  protocolVersion: string;
  serverName: string;
  toolCount: number;
}): string {
  return `MCP ${mcp.protocolVersion}, server ${mcp.serverName}, ${mcp.toolCount} tool${mcp.toolCount === 1 ? '' : 's'}`;
}

type WithMcp = { mcp?: { protocolVersion: string; serverName: string; toolCount: number } | undefined };

/** A connection summary as the tools show it: the MCP summary folded into the health message. */
export function summaryOutput<T extends WithMcp & { health: { message: string | null } | null }>(
  c: T,
): Omit<T, 'mcp'> {
  const { mcp, ...rest } = c;
  if (!mcp || !rest.health || rest.health.message !== null) return rest;
  return { ...rest, health: { ...rest.health, message: mcpCheckLine(mcp) } };
}

/** A check as the tools show it: the MCP summary as its message. */
export function checkOutput<T extends WithMcp & { message: string | null }>(c: T): Omit<T, 'mcp'> {
  const { mcp, ...rest } = c;
  return mcp && rest.message === null ? { ...rest, message: mcpCheckLine(mcp) } : rest;
}

export const connectionSummarySchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  type: connectionTypeSchema,
  baseUrl: z.string().nullable(),
  authType: z.string(),
  status: z.enum(['active', 'disabled']),
  health: z
    .strictObject({
      ok: z.boolean(),
      checkedAt: z.string(),
      httpStatus: z.number().int().nullable(),
      message: z.string().nullable(),
    })
    .nullable(),
  /** Names of the non-secret config entries; values are never returned. */
  configKeys: z.array(z.string()),
  boundSlots: z.array(z.strictObject({ flowSlug: z.string(), slot: z.string(), target: z.string() })),
  createdAt: z.string(),
});

export const connectionCheckSchema = z.strictObject({
  connectionId: z.string(),
  name: z.string(),
  type: connectionTypeSchema,
  ok: z.boolean(),
  status: z.enum(['healthy', 'unhealthy', 'disabled']),
  httpStatus: z.number().int().nullable(),
  latencyMs: z.number().nullable(),
  message: z.string().nullable(),
  checkedAt: z.string(),
});
