/**
 * `flowgate mcp stdio|config|doctor`. Registration stays cheap: the catalog, serialisers and HTTP code load
 * only when one of these commands runs, so other commands (and a client spawning the bridge) start fast.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { CliError, CliExit, type CliIo, DEFAULT_API_URL } from '../cli-io.js';
import { renderJson } from '../output.js';
import { parseWorkspaceId } from '../parsers.js';
import { PROVIDERS, type Provider, TRANSPORTS, type Transport } from './providers.js';

/** What `mcp config` writes into client configs, so `stdio` and `doctor` read the same variable by default. */
const DEFAULT_TOKEN_ENV_VAR = 'FLOWGATE_TOKEN';
const DEFAULT_STDIO_TIMEOUT_MS = 60_000;
const DEFAULT_DOCTOR_TIMEOUT_MS = 10_000;
const ALLOW_INSECURE_HTTP_HELP =
  'send the key over plain http:// to a host that is not this machine (only on a trusted network)';

interface NarrowingOptions {
  readOnly?: boolean;
  toolsets?: string[];
  tools?: string[];
  excludeTools?: string[];
}

/** `--toolsets a,b --toolsets c` → ['a', 'b', 'c']; trimmed, empties and repeats dropped. */
export function collectList(value: string, previous: string[] | undefined): string[] {
  const out = [...(previous ?? [])];
  for (const part of value.split(',')) {
    const t = part.trim();
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

function addNarrowingOptions(cmd: Command): Command {
  return cmd
    .option('--read-only', 'hide tools that run flows, write drafts or release (X-MCP-Readonly)')
    .option('--toolsets <list>', 'comma list of toolsets to keep, or all (X-MCP-Toolsets)', collectList)
    .option(
      '--tools <list>',
      'comma list of tools; alone only these, with --toolsets added (X-MCP-Tools)',
      collectList,
    )
    .option(
      '--exclude-tools <list>',
      'comma list of tools to hide; wins over everything (X-MCP-Exclude-Tools)',
      collectList,
    );
}

/** What `stdio` and `doctor` both take: which endpoint, which key, the narrowing, a timeout. */
type EndpointOptions = NarrowingOptions & {
  workspace: string;
  tokenEnvVar: string;
  timeout: number;
  allowInsecureHttp?: boolean;
};

function addEndpointOptions(cmd: Command, defaultTimeoutMs: number): Command {
  return addNarrowingOptions(
    cmd
      .requiredOption('--workspace <id>', 'workspace id, e.g. ws-acme', parseWorkspaceId)
      .option(
        '--token-env-var <VAR>',
        'environment variable that holds the API key or JWT',
        DEFAULT_TOKEN_ENV_VAR,
      ),
  )
    .option('--timeout <ms>', 'per-request timeout in milliseconds', parseTimeout, defaultTimeoutMs)
    .option('--allow-insecure-http', ALLOW_INSECURE_HTTP_HELP);
}

function parseTimeout(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 100 || n > 3_600_000) {
    throw new InvalidArgumentError('expected milliseconds between 100 and 3600000');
  }
  return n;
}

/** The global --api-url, else FLOWGATE_API_URL, else the local default — as the admin commands resolve it. */
function resolveApiUrl(cmd: Command, io: CliIo): string {
  const globals = cmd.optsWithGlobals<{ apiUrl?: string }>();
  const value = globals.apiUrl ?? (io.env.FLOWGATE_API_URL || DEFAULT_API_URL);
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // reported below
  }
  throw new CliError('invalid_request', 'FLOWGATE_API_URL: expected an http(s) URL');
}

