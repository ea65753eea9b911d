import { capabilitySchema } from '@flowgate/auth';
import { CONNECTION_TYPES, QUOTA_MAX, type QuotaName, workspaceIdSchema } from '@flowgate/core';
import { urlCredentialProblem } from '@flowgate/secrets';
import { AUDIT_OUTCOMES, FIXED_HEADER_LIMITS } from '@flowgate/workspace';
import { z } from 'zod';
import { parseIpRule } from '../middleware/ip.js';

const name = z.string().trim().min(1).max(100);

export const createWorkspaceBody = z.strictObject({ id: workspaceIdSchema, name });

export const createServiceAccountBody = z.strictObject({
  name,
  capabilities: z
    .array(capabilitySchema)
    .max(20)
    .transform((c) => [...new Set(c)]),
});

export const updateServiceAccountBody = z
  .strictObject({
    name: name.optional(),
    status: z.enum(['active', 'disabled']).optional(),
    capabilities: z
      .array(capabilitySchema)
      .max(20)
      .transform((c) => [...new Set(c)])
      .optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'provide at least one of name, status, capabilities');

export const createKeyBody = z.strictObject({
  name: name.optional(),
  expiresAt: z.iso
    .datetime({ offset: true })
    .transform((s) => new Date(s))
    .refine((d) => d.getTime() > Date.now(), 'expiresAt must be in the future')
    .optional(),
});

const secret = z.string().min(1).max(8192);

/**
 * Base URLs are shown to every reader of a connection, so a credential in one would leak: refuse it and say
 * where it belongs. A URL whose token is its path (a webhook) is stored whole as a `secret` connection.
 */
const baseUrl = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .superRefine((value, ctx) => {
    const problem = urlCredentialProblem(value);
    if (problem)
      ctx.addIssue({
        code: 'custom',
        message:
          `baseUrl must not carry credentials: ${problem}. Put the credential in auth.secret (PATCH: secret) ` +
          'with auth type bearer, api-key or basic; for a webhook URL whose path is the token, create a ' +
          'connection of type "secret" with the whole URL as its secret.',
      });
  });
const connectionName = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9 _.-]{0,99}$/, 'letters, digits, space, _ . - (max 100)');

/** An llm-provider's default model, used by :llm steps that name none. */
const modelName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/, 'a model name: letters, digits, . _ : / -');

const connectionAuth = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('none') }),
  z.strictObject({ type: z.literal('bearer'), secret }),
  z.strictObject({
    type: z.literal('api-key'),
    secret,
    headerName: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/)
      .default('X-API-Key'),
  }),
  z.strictObject({
    type: z.literal('basic'),
    secret: secret.regex(/^[^:]*:.*$/s, 'basic auth secret is "user:password"'),
  }),
]);

/**
 * An mcp-server's fixed headers, name → value. Not secrets: stored in plain text and listed by name. The domain
 * refuses reserved and secret-looking names and values and says where a credential belongs instead.
 */
const fixedHeaders = z
  .record(
    z.string().min(1).max(FIXED_HEADER_LIMITS.nameLength),
    z.string().max(FIXED_HEADER_LIMITS.valueLength),
  )
  .refine((h) => Object.keys(h).length <= FIXED_HEADER_LIMITS.count, {
    message: `at most ${FIXED_HEADER_LIMITS.count} fixed headers`,
  });

export const createConnectionBody = z
  .strictObject({
    name: connectionName,
    type: z.enum(CONNECTION_TYPES),
    baseUrl: baseUrl.optional(),
    model: modelName.optional(),
    auth: connectionAuth,
    headers: fixedHeaders.optional(),
  })
  .superRefine((b, ctx) => {
    if (b.type !== 'secret' && !b.baseUrl)
      ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: `baseUrl is required for ${b.type}` });
    if (b.model !== undefined && b.type !== 'llm-provider')
      ctx.addIssue({ code: 'custom', path: ['model'], message: 'only an llm-provider has a model' });
    if (b.type === 'secret' && b.auth.type === 'none')
      ctx.addIssue({ code: 'custom', path: ['auth'], message: 'a secret connection needs a secret' });
    if (b.headers !== undefined && b.type !== 'mcp-server')
      ctx.addIssue({ code: 'custom', path: ['headers'], message: 'only an mcp-server has fixed headers' });
    if (b.type === 'mcp-server' && b.auth.type === 'basic')
      ctx.addIssue({
        code: 'custom',
        path: ['auth', 'type'],
        message: 'an mcp-server authenticates with none, bearer or api-key',
      });
  });

