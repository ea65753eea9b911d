/**
 * Why a run (or one of its steps) failed, as a stable code plus a message written for the flow author. A run error
 * is data stored on the run and shown to agents, not an HTTP failure, so it has its own codes instead of
 * `AppError`'s. Messages never carry secrets: they describe the form or the step, not the data flowing through it.
 */
export const RUN_ERROR_CODES = [
  // evaluation limits
  'eval_fuel_exhausted',
  'recursion_too_deep',
  'collection_too_large',
  'string_too_large',
  'value_too_deep',
  // run limits
  'run_timed_out',
  'run_cancelled',
  'step_limit_exceeded',
  'http_call_limit_exceeded',
  'llm_token_limit_exceeded',
  'result_too_large',
  // the workspace's quota (llmTokensPerMonth) is used up
  'quota_exceeded',
  'input_invalid',
  // evaluation errors
  'type_error',
  'arity_error',
  'arithmetic_error',
  'index_out_of_bounds',
  'invalid_argument',
  'unknown_symbol',
  'invalid_form',
  'not_callable',
  'json_parse_error',
  // steps
  'step_config_invalid',
  'duplicate_step_execution',
  'replay_mismatch',
  'step_failed',
  'connection_unavailable',
  'connection_disabled',
  'network_address_refused',
  'http_request_failed',
  'http_timeout',
  'http_response_too_large',
  'http_response_invalid',
  'llm_request_failed',
  'llm_response_invalid',
  // remote MCP servers (:mcp steps and the tools of :llm steps)
  'mcp_request_failed',
  'mcp_timeout',
  'mcp_tool_error',
  'mcp_tool_unavailable',
  'kv_failed',
  'internal_error',
] as const;

export type RunErrorCode = (typeof RUN_ERROR_CODES)[number];

export interface RunErrorJson {
  code: RunErrorCode;
  message: string;
  /** Where the failing form starts in the definition (1-based), when known. */
  line?: number;
  column?: number;
  /** The step that failed, with its `for` index suffix. */
  stepId?: string;
}

export class RunError extends Error {
  readonly code: RunErrorCode;
  line: number | undefined;
  column: number | undefined;
  stepId: string | undefined;

  constructor(
    code: RunErrorCode,
    message: string,
    where?: { line?: number; column?: number; stepId?: string },
  ) {
    super(message);
    this.name = 'RunError';
    this.code = code;
    this.line = where?.line;
    this.column = where?.column;
    this.stepId = where?.stepId;
  }

  /** Attaches the innermost known position; outer forms never overwrite it. */
  at(loc: { line: number; column: number } | undefined): this {
    if (loc && this.line === undefined) {
      this.line = loc.line;
      this.column = loc.column;
    }
    return this;
  }

  toJSON(): RunErrorJson {
    const out: RunErrorJson = { code: this.code, message: this.message };
    if (this.line !== undefined) out.line = this.line;
    if (this.column !== undefined) out.column = this.column;
    if (this.stepId !== undefined) out.stepId = this.stepId;
    return out;
  }
}

export function isRunError(value: unknown): value is RunError {
  return value instanceof RunError;
}

/**
 * Any error escaping an evaluation as a run error. A JS stack overflow (possible only if the depth limit was not
 * enough on some path) is reported as recursion; anything else unexpected is an internal error without details.
 */
export function toRunError(error: unknown): RunError {
  if (error instanceof RunError) return error;
  if (error instanceof RangeError) return new RunError('recursion_too_deep', 'evaluation nested too deeply');
  return new RunError('internal_error', 'the interpreter failed unexpectedly');
}
