/** What the connection tools output: never a secret, a config value or credentials in a URL. */
import { CONNECTION_TYPES } from '@flowgate/core';
import { z } from 'zod';

const connectionTypeSchema = z.enum(CONNECTION_TYPES);

/** An mcp-server's last successful check: what it speaks, who it is, how many tools it lists (not their names). */
const mcpSummarySchema = z.strictObject({
  protocolVersion: z.string(),
  serverName: z.string(),
  toolCount: z.number().int(),
});

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
  mcp: mcpSummarySchema.optional(),
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
  mcp: mcpSummarySchema.optional(),
});
