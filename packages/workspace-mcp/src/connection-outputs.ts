/** What the connection tools output: never a secret, a config value or credentials in a URL. */
import { CONNECTION_TYPES } from '@flowgate/core';
import { z } from 'zod';

const connectionTypeSchema = z.enum(CONNECTION_TYPES);

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
