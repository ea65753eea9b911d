import { type Capability, capabilitySchema } from '@flowgate/auth';
import { CONNECTION_TYPES } from '@flowgate/core';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import {
  AdminApiError,
  AdminClient,
  type ConnectionInput,
  type ConnectionPatchInput,
  type McpPolicyInput,
  type ServiceAccountPatch,
} from './admin-client.js';
import { CliError, CliExit, type CliIo, DEFAULT_API_URL } from './cli-io.js';
import { readDevSecrets, resolveDataDir } from './data-dir.js';
import { registerFeedbackCommands } from './feedback-commands.js';
import { registerFlowCommands } from './flows-commands.js';
import { registerMcpCommands } from './mcp/command.js';
import { renderJson, renderSummary, renderTable } from './output.js';
import { parsePositiveInt, parseQuota, parseWorkspaceId } from './parsers.js';
import { renderError } from './render-error.js';
import { registerRunCommands } from './runs-commands.js';
import { registerUsageCommands } from './usage-commands.js';
import { acceptWorkspaceIdAlias } from './workspace-flag.js';

export { CliError, CliExit, type CliIo, DEFAULT_API_URL } from './cli-io.js';
export { renderError } from './render-error.js';

interface GlobalOptions {
  apiUrl?: string;
  json?: boolean;
}

/** Parses argv (without the node and script entries), runs the command and returns the exit status. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const secrets = new Set<string>();
  const program = buildProgram(io, secrets);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CliExit) return error.status;
    if (error instanceof CommanderError) {
      // Help and version are successful exits; help shown for a missing subcommand was already printed.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      if (error.code !== 'commander.help') io.stderr(`${renderError(error, secrets)}\n`);
      return error.exitCode || 1;
    }
    io.stderr(`${renderError(error, secrets)}\n${tokenHint(error, io)}`);
    return 1;
  }
}

/**
 * `pnpm dev` tells the user to export an agent key as FLOWGATE_TOKEN; admin commands in that shell then send it and
 * are refused. Say why and what to do, instead of leaving only `insufficient_role`.
 */
function tokenHint(error: unknown, io: CliIo): string {
  if (!(error instanceof AdminApiError) || error.code !== 'insufficient_role') return '';
  if (io.env.FLOWGATE_ADMIN_TOKEN || !io.env.FLOWGATE_TOKEN) return '';
  return (
    'hint: FLOWGATE_TOKEN holds a key for agents; admin commands need the operator token or a workspace admin: ' +
    "set FLOWGATE_ADMIN_TOKEN, or unset FLOWGATE_TOKEN to use the local dev server's own\n"
  );
}

