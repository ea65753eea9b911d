import { CliError, type CliIo } from '../cli-io.js';
import { renderError } from '../render-error.js';
import { StdioBridge } from './bridge.js';
import { insecureApiUrlProblem, mcpEndpoint, readToken, scrubDiagnostic } from './credentials.js';
import {
  checkNarrowing,
  describeFlags,
  narrowingHeaders,
  type RawNarrowingOptions,
} from './narrowing-flags.js';

export interface StdioOptions {
  workspaceId: string;
  tokenEnvVar: string;
  apiUrl: string;
  timeoutMs: number;
  narrowing: RawNarrowingOptions;
  /** Send the key over plain http:// to a host that is not this machine. */
  allowInsecureHttp?: boolean;
}

/** Exit status for a refused configuration: nothing was sent anywhere. */
export const CONFIG_ERROR_STATUS = 2;

/**
 * `flowgate mcp stdio`. Configuration problems (unknown narrowing names, a missing or malformed key, plain
 * http:// to another machine) are refused
 * before any network call with status 2; after that the bridge runs until stdin ends and returns 0.
 */
export async function runStdio(options: StdioOptions, io: CliIo): Promise<number> {
  const refuse = (message: string): number => {
    io.stderr(`${renderError(new CliError('invalid_request', message))}\n`);
    return CONFIG_ERROR_STATUS;
  };
  const narrowing = checkNarrowing(options.narrowing);
  if (!narrowing.ok) return refuse(`unknown narrowing names:\n${narrowing.message}`);
  const token = readToken(io.env, options.tokenEnvVar);
  if (!token.ok) return refuse(token.message);
  if (!io.stdin) return refuse('no standard input stream to read from');
  const insecure = options.allowInsecureHttp ? null : insecureApiUrlProblem(options.apiUrl);
  if (insecure) return refuse(insecure);

  const endpoint = mcpEndpoint(options.apiUrl, options.workspaceId);
  io.stderr(
    scrubDiagnostic(
      `flowgate mcp stdio: bridging to ${endpoint} (narrowing: ${describeFlags(narrowing.flags)})\n`,
      token.token,
    ),
  );
  const bridge = new StdioBridge(
    {
      endpoint,
      token: token.token,
      tokenEnvVar: options.tokenEnvVar,
      workspaceId: options.workspaceId,
      headers: narrowingHeaders(narrowing.flags),
      timeoutMs: options.timeoutMs,
      fetch: io.fetch ?? fetch,
    },
    {
      input: io.stdin,
      writeLine: (line) => io.stdout(`${line}\n`),
      log: (text) => io.stderr(`${scrubDiagnostic(text, token.token)}\n`),
    },
  );
  await bridge.run();
  return 0;
}
