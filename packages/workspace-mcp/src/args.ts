/** Argument and output pieces several tools share, so each is described (and bounded) once. */
import { FLOW_SLUG_PATTERN, TOOL_NAME_PATTERN, zodIssues } from '@flowgate/core';
import { FLOW_SOURCES } from '@flowgate/workspace';
import { z } from 'zod';
import { LIMITS } from './limits.js';
import { opaqueArg, textArg } from './tool.js';

export const cursorArg = opaqueArg({
  min: 1,
  max: LIMITS.cursorMaxChars,
  description: 'nextCursor of the previous page; omit for the first.',
});

export const flowSlugArg = textArg().regex(FLOW_SLUG_PATTERN).describe('Flow slug, e.g. "enrich-company".');

export const toolNameArg = textArg()
  .regex(TOOL_NAME_PATTERN)
  .describe('Flow tool name (:tool-name), e.g. "enrich_company".');

export const installationIdArg = opaqueArg({
  min: 1,
  max: LIMITS.installationIdMaxChars,
  pattern: /^[A-Za-z0-9_-]+$/,
  description: 'For an installed public flow: its installation id from search results.',
});

/** Page size of a paginated tool; the bounds are in the schema, so the wording stays short. */
export function pageLimitArg(max: number, defaultLimit: number) {
  return z.number().int().min(1).max(max).default(defaultLimit).describe('Page size.');
}

export const queryArg = textArg({ trim: true, min: 1, max: LIMITS.searchQueryMaxChars }).describe(
  'Search words; omit to browse.',
);

export const flowLiteralArg = textArg({ min: 1, max: LIMITS.flowLiteralMaxChars }).describe(
  'Complete flow definition as EDN text: one map with :slug, :invocations, :interfaces, :flow, …',
);

export const versionArg = z.number().int().min(1).max(LIMITS.flowVersionMax);

export const sourceArg = z.enum(FLOW_SOURCES);

/** Wording of `source` and `version` wherever a stored definition is chosen. */
export const SOURCE_WORDING = 'Default draft; latest is the newest release, active the one runs use.';
export const VERSION_WORDING = 'A released version instead of source.';

export const targetArg = z
  .enum(['live', 'draft'])
  .describe('live (released; for an installation, the version it runs) or draft. Default: live if released.');

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

/** The object schema at `path` inside `schema` (through optional, default and nullable wrappers), if any. */
function objectAt(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodObject | null {
  let current: z.ZodType | undefined = schema;
  for (let i = 0; ; i++) {
    while (
      current instanceof z.ZodOptional ||
      current instanceof z.ZodDefault ||
      current instanceof z.ZodNullable
    )
      current = current.unwrap() as z.ZodType;
    if (!(current instanceof z.ZodObject)) return null;
    if (i === path.length) return current;
    current = current.shape[String(path[i])] as z.ZodType | undefined;
  }
}

/**
 * The issues of a failed argument parse; an unknown key names the valid ones, so the caller can repair the call
 * without listing tools again (`Unrecognized key "source"; valid: flow_slug, target, version`).
 */
export function argumentIssues(schema: z.ZodType, error: z.ZodError): { path: string; message: string }[] {
  const issues = zodIssues(error);
  return error.issues.slice(0, issues.length).map((issue, i) => {
    const base = issues[i] as { path: string; message: string };
    if (issue.code !== 'unrecognized_keys') return base;
    const object = objectAt(schema, issue.path);
    if (!object) return base;
    const keys = issue.keys.map((k) => JSON.stringify(k)).join(', ');
    const noun = issue.keys.length === 1 ? 'key' : 'keys';
    return {
      path: base.path,
      message: `Unrecognized ${noun} ${keys}; valid: ${Object.keys(object.shape).join(', ')}`,
    };
  });
}