export function registerMcpCommands(program: Command, io: CliIo): void {
  const mcp = program
    .command('mcp')
    .description('connect MCP clients: a stdio bridge, client configs and a setup check')
    // --api-url and --json are global options; show them in these commands' help too.
    .configureHelp({ showGlobalOptions: true });

  addEndpointOptions(
    mcp
      .command('stdio')
      .description(
        'bridge newline-delimited JSON-RPC on stdin/stdout to the workspace MCP endpoint (for clients without HTTP MCP)',
      ),
    DEFAULT_STDIO_TIMEOUT_MS,
  ).action(async (opts: EndpointOptions, cmd: Command) => {
    const apiUrl = resolveApiUrl(cmd, io);
    const { runStdio } = await import('./stdio.js');
    const status = await runStdio(
      {
        workspaceId: opts.workspace,
        tokenEnvVar: opts.tokenEnvVar,
        apiUrl,
        timeoutMs: opts.timeout,
        narrowing: opts,
        allowInsecureHttp: opts.allowInsecureHttp === true,
      },
      io,
    );
    if (status !== 0) throw new CliExit(status);
  });

  addNarrowingOptions(
    mcp
      .command('config')
      .alias('init')
      .description(
        "print a paste-ready server entry for an MCP client, in that client's own format; --write merges it into the client's config file",
      )
      .requiredOption('--workspace <id>', 'workspace id, e.g. ws-acme', parseWorkspaceId)
      .addOption(new Option('--provider <client>', 'the MCP client').choices(PROVIDERS).makeOptionMandatory())
      .addOption(
        new Option('--transport <kind>', 'http (direct) or stdio (via `flowgate mcp stdio`)')
          .choices(TRANSPORTS)
          .default('http'),
      )
      .option(
        '--name <name>',
        'server name in the client (default flowgate-<workspace>; reduced to [A-Za-z0-9_-])',
      )
      .option(
        '--token-env-var <VAR>',
        'environment variable the client reads the key from',
        DEFAULT_TOKEN_ENV_VAR,
      )
      .option('--command <path>', 'executable that stdio entries start', 'flowgate')
      .option('--write', "merge the entry into the client's config file (JSON clients; a .bak copy is kept)")
      .option('--file <path>', 'with --write: the config file to edit instead of the default location')
      .option('--force', 'with --write: replace an existing entry of the same name'),
  ).action(
    async (
      opts: NarrowingOptions & {
        workspace: string;
        provider: Provider;
        transport: Transport;
        name?: string;
        tokenEnvVar: string;
        command: string;
        write?: boolean;
        file?: string;
        force?: boolean;
      },
      cmd: Command,
    ) => {
      if (opts.write !== true && (opts.file !== undefined || opts.force === true)) {
        throw new CliError('invalid_request', '--file and --force go with --write');
      }
      const apiUrl = resolveApiUrl(cmd, io);
      const [{ renderConfig }, { checkNarrowing }, { isEnvVarName }] = await Promise.all([
        import('./config.js'),
        import('./narrowing-flags.js'),
        import('./credentials.js'),
      ]);
      if (!isEnvVarName(opts.tokenEnvVar)) {
        throw new CliError(
          'invalid_request',
          '--token-env-var must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)',
        );
      }
      if (opts.command.trim() === '' || /[\r\n\0]/.test(opts.command)) {
        throw new CliError('invalid_request', '--command must be a single executable name or path');
      }
      const narrowing = checkNarrowing(opts);
      if (!narrowing.ok)
        throw new CliError('invalid_request', `unknown narrowing names:\n${narrowing.message}`);
      const rendered = renderConfig({
        provider: opts.provider,
        transport: opts.transport,
        workspaceId: opts.workspace,
        apiUrl,
        name: opts.name,
        tokenEnvVar: opts.tokenEnvVar,
        narrowing: narrowing.flags,
        command: opts.command,
      });
      const json = cmd.optsWithGlobals<{ json?: boolean }>().json === true;
      if (opts.write === true) {
        const { writeClientConfig } = await import('./write-config.js');
        const written = await writeClientConfig(rendered, {
          file: opts.file,
          env: io.env,
          // `pnpm flowgate …` runs in the Flowgate checkout; pnpm names the directory the user typed it in.
          cwd: io.env.INIT_CWD || io.cwd,
          force: opts.force === true,
        });
        if (json) {
          io.stdout(renderJson(written));
          return;
        }
        io.stdout(
          written.changed
            ? `Wrote server ${written.serverName} to ${written.file}` +
                (written.replaced.length ? `, replacing ${written.replaced.join(', ')}` : '') +
                (written.backup ? ` (previous file kept as ${written.backup})` : '') +
                '\n'
            : `${written.file} already has server ${written.serverName}; nothing changed\n`,
        );
        // The merge note is what --write just did; the others (placeholders, PATH) still apply.
        const notes = rendered.notes.filter((n) => !n.startsWith('Merge this entry'));
        io.stderr(notes.map((n) => `# ${n}\n`).join(''));
        return;
      }
      if (json) {
        io.stdout(renderJson(rendered));
        return;
      }
      // stdout carries the config alone so it can be piped into a file or a parser; the rest goes to stderr.
      io.stdout(rendered.content);
      io.stderr(`# file: ${rendered.file}\n${rendered.notes.map((n) => `# ${n}\n`).join('')}`);
    },
  );

  addEndpointOptions(
    mcp
      .command('doctor')
      .description('check a setup: initialize and tools/list under the given narrowing (never calls a tool)'),
    DEFAULT_DOCTOR_TIMEOUT_MS,
  ).action(async (opts: EndpointOptions, cmd: Command) => {
    const apiUrl = resolveApiUrl(cmd, io);
    const { runDoctor, renderDoctorReport } = await import('./doctor.js');
    const report = await runDoctor({
      apiUrl,
      workspaceId: opts.workspace,
      tokenEnvVar: opts.tokenEnvVar,
      env: io.env,
      narrowing: opts,
      timeoutMs: opts.timeout,
      fetch: io.fetch ?? fetch,
      allowInsecureHttp: opts.allowInsecureHttp === true,
    });
    const json = cmd.optsWithGlobals<{ json?: boolean }>().json === true;
    io.stdout(json ? renderJson(report) : renderDoctorReport(report));
    if (report.failure) {
      // The report above explains; stderr carries the failure in the format every command uses.
      const { stage, message } = report.failure;
      throw new CliError('doctor_failed', `${stage} stage: ${message}`);
    }
    if (!report.ok) throw new CliExit(1);
  });
}
