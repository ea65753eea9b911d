/**
 * How a tool is declared: one `defineTool(…).handle(…)` expression holds its name, toolsets, capability gate, input and
 * output schemas, annotations and handler together (tools/<name>.ts), and the catalog is the list of them. Whether a
 * tool changes state is read from its `readOnlyHint`, never declared twice. JSON Schemas are computed once, when the
 * module loads: converting schemas per request is what makes generic SDK servers slow (docs/performance.md).
 */
import type { Capability } from '@flowgate/auth';
import { sha256, toBase64Url } from '@flowgate/core';
import type { RunRecord } from '@flowgate/workspace';
import { z } from 'zod';
import type { ToolContext } from './context.js';
import type { Icon } from './icons.js';
import type { ContentBlock } from './protocol.js';
import { OPAQUE_ARG, publishInputSchema, publishOutputSchema } from './published-schema.js';
import type { Toolset } from './schemas.js';
import { isStorableText } from './storable-text.js';

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** A JSON Schema object as sent to clients (root `type: "object"`, no `$schema`). */
export type JsonSchemaObject = { type: 'object' } & Record<string, unknown>;

/** The entry `tools/list` and the server card publish for a tool. Built once per tool. */
export interface ToolDescriptor {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchemaObject;
  outputSchema: JsonSchemaObject;
  /** Only the hints that differ from the protocol's defaults (publishAnnotations). */
  annotations: Partial<ToolAnnotations>;
  /** Only on run-starting tools: they may be called as MCP tasks (tasks.ts); absent means "forbidden". */
  execution?: { taskSupport: 'optional' };
  /** Added where listed (2025-11-25 and later): the gateway's URL of the tool's toolset icon (catalog.ts). */
  icons?: Icon[];
}

/**
 * How a run-starting tool runs as an MCP task (tasks.ts): `start` queues the run without waiting, `settle` answers
 * for a run exactly as the tool itself would have once it saw the run in that state (same output, links and URIs),
 * so a task's final result is the tool's own result. A task names its run and nothing else (one id, whoever asks), so
 * its result reports the run as created: it does not know which call named it first.
 */
export interface TaskSupport<A, O> {
  start(args: A, ctx: ToolContext): Promise<{ run: RunRecord; created: boolean }>;
  settle(run: RunRecord, ctx: ToolContext): Promise<ToolOutcome<O>>;
}

/**
 * The annotations as published: a client reads an absent hint as its default (readOnlyHint false, destructiveHint
 * true, idempotentHint false, openWorldHint true), and destructive/idempotent mean nothing for a read-only tool, so
 * only hints that say something are sent — every tools/list costs an agent context. The title is the tool's own
 * top-level `title`.
 */
export function publishAnnotations(a: ToolAnnotations): Partial<ToolAnnotations> {
  const out: Partial<ToolAnnotations> = {};
  if (a.readOnlyHint) out.readOnlyHint = true;
  else {
    if (!a.destructiveHint) out.destructiveHint = false;
    if (a.idempotentHint) out.idempotentHint = true;
  }
  if (!a.openWorldHint) out.openWorldHint = false;
  return out;
}

export interface ToolOutcome<O> {
  /** The success `structuredContent`; it is checked against the tool's output schema before it is sent. */
  output: O;
  /** Recorded in the audit entry. */
  runId?: string | null;
  resourceUris?: string[];
  /** Extra blocks after the JSON text block (e.g. resource links; downgraded for 2025-03-26 clients). */
  content?: ContentBlock[];
  /** Where the whole answer can be read: named by a `result_too_large` error. */
  resultUri?: string | null;
  /**
   * The tool's preview rule for an answer above the result cap (result.ts): `output` shrunk so its JSON fits
   * `budgetBytes` (e.g. a string cut and marked `truncated`), or null when it cannot shrink.
   */
  bound?: (budgetBytes: number) => O | null;
}

export interface ToolSpec<N extends string, I extends z.ZodType, O extends z.ZodType> {
  name: N;
  title: string;
  /** Fixed, server-authored text written for agents. */
  description: string;
  toolsets: readonly Toolset[];
  /** Every listed capability is required (after `workspace.full` expansion). */
  capabilities: readonly Capability[];
  /**
   * A tool that changes state but stays in read-only sessions (only send_feedback: people supporting a read-only
   * session must still be able to report friction).
   */
  readOnlyExempt?: boolean;
  /** Strict object of snake_case arguments with bounded sizes. */
  input: I;
  /** Strict object of the success `structuredContent`. */
  output: O;
  annotations: Omit<ToolAnnotations, 'title'>;
  /** Run-starting tools only: task-augmented calls start the run and answer with a task. */
  task?: TaskSupport<z.output<I>, z.output<O>>;
}

export type ToolHandler<I extends z.ZodType, O extends z.ZodType> = (
  args: z.output<I>,
  ctx: ToolContext,
) => Promise<ToolOutcome<z.output<O>>>;