function buildProgram(io: CliIo, secrets: Set<string>): Command {
  const program = new Command('flowgate');
  program
    .description('Flowgate: one MCP server per workspace for AI agents')
    .exitOverride()
    // Usage errors are not printed by commander but by runCli, in the one error format.
    .configureOutput({
      writeOut: (s) => io.stdout(s),
      writeErr: (s) => io.stderr(s),
      outputError: () => {},
    })
    .option(
      '--api-url <url>',
      'admin API base URL (default: $FLOWGATE_API_URL or http://127.0.0.1:8787)',
      parseUrl,
    )
    .option('--json', 'print the raw JSON answer');

  const out = (cmd: Command, json: unknown, human: () => string) => {
    const globals = cmd.optsWithGlobals<GlobalOptions>();
    io.stdout(globals.json ? renderJson(json) : human());
  };

  /** The admin client for this invocation: operator token, else a workspace-admin bearer, else the local dev token. */
  const client = (cmd: Command): AdminClient => {
    const globals = cmd.optsWithGlobals<GlobalOptions>();
    const apiUrl = globals.apiUrl ?? urlFromEnv(io.env.FLOWGATE_API_URL);
    const token = resolveToken(io, apiUrl);
    if (!token) {
      throw new CliError(
        'unauthorized',
        'no token: set FLOWGATE_ADMIN_TOKEN (operator) or FLOWGATE_TOKEN (workspace admin bearer)',
      );
    }
    secrets.add(token);
    return new AdminClient({ apiUrl, token, ...(io.fetch ? { fetch: io.fetch } : {}) });
  };

  // --- server commands -------------------------------------------------------------------------
  program
    .command('dev')
    .description('start a local gateway with the embedded database and a seeded demo workspace')
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, 8787)
    .action(async (opts: { port: number }) => {
      const { runDev } = await import('./dev.js');
      await runDev({ port: opts.port }, io);
    });

  program
    .command('serve')
    .description('start the gateway from environment configuration (DATABASE_URL → Postgres, else embedded)')
    .option('--port <port>', 'port to listen on (default FLOWGATE_PORT, 8787; 0 = any free port)', parsePort)
    .option('--no-worker', 'do not run the in-process run worker')
    .action(async (opts: { worker: boolean; port?: number }) => {
      const { runServe } = await import('./serve.js');
      await runServe({ worker: opts.worker, port: opts.port }, io);
    });

  program
    .command('worker')
    .description(
      'execute queued runs from the Postgres database named by DATABASE_URL (next to serve, or alone)',
    )
    .option(
      '--concurrency <n>',
      'runs executed at the same time (default FLOWGATE_WORKER_CONCURRENCY, 4)',
      parsePositiveInt,
    )
    .action(async (opts: { concurrency?: number }) => {
      const { runWorker } = await import('./worker.js');
      await runWorker({ concurrency: opts.concurrency }, io);
    });

  const db = program.command('db').description('database maintenance');
  db.command('migrate')
    .description(
      'apply pending migrations to DATABASE_URL, or to the embedded database in the data directory',
    )
    .action(async () => {
      const { runMigrate } = await import('./serve.js');
      await runMigrate(io);
    });
  db.command('backfill')
    .description(
      'migrate, then run every backfill again (rows older versions wrote get their derived columns; idempotent)',
    )
    .action(async () => {
      const { runBackfill } = await import('./serve.js');
      await runBackfill(io);
    });

  // --- admin commands (HTTP only) --------------------------------------------------------------
  const workspaces = program.command('workspaces').description('manage workspaces (operator token)');
  workspaces
    .command('create')
    .description('create a workspace')
    .requiredOption('--id <id>', 'workspace id, e.g. ws-acme', parseWorkspaceId)
    .requiredOption('--name <name>', 'display name')
    .action(async (opts: { id: string; name: string }, cmd: Command) => {
      const ws = await client(cmd).createWorkspace({ id: opts.id, name: opts.name });
      out(cmd, ws, () => `Created workspace ${ws.id} (${ws.name}) at ${ws.createdAt}\n`);
    });

  const accounts = program
    .command('service-accounts')
    .description('manage service accounts and their API keys');
  accounts
    .command('create')
    .description('create a service account')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .requiredOption('--name <name>', 'account name')
    .requiredOption('--capability <capability>', 'capability to grant (repeatable)', collectCapability)
    .action(async (opts: { workspace: string; name: string; capability: Capability[] }, cmd: Command) => {
      const sa = await client(cmd).createServiceAccount(opts.workspace, {
        name: opts.name,
        capabilities: opts.capability,
      });
      out(cmd, sa, () => `Created service account ${sa.serviceAccountId}\n${renderSummary(sa)}`);
    });

  accounts
    .command('list')
    .description('list service accounts')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .action(async (opts: { workspace: string }, cmd: Command) => {
      const list = await client(cmd).listServiceAccounts(opts.workspace);
      out(cmd, list, () =>
        renderTable(
          [
            { header: 'ID', value: (r) => r.serviceAccountId },
            { header: 'NAME', value: (r) => r.name },
            { header: 'STATUS', value: (r) => r.status },
            { header: 'CAPABILITIES', value: (r) => r.capabilities },
          ],
          list.items,
        ),
      );
    });

  accounts
    .command('update <serviceAccountId>')
    .description('change status, capabilities or name')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .addOption(new Option('--status <status>', 'account status').choices(['active', 'disabled']))
    .option('--capability <capability>', 'replace the capability list (repeatable)', collectCapability)
    .option('--name <name>', 'new name')
    .action(
      async (
        sa: string,
        opts: {
          workspace: string;
          status?: 'active' | 'disabled';
          capability?: Capability[];
          name?: string;
        },
        cmd: Command,
      ) => {
        const patch: ServiceAccountPatch = {};
        if (opts.status !== undefined) patch.status = opts.status;
        if (opts.capability !== undefined) patch.capabilities = opts.capability;
        if (opts.name !== undefined) patch.name = opts.name;
        if (Object.keys(patch).length === 0) {
          throw new CliError('invalid_request', 'nothing to update: give --status, --capability or --name');
        }
        const updated = await client(cmd).updateServiceAccount(opts.workspace, sa, patch);
        out(
          cmd,
          updated,
          () => `Updated service account ${updated.serviceAccountId}\n${renderSummary(updated)}`,
        );
      },
    );

  const keys = accounts.command('keys').description('manage API keys of a service account');
  keys
    .command('create <serviceAccountId>')
    .description('create an API key; the key is shown only in this answer')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--name <name>', 'key label')
    .option('--expires-at <time>', 'expiry as an ISO 8601 time', parseTime)
    .action(
      async (sa: string, opts: { workspace: string; name?: string; expiresAt?: string }, cmd: Command) => {
        const input: { name?: string; expiresAt?: string } = {};
        if (opts.name !== undefined) input.name = opts.name;
        if (opts.expiresAt !== undefined) input.expiresAt = opts.expiresAt;
        const created = await client(cmd).createKey(opts.workspace, sa, input);
        out(
          cmd,
          created,
          () =>
            `Created key ${created.key.keyId} for ${created.serviceAccountId} (expires: ${created.key.expiresAt ?? 'never'})\n` +
            `API key (shown once, store it now): ${created.key.apiKey}\n`,
        );
      },
    );

  keys
    .command('list <serviceAccountId>')
    .description('list API keys (never their secrets)')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .action(async (sa: string, opts: { workspace: string }, cmd: Command) => {
      const list = await client(cmd).listKeys(opts.workspace, sa);
      out(cmd, list, () =>
        renderTable(
          [
            { header: 'KEY ID', value: (r) => r.keyId },
            { header: 'NAME', value: (r) => r.name },
            { header: 'CREATED', value: (r) => r.createdAt },
            { header: 'EXPIRES', value: (r) => r.expiresAt },
            { header: 'LAST USED', value: (r) => r.lastUsedAt },
            { header: 'REVOKED', value: (r) => r.revokedAt },
          ],
          list.items,
        ),
      );
    });

  keys
    .command('revoke <serviceAccountId> <keyId>')
    .description('revoke an API key')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .action(async (sa: string, keyId: string, opts: { workspace: string }, cmd: Command) => {
      await client(cmd).revokeKey(opts.workspace, sa, keyId);
      out(cmd, { serviceAccountId: sa, keyId, revoked: true }, () => `Revoked key ${keyId}\n`);
    });

  const connections = program.command('connections').description('manage connections to outside systems');
  connections
    .command('create')
    .description('create a connection; the secret comes from an environment variable or stdin, never a flag')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .requiredOption('--name <name>', 'connection name')
    .addOption(new Option('--type <type>', 'connection type').choices(CONNECTION_TYPES).makeOptionMandatory())
    .option('--base-url <url>', 'base URL of the outside system', parseUrl)
    .option('--model <name>', 'default model of an llm-provider (used by :llm steps that name none)')
    .requiredOption('--auth-type <type>', 'auth kind, e.g. none, bearer, api-key, basic')
    .option(
      '--header-name <name>',
      'header that carries the key for --auth-type api-key (server default X-API-Key)',
    )
    .option('--secret-env <VAR>', 'read the secret from this environment variable')
    .option('--secret-stdin', 'read the secret from standard input')
    .option(
      '--header <header>',
      '"Name: value", a fixed header of an mcp-server sent on every request (repeatable); not a secret: stored and shown in plain text',
      collectHeader,
    )
    .action(
      async (
        opts: {
          workspace: string;
          name: string;
          type: string;
          baseUrl?: string;
          model?: string;
          authType: string;
          headerName?: string;
          secretEnv?: string;
          secretStdin?: boolean;
          header?: Record<string, string>;
        },
        cmd: Command,
      ) => {
        const secret = await readSecret(io, opts.secretEnv, opts.secretStdin === true);
        if (secret !== undefined) secrets.add(secret);
        const auth: ConnectionInput['auth'] = { type: opts.authType };
        if (secret !== undefined) auth.secret = secret;
        if (opts.headerName !== undefined) auth.headerName = opts.headerName;
        const created = await client(cmd).createConnection(opts.workspace, {
          name: opts.name,
          type: opts.type,
          ...(opts.baseUrl !== undefined ? { baseUrl: opts.baseUrl } : {}),
          ...(opts.model !== undefined ? { model: opts.model } : {}),
          auth,
          ...(opts.header !== undefined ? { headers: opts.header } : {}),
        });
        out(cmd, created, () => `Created connection ${created.connectionId}\n${renderSummary(created)}`);
      },
    );
  connections
    .command('update <connectionId>')
    .description(
      'rename, move, change the auth type or default model of a connection; only the given fields change',
    )
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--name <name>', 'new name')
    .option('--base-url <url>', 'new base URL', parseUrl)
    .option('--model <name>', 'new default model of an llm-provider')
    .option('--auth-type <type>', 'new auth kind (none, bearer, api-key, basic); needs a secret unless none')
    .option('--header-name <name>', 'header that carries the key for --auth-type api-key')
    .option('--secret-env <VAR>', 'read the new secret from this environment variable')
    .option('--secret-stdin', 'read the new secret from standard input')
    .option(
      '--header <header>',
      '"Name: value": replace the fixed headers of an mcp-server with these (repeatable; not secrets)',
      collectHeader,
    )
    .option('--clear-headers', "remove an mcp-server's fixed headers")
    .action(
      async (
        connectionId: string,
        opts: {
          workspace: string;
          name?: string;
          baseUrl?: string;
          model?: string;
          authType?: string;
          headerName?: string;
          secretEnv?: string;
          secretStdin?: boolean;
          header?: Record<string, string>;
          clearHeaders?: boolean;
        },
        cmd: Command,
      ) => {
        const secret = await readSecret(io, opts.secretEnv, opts.secretStdin === true);
        if (secret !== undefined) secrets.add(secret);
        if (opts.headerName !== undefined && opts.authType === undefined) {
          throw new CliError('invalid_request', '--header-name goes with --auth-type api-key');
        }
        if (opts.header !== undefined && opts.clearHeaders) {
          throw new CliError('invalid_request', 'give --header or --clear-headers, not both');
        }
        const patch: ConnectionPatchInput = {};
        if (opts.name !== undefined) patch.name = opts.name;
        if (opts.header !== undefined) patch.headers = opts.header;
        if (opts.clearHeaders) patch.headers = {};
        if (opts.baseUrl !== undefined) patch.baseUrl = opts.baseUrl;
        if (opts.model !== undefined) patch.model = opts.model;
        if (opts.authType !== undefined) {
          patch.auth = { type: opts.authType };
          if (secret !== undefined) patch.auth.secret = secret;
          if (opts.headerName !== undefined) patch.auth.headerName = opts.headerName;
        } else if (secret !== undefined) {
          patch.secret = secret;
        }
        if (Object.keys(patch).length === 0) {
          throw new CliError(
            'invalid_request',
            'nothing to change: give --name, --base-url, --model, --auth-type, --header or a new secret',
          );
        }
        const updated = await client(cmd).updateConnection(opts.workspace, connectionId, patch);
        out(cmd, updated, () => `Updated connection ${updated.connectionId}\n${renderSummary(updated)}`);
      },
    );
  connections
    .command('rotate <connectionId>')
    .description('replace the secret; the next step that uses the connection sends the new one')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--secret-env <VAR>', 'read the new secret from this environment variable')
    .option('--secret-stdin', 'read the new secret from standard input')
    .action(
      async (
        connectionId: string,
        opts: { workspace: string; secretEnv?: string; secretStdin?: boolean },
        cmd: Command,
      ) => {
        const secret = await readSecret(io, opts.secretEnv, opts.secretStdin === true);
        if (secret === undefined) {
          throw new CliError(
            'invalid_request',
            'give the new secret with --secret-env VAR or --secret-stdin',
          );
        }
        secrets.add(secret);
        const rotated = await client(cmd).rotateConnection(opts.workspace, connectionId, secret);
        out(cmd, rotated, () => `Rotated the secret of connection ${rotated.connectionId}\n`);
      },
    );
  for (const [verb, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    connections
      .command(`${verb} <connectionId>`)
      .description(
        enabled
          ? 'enable a disabled connection again'
          : 'disable a connection: steps that use it fail with connection_disabled until enabled',
      )
      .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
      .action(async (connectionId: string, opts: { workspace: string }, cmd: Command) => {
        const row = await client(cmd).setConnectionEnabled(opts.workspace, connectionId, enabled);
        out(cmd, row, () => `Connection ${row.connectionId} is ${row.status}\n`);
      });
  }
  connections
    .command('delete <connectionId>')
    .description('delete a connection and its secret; refused while flows or installations are bound to it')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--force', 'unbind it from every flow and installation (installations are disabled), then delete')
    .action(async (connectionId: string, opts: { workspace: string; force?: boolean }, cmd: Command) => {
      const removed = await client(cmd).deleteConnection(opts.workspace, connectionId, opts.force === true);
      const unbound = [
        ...removed.unbound.flowBindings.map((b) => `  flow ${b.flowSlug} (${b.target}) slot :${b.slot}`),
        ...removed.unbound.installationBindings.map(
          (b) => `  installation ${b.installationId} (${b.flowSlug}) slot :${b.slot}`,
        ),
      ];
      out(
        cmd,
        removed,
        () =>
          `Deleted connection ${removed.connectionId} (${removed.name})\n` +
          (unbound.length > 0 ? `Unbound:\n${unbound.join('\n')}\n` : ''),
      );
    });
  connections
    .command('list')
    .description('list connections with their last health (never their secrets)')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--limit <n>', 'connections per page', parsePositiveInt)
    .option('--cursor <cursor>', 'continue from a previous page')
    .action(async (opts: { workspace: string; limit?: number; cursor?: string }, cmd: Command) => {
      const query: { limit?: number; cursor?: string } = {};
      if (opts.limit !== undefined) query.limit = opts.limit;
      if (opts.cursor !== undefined) query.cursor = opts.cursor;
      const page = await client(cmd).listConnections(opts.workspace, query);
      out(cmd, page, () => {
        const table = renderTable(
          [
            { header: 'ID', value: (r) => r.connectionId },
            { header: 'NAME', value: (r) => r.name },
            { header: 'TYPE', value: (r) => r.type },
            { header: 'STATUS', value: (r) => r.status },
            { header: 'HEALTH', value: (r) => healthText(r.health as ListedHealth) },
            { header: 'MCP', value: (r) => mcpText((r.health as ListedHealth)?.mcp) },
          ],
          page.items,
        );
        return page.nextCursor ? `${table}next page: --cursor ${page.nextCursor}\n` : table;
      });
    });
  connections
    .command('check <connectionId>')
    .description('health-check a connection now (one bounded request; an mcp-server lists its tools)')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .action(async (connectionId: string, opts: { workspace: string }, cmd: Command) => {
      const check = await client(cmd).checkConnection(opts.workspace, connectionId);
      out(cmd, check, () => {
        const { mcp, ...rest } = check;
        return renderSummary(
          mcp
            ? { ...rest, protocol: mcp.protocolVersion, server: mcp.serverName, tools: mcp.toolCount }
            : rest,
        );
      });
      if (!check.ok) throw new CliExit(1);
    });

  const policy = program.command('mcp-policy').description('workspace MCP policy');
  policy
    .command('set')
    .description('set the workspace policy; only the given fields change')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--read-only', 'hide every tool that runs flows, writes drafts or releases')
    .option('--no-read-only', 'turn workspace read-only mode off')
    .option('--disabled-tools <names>', 'comma list of tools to disable ("" clears)', parseList)
    .option('--allowed-origins <origins>', 'comma list of allowed browser origins ("" clears)', parseList)
    .option('--allowed-ips <cidrs>', 'comma list of allowed client IPs or CIDRs ("" clears)', parseList)
    .option('--runs-per-month <n>', 'quota: run starts per UTC month (none removes it)', parseQuota)
    .option('--llm-tokens-per-month <n>', 'quota: LLM tokens per UTC month (none removes it)', parseQuota)
    .option('--tool-calls-per-day <n>', 'quota: MCP tool calls per UTC day (none removes it)', parseQuota)
    .action(
      async (
        opts: {
          workspace: string;
          readOnly?: boolean;
          disabledTools?: string[];
          allowedOrigins?: string[];
          allowedIps?: string[];
          runsPerMonth?: number | 'none';
          llmTokensPerMonth?: number | 'none';
          toolCallsPerDay?: number | 'none';
        },
        cmd: Command,
      ) => {
        const input: McpPolicyInput = {};
        if (opts.readOnly !== undefined) input.readOnly = opts.readOnly;
        if (opts.disabledTools !== undefined) input.disabledTools = opts.disabledTools;
        if (opts.allowedOrigins !== undefined) input.allowedOrigins = opts.allowedOrigins;
        if (opts.allowedIps !== undefined) input.allowedIps = opts.allowedIps;
        const quotas: NonNullable<McpPolicyInput['quotas']> = {};
        const quota = (v: number | 'none') => (v === 'none' ? null : v);
        if (opts.runsPerMonth !== undefined) quotas.runsPerMonth = quota(opts.runsPerMonth);
        if (opts.llmTokensPerMonth !== undefined) quotas.llmTokensPerMonth = quota(opts.llmTokensPerMonth);
        if (opts.toolCallsPerDay !== undefined) quotas.toolCallsPerDay = quota(opts.toolCallsPerDay);
        if (Object.keys(quotas).length > 0) input.quotas = quotas;
        if (Object.keys(input).length === 0) {
          throw new CliError(
            'invalid_request',
            'nothing to set: give --read-only/--no-read-only, --disabled-tools, --allowed-origins, --allowed-ips or a quota (--runs-per-month, --llm-tokens-per-month, --tool-calls-per-day)',
          );
        }
        const result = await client(cmd).setMcpPolicy(opts.workspace, input);
        out(cmd, result, () => `Updated MCP policy of ${opts.workspace}\n${renderSummary(result)}`);
      },
    );

  program
    .command('audit')
    .description('read the workspace audit log, newest first')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--limit <n>', 'entries per page', parsePositiveInt)
    .option('--cursor <cursor>', 'continue from a previous page')
    .action(async (opts: { workspace: string; limit?: number; cursor?: string }, cmd: Command) => {
      const query: { limit?: number; cursor?: string } = {};
      if (opts.limit !== undefined) query.limit = opts.limit;
      if (opts.cursor !== undefined) query.cursor = opts.cursor;
      const page = await client(cmd).listAudit(opts.workspace, query);
      out(cmd, page, () => {
        const table = renderTable(auditColumns(page.items), page.items);
        return page.nextCursor ? `${table}next page: --cursor ${page.nextCursor}\n` : table;
      });
    });

  registerFlowCommands(program, { io, client, out });
  registerRunCommands(program, { io, client, out });
  registerFeedbackCommands(program, { client, out });
  registerUsageCommands(program, { client, out });
  registerMcpCommands(program, io);
  acceptWorkspaceIdAlias(program);

  return program;
}

