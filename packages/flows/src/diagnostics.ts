/**
 * Positioned diagnostics shared by the reader, the model builder and the flow-body checker.
 *
 * Path format (one format everywhere): the `get-in` keys from the definition's root to the offending value, written as
 * EDN and separated by single spaces — keywords as `:name`, vector/list/set positions as integers, string keys as
 * `"<string key>"` and collection keys as `<vector key>` (their text is flow-authored and never echoed), other keys as
 * their compact EDN (cut to 40 characters). The root is the empty string. Example: `:interfaces :mcp 0 :tool-name`;
 * inside the body: `:flow 2 3 :connection`.
 *
 * `line` and `column` are 1-based; columns count Unicode code points. They are `null` only when a problem has no place
 * in the text (an oversized or empty definition).
 */
export type Severity = 'error' | 'warning';

/** Reader codes start with `edn_`; every reader code is an error. */
export const READER_CODES = [
  'edn_syntax_invalid',
  'edn_empty_input',
  'edn_unbalanced_delimiter',
  'edn_mismatched_delimiter',
  'edn_odd_map_entries',
  'edn_unterminated_string',
  'edn_invalid_escape',
  'edn_invalid_character',
  'edn_invalid_number',
  'edn_number_out_of_range',
  'edn_invalid_token',
  'edn_unknown_tag',
  'edn_invalid_tag_value',
  'edn_unsupported_syntax',
  'edn_quote_not_allowed',
  'edn_too_deep',
  'edn_duplicate_key',
  'edn_duplicate_set_element',
  'edn_multiple_forms',
] as const;

export const VALIDATION_CODES = [
  'definition_too_large',
  'definition_not_a_map',
  'missing_required_field',
  'invalid_field_value',
  'invalid_slug',
  'invalid_invocation_input_type',
  'duplicate_invocation_input_name',
  'unknown_interface_invocation',
  'duplicate_interface_id',
  'invalid_tool_name',
  'duplicate_tool_name',
  'duplicate_requires_slot',
  'duplicate_function_id',
  'unknown_step_type',
  'duplicate_step_id',
  'unknown_function_ref',
  'unbound_connection_slot',
  'unknown_symbol',
  'orchestration_transform',
  'invalid_form',
  'invalid_binding',
  'invalid_step_config',
  'unknown_key',
  'invalid_select_option',
] as const;

export type ReaderCode = (typeof READER_CODES)[number];
export type ValidationCode = (typeof VALIDATION_CODES)[number];
export type DiagnosticCode = ReaderCode | ValidationCode;

export interface Diagnostic {
  severity: Severity;
  code: DiagnosticCode;
  message: string;
  path: string;
  line: number | null;
  column: number | null;
  hint: string;
}

/** Where a problem is: a 1-based line and column, or nothing. */
export interface Place {
  line: number;
  column: number;
}

/** Shortens text to at most `max` characters (an ellipsis marks the cut). */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Bounds on diagnostic text: names from the definition are interpolated and a definition may be hostile. */
const MESSAGE_MAX = 500;
const PATH_MAX = 300;

export function diagnostic(
  severity: Severity,
  code: DiagnosticCode,
  message: string,
  path: string,
  place: Place | undefined | null,
  hint: string,
): Diagnostic {
  return {
    severity,
    code,
    message: clip(message, MESSAGE_MAX),
    path: clip(path, PATH_MAX),
    line: place?.line ?? null,
    column: place?.column ?? null,
    hint: clip(hint, MESSAGE_MAX),
  };
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/** Formats path segments (already rendered) into the shared path string. */
export function joinPath(segments: readonly string[]): string {
  return segments.join(' ');
}
