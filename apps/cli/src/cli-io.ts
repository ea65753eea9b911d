/** Everything the CLI touches outside itself, injectable so tests run it in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Whole standard input as text (used only by `--secret-stdin`). */
  readStdin(): Promise<string>;
  /** Standard input as a stream (the `mcp stdio` bridge reads it line by line). */
  stdin?: AsyncIterable<Uint8Array | string>;
  fetch?: typeof fetch;
}

export const DEFAULT_API_URL = 'http://127.0.0.1:8787';

/** A failure the CLI reports as `error: <code>: <message>` and exit status 1. */
export class CliError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'CliError';
    this.code = code;
  }
}

/** Ends a command with this exit status; the command has already reported what went wrong. */
export class CliExit extends Error {
  readonly status: number;
  constructor(status: number) {
    super(`exit ${status}`);
    this.name = 'CliExit';
    this.status = status;
  }
}