const AUDIT_PREFERRED = [
  'at',
  'createdAt',
  'kind',
  'principalType',
  'principalId',
  'keyId',
  'action',
  'tool',
  'outcome',
  'errorCode',
  'protocolVersion',
  'runId',
  'durationMs',
];

/** Audit entries carry many optional fields; show the common ones that are present. */
function auditColumns(items: Array<Record<string, unknown>>) {
  const present = new Set(items.flatMap((i) => Object.keys(i)));
  let keys = AUDIT_PREFERRED.filter((k) => present.has(k));
  if (keys.length === 0) keys = Object.keys(items[0] ?? {}).slice(0, 6);
  return keys.map((k) => ({
    header: k.replace(/[A-Z]/g, (c) => ` ${c}`).toUpperCase(),
    value: (r: Record<string, unknown>) => r[k],
  }));
}

/**
 * Token order: the operator token, then a workspace-admin bearer, then — only for a loopback API URL —
 * the token `flowgate dev` generated into the local data directory, so admin commands work against a
 * dev server without copying secrets around.
 */
function resolveToken(io: CliIo, apiUrl: string): string | undefined {
  if (io.env.FLOWGATE_ADMIN_TOKEN) return io.env.FLOWGATE_ADMIN_TOKEN;
  if (io.env.FLOWGATE_TOKEN) return io.env.FLOWGATE_TOKEN;
  const host = new URL(apiUrl).hostname;
  if (host === '127.0.0.1' || host === 'localhost' || host === '[::1]') {
    return readDevSecrets(resolveDataDir(io.env, io.cwd))?.adminToken;
  }
  return undefined;
}

