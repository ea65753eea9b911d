import { isAppError } from '@flowgate/core';
import { CommanderError } from 'commander';
import { AdminApiError } from './admin-client.js';
import { CliError } from './cli-io.js';

/** The one shape of every command failure: `error: <code>: <message>`, with the secrets this run holds scrubbed. */
export function renderError(error: unknown, secrets: ReadonlySet<string> = new Set()): string {
  let code = 'internal_error';
  let message = 'unexpected failure';
  if (error instanceof CommanderError) {
    // Usage errors (unknown option, missing or malformed flag): commander's text without its own `error: `.
    code = 'invalid_request';
    message = error.message.replace(/^error: /, '');
  } else if (error instanceof AdminApiError) {
    code = error.code;
    message = error.message + error.issues.map((i) => `\n  - ${i.path}: ${i.message}`).join('');
  } else if (error instanceof CliError || isAppError(error)) {
    code = error.code;
    message = error.message;
  } else if (error instanceof Error) {
    message = error.message;
  }
  // The server never echoes tokens, but a proxy or a local failure might: scrub anything we hold.
  for (const secret of secrets) if (secret.length > 0) message = message.split(secret).join('[redacted]');
  return `error: ${code}: ${message}`;
}
