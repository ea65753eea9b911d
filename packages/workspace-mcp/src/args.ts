/** Argument and output pieces several tools share, so each is described (and bounded) once. */
import { FLOW_SLUG_PATTERN, TOOL_NAME_PATTERN } from '@flowgate/core';
import { FLOW_SOURCES } from '@flowgate/workspace';
import { z } from 'zod';
import { LIMITS } from './limits.js';
import { textArg } from './tool.js';

export const cursorArg = textArg({ min: 1, max: LIMITS.cursorMaxChars }).describe(
  'Opaque cursor from a previous page (nextCursor). Omit for the first page.',
);

export const flowSlugArg = textArg()
  .regex(FLOW_SLUG_PATTERN)
  .describe('Flow slug, e.g. "enrich-company" (letters, digits, "-" and "_"; starts with a letter).');

export const toolNameArg = textArg()
  .regex(TOOL_NAME_PATTERN)
  .describe('MCP tool name the flow declares in :interfaces :mcp (:tool-name), e.g. "enrich_company".');

export const installationIdArg = textArg({ min: 1, max: LIMITS.installationIdMaxChars })
  .regex(/^[A-Za-z0-9_-]+$/)
  .describe(
    'Installation id (from search results) to address an installed public flow rather than your own.',
  );

export const queryArg = textArg({ trim: true, min: 1, max: LIMITS.searchQueryMaxChars }).describe(
  'Words to search for. Omit to browse.',
);

export const flowLiteralArg = textArg({ min: 1, max: LIMITS.flowLiteralMaxChars }).describe(
  'The complete flow definition as EDN text: one map with :slug, :invocations, :interfaces, :flow, …',
);

export const versionArg = z.number().int().min(1).max(LIMITS.flowVersionMax);

export const sourceArg = z.enum(FLOW_SOURCES);

export const targetArg = z
  .enum(['live', 'draft'])
  .describe(
    'Which definition: live (released; installations: the version they run) or draft. Default: live when released, else draft.',
  );

export const diagnosticsSummarySchema = z.strictObject({
  errors: z.number().int(),
  warnings: z.number().int(),
});

export const readOnlyFlowAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;