async function readSecret(
  io: CliIo,
  envVar: string | undefined,
  fromStdin: boolean,
): Promise<string | undefined> {
  if (envVar !== undefined && fromStdin) {
    throw new CliError('invalid_request', 'give either --secret-env or --secret-stdin, not both');
  }
  if (envVar !== undefined) {
    const value = io.env[envVar];
    if (!value) throw new CliError('invalid_request', `environment variable ${envVar} is not set or empty`);
    return value;
  }
  if (fromStdin) {
    // Strip only the trailing newline a shell or `echo` adds; inner whitespace is part of the secret.
    const value = (await io.readStdin()).replace(/\r?\n$/, '');
    if (!value) throw new CliError('invalid_request', 'standard input was empty; expected the secret');
    return value;
  }
  return undefined;
}

function urlFromEnv(value: string | undefined): string {
  if (!value) return DEFAULT_API_URL;
  try {
    return parseUrl(value);
  } catch {
    throw new CliError('invalid_request', 'FLOWGATE_API_URL: expected an http(s) URL');
  }
}

function parseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('expected an http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('expected an http(s) URL');
  return value.replace(/\/+$/, '');
}

/** `Name: value` (repeatable) into a header map; the server checks names and values. */
function collectHeader(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const colon = value.indexOf(':');
  const name = colon < 0 ? '' : value.slice(0, colon).trim();
  if (!name) throw new InvalidArgumentError('expected "Name: value"');
  // A null-prototype map: a header name can never reach an object's prototype.
  const headers: Record<string, string> = Object.assign(Object.create(null), previous);
  if (Object.hasOwn(headers, name)) throw new InvalidArgumentError(`${name} is given twice`);
  headers[name] = value.slice(colon + 1).trim();
  return headers;
}