/**
 * Renames, moves, re-authenticates or rotates a connection; only the given fields change. `auth` replaces the auth
 * type with its secret (a new type needs a new secret); `secret` alone rotates it under the current type.
 */
export const updateConnectionBody = z
  .strictObject({
    name: connectionName.optional(),
    baseUrl: baseUrl.optional(),
    model: modelName.optional(),
    secret: secret.optional(),
    auth: connectionAuth.optional(),
    /** Replaces the whole set (`{}` removes them). */
    headers: fixedHeaders.optional(),
  })
  .refine(
    (b) => Object.keys(b).length > 0,
    'provide at least one of name, baseUrl, model, secret, auth, headers',
  )
  .refine((b) => b.secret === undefined || b.auth === undefined, {
    message: 'give the new secret inside auth when changing the auth type, not both',
    path: ['secret'],
  });

/** Rotates the secret under the connection's current auth type. */
export const rotateConnectionBody = z.strictObject({ secret });

/** `?force=true` unbinds and deletes a connection still in use. */
export const deleteConnectionQuery = z.strictObject({ force: z.enum(['true', 'false']).optional() });

const origin = z
  .string()
  .max(300)
  .refine((s) => {
    try {
      const u = new URL(s);
      return (u.protocol === 'https:' || u.protocol === 'http:') && u.origin === s;
    } catch {
      return false;
    }
  }, 'must be an origin like https://app.example.com (scheme, host, optional port; no path)');

function quotaValue(quota: QuotaName) {
  return z
    .number({ error: 'must be a positive integer or null (no quota)' })
    .int('must be a positive integer or null (no quota)')
    .min(1, 'must be a positive integer or null (no quota)')
    .max(QUOTA_MAX[quota])
    .nullable()
    .optional();
}

export function mcpPolicyBody(toolNames: readonly string[]) {
  return z.strictObject({
    readOnly: z.boolean().optional(),
    disabledTools: z
      .array(z.string().max(128))
      .max(64)
      .superRefine((list, ctx) => {
        const unknown = list.filter((t) => !toolNames.includes(t));
        if (unknown.length)
          ctx.addIssue({
            code: 'custom',
            message: `unknown tools: ${unknown.join(', ')}; valid: ${toolNames.join(', ')}`,
          });
      })
      .optional(),
    allowedOrigins: z.array(origin).max(50).optional(),
    allowedIps: z
      .array(
        z
          .string()
          .max(64)
          .refine((s) => parseIpRule(s) !== null, 'must be an IP address or CIDR range'),
      )
      .max(100)
      .optional(),
    /** Per key or user in this workspace; null goes back to the deployment default. */
    rateLimitPerMinute: z.number().int().min(1).max(1_000_000).nullable().optional(),
    /** Each a positive integer or null (no quota); a quota left out keeps its stored value. */
    quotas: z
      .strictObject({
        runsPerMonth: quotaValue('runsPerMonth'),
        llmTokensPerMonth: quotaValue('llmTokensPerMonth'),
        toolCallsPerDay: quotaValue('toolCallsPerDay'),
      })
      .optional(),
  });
}

export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  // Longer than any cursor the gateway issues; what fits is checked by its signature (400 invalid_cursor).
  cursor: z.string().max(512).optional(),
});

/** `?limit&cursor` of the audit log, narrowed by key, action (`tool`), outcome and a time window when given. */
export const auditQuery = pageQuery.extend({
  key: z.string().min(1).max(64).optional(),
  tool: z.string().min(1).max(200).optional(),
  outcome: z.enum(AUDIT_OUTCOMES).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }).optional(),
});
