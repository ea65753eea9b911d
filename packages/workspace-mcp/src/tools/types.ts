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
