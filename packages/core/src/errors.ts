/**
 * Errors are values with a stable machine code, a human message and the HTTP status they map to.
 * Messages are written for the caller: they never carry stack traces, tokens or secrets.
 */
export type ErrorCode =
  | 'unauthorized'
  | 'invalid_token'
  | 'token_in_query'
  | 'forbidden'
  | 'origin_not_allowed'
  | 'ip_not_allowed'
  | 'insufficient_role'
  | 'not_found'
  | 'conflict'
  | 'invalid_request'
  | 'invalid_cursor'
  | 'invalid_usage_query'
  | 'validation_failed'
  | 'unsupported_media_type'
  | 'not_acceptable'
  | 'payload_too_large'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'quota_exceeded'
  | 'unavailable'
  | 'internal_error';

const STATUS: Record<ErrorCode, number> = {
  unauthorized: 401,
  invalid_token: 401,
  token_in_query: 401,
  forbidden: 403,
  origin_not_allowed: 403,
  ip_not_allowed: 403,
  insufficient_role: 403,
  not_found: 404,
  conflict: 409,
  invalid_request: 400,
  invalid_cursor: 400,
  invalid_usage_query: 400,
  validation_failed: 400,
  unsupported_media_type: 415,
  not_acceptable: 406,
  payload_too_large: 413,
  method_not_allowed: 405,
  rate_limited: 429,
  quota_exceeded: 429,
  unavailable: 503,
  internal_error: 500,
};

export interface ErrorIssue {
  path: string;
  message: string;
}

export interface AppErrorOptions {
  /** Response headers that belong to the error, e.g. the `WWW-Authenticate` challenge of a 401. */
  headers?: Readonly<Record<string, string>>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly issues: ErrorIssue[] | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, issues?: ErrorIssue[], options: AppErrorOptions = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = STATUS[code];
    this.issues = issues;
    this.headers = options.headers ?? {};
  }

  toBody(): { code: ErrorCode; message: string; issues?: ErrorIssue[] } {
    return this.issues
      ? { code: this.code, message: this.message, issues: this.issues }
      : { code: this.code, message: this.message };
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

export function statusForCode(code: ErrorCode): number {
  return STATUS[code];
}