interface ListedHealth {
  ok: boolean;
  checkedAt: string;
  status?: number;
  mcp?: { protocolVersion: string; serverName: string; serverVersion?: string; toolCount: number };
}

function healthText(health: ListedHealth | null): string {
  if (!health) return 'not checked';
  return `${health.ok ? 'healthy' : 'unhealthy'}${health.status !== undefined ? ` (HTTP ${health.status})` : ''}`;
}

function mcpText(mcp: ListedHealth['mcp']): string | null {
  if (!mcp) return null;
  const server = mcp.serverVersion ? `${mcp.serverName} ${mcp.serverVersion}` : mcp.serverName;
  return `${mcp.protocolVersion} ${server} (${mcp.toolCount} tools)`;
}

function collectCapability(value: string, previous: Capability[] | undefined): Capability[] {
  const parsed = capabilitySchema.safeParse(value);
  if (!parsed.success) {
    throw new InvalidArgumentError(`unknown capability; valid: ${capabilitySchema.options.join(', ')}`);
  }
  return [...(previous ?? []), parsed.data];
}

function parseList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('expected a port number 0-65535');
  return n;
}

function parseTime(value: string): string {
  const time = new Date(value);
  if (Number.isNaN(time.getTime()))
    throw new InvalidArgumentError('expected an ISO 8601 time, e.g. 2030-01-01T00:00:00Z');
  return time.toISOString();
}
