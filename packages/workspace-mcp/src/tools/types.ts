import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { AnyToolDefinition } from '../catalog.js';
import type { ToolContext } from '../context.js';
import type { ContentBlock } from '../protocol.js';

export interface ToolOutcome<O> {
  /** The success `structuredContent`; it is checked against the tool's output schema before it is sent. */
  output: O;
  /** Recorded in the audit entry. */
  runId?: string | null;
  resourceUris?: string[];
  /** Extra blocks after the JSON text block (e.g. resource links; downgraded for 2025-03-26 clients). */
  content?: ContentBlock[];
}

export type ToolHandler<T extends AnyToolDefinition> = (
  args: z.output<T['input']>,
  ctx: ToolContext,
) => Promise<ToolOutcome<z.output<T['output']>>>;

/**
 * A handler's verdict that an argument is unusable even though it passed the schema (e.g. a forged cursor);
 * answered like a schema failure, as an `invalid_arguments` tool result.
 */
export class InvalidArguments extends Error {
  readonly issues: { path: string; message: string }[];
  constructor(issues: { path: string; message: string }[]) {
    super(issues.map((i) => `${i.path}: ${i.message}`).join('; '));
    this.name = 'InvalidArguments';
    this.issues = issues;
  }
}

/**
 * An expected failure that carries structured details for the agent (e.g. the diagnostics of a definition that
 * was not saved); answered as an `isError` result with `structuredContent.error` and `details`.
 */
export class ToolFailure extends Error {
  readonly code: string;
  readonly details: Record<string, unknown>;
  constructor(code: string, message: string, details: Record<string, unknown>) {
    super(message);
    this.name = 'ToolFailure';
    this.code = code;
    this.details = details;
  }
}

export function openToolCursor(ctx: ToolContext, tool: string, cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  const pos = ctx.cursors.open(`tool:${tool}`, cursor);
  if (typeof pos !== 'string') {
    throw new InvalidArguments([
      { path: 'cursor', message: 'Invalid or foreign cursor; omit it to start from the first page' },
    ]);
  }
  return pos;
}

export function sealToolCursor(ctx: ToolContext, tool: string, after: string | null): string | null {
  return after === null ? null : ctx.cursors.seal(`tool:${tool}`, after);
}

/** A short digest of what a cursor continues: a query of 200 multi-byte characters must not outgrow the cursor limit. */
function bindingDigest(binding: string): string {
  return createHash('sha256').update(binding).digest('base64url').slice(0, 22);
}

/**
 * A cursor bound to the request it continues (e.g. the search query): the position is sealed together with a
 * digest of `binding`, and a cursor issued for another binding is refused like a forged one.
 */
export function openBoundCursor(
  ctx: ToolContext,
  tool: string,
  cursor: string | undefined,
  binding: string,
): string | null {
  const raw = openToolCursor(ctx, tool, cursor);
  if (raw === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = null;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    parsed[0] !== bindingDigest(binding) ||
    typeof parsed[1] !== 'string'
  ) {
    throw new InvalidArguments([
      {
        path: 'cursor',
        message: 'Cursor belongs to a different query; repeat the same arguments or omit the cursor',
      },
    ]);
  }
  return parsed[1];
}

export function sealBoundCursor(
  ctx: ToolContext,
  tool: string,
  after: string | null,
  binding: string,
): string | null {
  return after === null ? null : sealToolCursor(ctx, tool, JSON.stringify([bindingDigest(binding), after]));
}