export interface ToolDefinition<
  N extends string = string,
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
> extends Readonly<ToolSpec<N, I, O>> {
  /** Changes state (`readOnlyHint: false`): hidden by X-MCP-Readonly and workspace read-only mode. */
  readonly mutating: boolean;
  readonly readOnlyExempt: boolean;
  readonly annotations: ToolAnnotations;
  /** JSON Schema of the arguments (input view: defaults are not required). */
  readonly inputSchema: JsonSchemaObject;
  /** Published JSON Schema of `structuredContent`: the success shape, which tool-error content also satisfies. */
  readonly outputSchema: JsonSchemaObject;
  readonly descriptor: ToolDescriptor;
  readonly handler: ToolHandler<I, O>;
}

// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list of tools; each is checked where it is defined.
export type AnyToolDefinition = ToolDefinition<string, z.ZodType, any>;

/** The one `execution` a tool descriptor carries (kept minimal: every tools/list costs an agent context). */
export const TASK_EXECUTION = Object.freeze({ taskSupport: 'optional' as const });

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return rest;
}

/**
 * `defineTool(spec).handle(handler)`: the handler is given once the schemas are fixed, so its result is checked
 * against the exact output type (literal values included).
 */
export function defineTool<const N extends string, I extends z.ZodType, O extends z.ZodType>(
  spec: ToolSpec<N, I, O>,
): { handle(handler: ToolHandler<I, O>): ToolDefinition<N, I, O> } {
  return { handle: (handler) => buildTool(spec, handler) };
}

function buildTool<N extends string, I extends z.ZodType, O extends z.ZodType>(
  spec: ToolSpec<N, I, O>,
  handler: ToolHandler<I, O>,
): ToolDefinition<N, I, O> {
  const inputSchema = publishInputSchema(jsonSchemaOf(spec.input, 'input'));
  if (inputSchema.type !== 'object') throw new Error(`${spec.name}: input schema must be an object`);
  const success = jsonSchemaOf(spec.output, 'output');
  if (success.type !== 'object') throw new Error(`${spec.name}: output schema must be an object`);
  // The success shape, published so that tool-error structuredContent validates against it too (published-schema.ts).
  const outputSchema = publishOutputSchema(success) as JsonSchemaObject;
  const annotations: ToolAnnotations = { title: spec.title, ...spec.annotations };
  const descriptor: ToolDescriptor = Object.freeze({
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: inputSchema as JsonSchemaObject,
    outputSchema,
    annotations: publishAnnotations(annotations),
    ...(spec.task ? { execution: TASK_EXECUTION } : {}),
  });
  return Object.freeze({
    ...spec,
    mutating: !spec.annotations.readOnlyHint,
    readOnlyExempt: spec.readOnlyExempt ?? false,
    toolsets: Object.freeze([...spec.toolsets]),
    capabilities: Object.freeze([...spec.capabilities]),
    annotations,
    inputSchema: inputSchema as JsonSchemaObject,
    outputSchema,
    descriptor,
    handler,
  });
}

// ---- argument text ----------------------------------------------------------------------------------------

// NUL is refused by Postgres text and jsonb, lone surrogates by jsonb: such an argument could never be stored.
export const UNSTORABLE_TEXT_MESSAGE = 'must not contain NUL (\\u0000) or unpaired surrogate characters';

/**
 * Every string argument of every tool starts here, so none can carry text the store refuses: without it a NUL
 * in a summary or a flow literal fails deep in the database as an internal error instead of `invalid_arguments`.
 * `trim` trims before the length checks.
 */
export function textArg(options: { min?: number; max?: number; trim?: boolean } = {}): z.ZodString {
  let s = z.string();
  if (options.trim) s = s.trim();
  if (options.min !== undefined) s = s.min(options.min);
  if (options.max !== undefined) s = s.max(options.max);
  return s.refine(isStorableText, { message: UNSTORABLE_TEXT_MESSAGE });
}

/**
 * A string argument an agent copies from an answer, never composes (ids, cursors, URIs): validated as `textArg` with
 * these bounds, published without them (published-schema.ts, OPAQUE_ARG). The description goes in here: a later
 * `.describe()` would replace the marker.
 */
export function opaqueArg(
  options: { min?: number; max?: number; pattern?: RegExp; description?: string } = {},
): z.ZodString {
  let s = textArg(options);
  if (options.pattern) s = s.regex(options.pattern);
  return s.meta({
    ...(options.description === undefined ? {} : { description: options.description }),
    [OPAQUE_ARG]: true,
  });
}

// ---- handler verdicts -------------------------------------------------------------------------------------

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

// ---- cursors ----------------------------------------------------------------------------------------------

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

/**
 * A short digest of what a cursor continues: a query of 200 multi-byte characters must not outgrow the cursor limit.
 */
function bindingDigest(binding: string): string {
  return toBase64Url(sha256(binding)).slice(0, 22);
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
