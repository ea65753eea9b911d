/**
 * The one place a tool's answer becomes a `tools/call` result, so every result is bounded by construction:
 * - the first text block is the compact JSON of `structuredContent`, always: some clients hand the model
 *   `structuredContent`, others only `content`, and each must see the whole answer (the model reads one of the two, so
 *   its token cost does not double);
 * - each side (the content blocks, and `structuredContent`) stays under a hard cap (`maxResultBytes`, default
 *   `DEFAULT_MAX_RESULT_BYTES`): above it the tool's own `bound` rule shrinks the output (a preview marked
 *   `truncated`, naming the resource with the rest) and both sides carry that same preview; a tool without one, or
 *   one that still does not fit, answers with a `result_too_large` error that carries a bounded preview and the link.
 */
import { utf8Length } from '@flowgate/core';
import type { ContentBlock } from './protocol.js';
import type { ToolErrorContent } from './schemas.js';

/**
 * 80 KB ≈ 20k tokens of JSON: under Claude Code's 25k-token refusal threshold with room for the client's framing.
 * Configurable per deployment (`FLOWGATE_MCP_MAX_RESULT_BYTES`).
 */
export const DEFAULT_MAX_RESULT_BYTES = 80 * 1024;

/** Smallest cap a deployment may set: below it ordinary answers (a search page) would not fit. */
export const MIN_MAX_RESULT_BYTES = 16 * 1024;

/** Characters of the JSON a `result_too_large` error previews. */
const ERROR_PREVIEW_CHARS = 2_000;

/** Bytes kept free for the JSON-RPC envelope when a tool shrinks its output. */
const ENVELOPE_RESERVE_BYTES = 1_024;

export interface CallToolResult {
  isError?: true;
  content: unknown[];
  structuredContent: Record<string, unknown>;
}

export interface SuccessInput {
  tool: string;
  output: Record<string, unknown>;
  /** Where the whole answer can be read (named by a `result_too_large` error). */
  resourceUri: string | null;
  /** Extra blocks after the text block, already adapted to the protocol version. */
  extra: readonly ContentBlock[];
  maxBytes: number;
  /** The tool's own preview rule: an output whose JSON fits `budgetBytes`, or null when it cannot shrink. */
  bound?: ((budgetBytes: number) => Record<string, unknown> | null) | undefined;
  /** Whether a shrunk output still matches the tool's output schema. */
  valid: (output: Record<string, unknown>) => boolean;
}

export function byteLength(text: string): number {
  return utf8Length(text);
}

/** Bytes the result takes on the wire (inside the JSON-RPC envelope). */
export function resultBytes(result: CallToolResult): number {
  return byteLength(JSON.stringify(result));
}

/**
 * The larger of the result's two sides in bytes: its content blocks (the text escapes the JSON once more, so this is
 * usually the larger) and its `structuredContent`. Each side is what one kind of client hands the model.
 */
export function sideBytes(result: CallToolResult): number {
  return Math.max(
    byteLength(JSON.stringify(result.content)),
    byteLength(JSON.stringify(result.structuredContent)),
  );
}

function assemble(input: SuccessInput, output: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(output) }, ...input.extra],
    structuredContent: output,
  };
}

/** A success result under the cap: as is, shrunk by the tool's rule, or a `result_too_large` error. */
export function successResult(input: SuccessInput): CallToolResult {
  const whole = assemble(input, input.output);
  const wholeBytes = sideBytes(whole);
  if (wholeBytes <= input.maxBytes) return whole;
  if (input.bound) {
    const extraBytes = byteLength(JSON.stringify(input.extra));
    const budget = input.maxBytes - extraBytes - ENVELOPE_RESERVE_BYTES;
    // The budget is an estimate (the text escapes the JSON once more); a few narrower tries make it exact.
    for (let attempt = 0, next = budget; attempt < 6 && next > 0; attempt++) {
      const shrunk = input.bound(next);
      if (!shrunk || !input.valid(shrunk)) break;
      const result = assemble(input, shrunk);
      const bytes = sideBytes(result);
      if (bytes <= input.maxBytes) return result;
      next = Math.floor((next * input.maxBytes * 0.97) / bytes);
    }
  }
  return tooLargeResult(input, wholeBytes);
}

function tooLargeResult(input: SuccessInput, bytes: number): CallToolResult {
  const where = input.resourceUri
    ? ` Read ${input.resourceUri} for the whole answer, or ask for less (a smaller limit or page).`
    : ' Ask for less: a smaller limit or page, or fewer optional parts.';
  const content: ToolErrorContent = {
    error: {
      code: 'result_too_large',
      message: `The ${input.tool} answer is ${bytes} bytes, above this server's cap of ${input.maxBytes} bytes per result; it was not sent.${where}`,
    },
    details: {
      bytes,
      maxBytes: input.maxBytes,
      resourceUri: input.resourceUri,
      preview: JSON.stringify(input.output).slice(0, ERROR_PREVIEW_CHARS),
      truncated: true,
    },
  };
  const extra = input.extra.filter((b) => b.type !== 'text' || byteLength(b.text) <= ERROR_PREVIEW_CHARS);
  return {
    isError: true,
    content: [{ type: 'text', text: content.error.message }, ...extra],
    structuredContent: content,
  };
}

/** An error result: the message as text, the error and its details as `structuredContent`. */
export function errorResult(content: ToolErrorContent, maxBytes: number): CallToolResult {
  const result: CallToolResult = {
    isError: true,
    content: [{ type: 'text', text: content.error.message }],
    structuredContent: content,
  };
  if (resultBytes(result) <= maxBytes) return result;
  // Details are bounded by each tool (diagnostics, issues); this only guards against a tool that forgot.
  const preview = JSON.stringify(content.details ?? null).slice(0, ERROR_PREVIEW_CHARS);
  const message = content.error.message.slice(0, ERROR_PREVIEW_CHARS);
  const bounded: ToolErrorContent = {
    error: { code: content.error.code, message },
    details: { preview, truncated: true },
  };
  return { isError: true, content: [{ type: 'text', text: message }], structuredContent: bounded };
}

/**
 * The longest prefix of `text` whose JSON string takes at most `maxBytes`, never splitting a surrogate pair. Used by
 * tools' `bound` rules to preview a long string field.
 */
export function prefixWithin(text: string, maxBytes: number): string {
  if (byteLength(JSON.stringify(text)) <= maxBytes) return text;
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (byteLength(JSON.stringify(text.slice(0, mid))) <= maxBytes) lo = mid;
    else hi = mid - 1;
  }
  const code = text.charCodeAt(lo - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? lo - 1 : lo;
  return text.slice(0, end);
}

/**
 * The longest head of `items` that keeps `frame(head)` within `maxBytes` (byte size of its JSON), found by bisection:
 * the tools' rule for a list too long for one result (the rest stays readable through its resource or cursor).
 */
export function headWithin<T, F>(items: readonly T[], maxBytes: number, frame: (head: T[]) => F): F | null {
  const fits = (n: number) => byteLength(JSON.stringify(frame(items.slice(0, n)))) <= maxBytes;
  if (!fits(0)) return null;
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return frame(items.slice(0, lo));
}
