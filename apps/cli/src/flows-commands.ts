import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { FLOW_SLUG_PATTERN } from '@flowgate/core';
import { isKeyword, MAX_DEFINITION_BYTES, mapGet, readEdn, validateFlow } from '@flowgate/flows';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { AdminClient, FlowDiagnostic, InstallationPatch } from './admin-client.js';
import { CliError, CliExit, type CliIo } from './cli-io.js';
import { renderSummary, renderTable } from './output.js';
import { parsePositiveInt, parseSlug, parseWorkspaceId, requireSlug } from './parsers.js';

/**
 * `flowgate flows push|release|list|bindings set` and `flowgate installations create|list|update`, all over the
 * admin API. Registered by program.ts with its client factory and output helper.
 */

export interface FlowCommandContext {
  io: CliIo;
  client: (cmd: Command) => AdminClient;
  out: (cmd: Command, json: unknown, human: () => string) => void;
}

/** `file:line:column: severity code: message`, then the path and hint: the shape editors and terminals link. */
export function formatDiagnostics(file: string, diagnostics: readonly FlowDiagnostic[]): string {
  return diagnostics
    .map((d) => {
      const where = d.line === null ? file : `${file}:${d.line}:${d.column ?? 1}`;
      const extra = [d.path ? `  at ${d.path}` : '', d.hint ? `  hint: ${d.hint}` : ''].filter(Boolean);
      return [`${where}: ${d.severity} ${d.code}: ${d.message}`, ...extra].join('\n');
    })
    .join('\n')
    .concat(diagnostics.length ? '\n' : '');
}

/** The `:slug` keyword of a definition, when the text can be read far enough to find it. */
export function slugOf(text: string): string | undefined {
  const read = readEdn(text);
  if (!read.ok || read.value.kind !== 'map') return undefined;
  const node = mapGet(read.value, 'slug');
  return node && isKeyword(node) && FLOW_SLUG_PATTERN.test(node.name) ? node.name : undefined;
}

export function registerFlowCommands(program: Command, ctx: FlowCommandContext): void {
  const { io, client, out } = ctx;
  const flows = program.command('flows').description('push, release and bind flow definitions');

  flows
    .command('push <file>')
    .description('save an EDN file as the draft of the flow its :slug names; prints diagnostics')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .action(async (file: string, opts: { workspace: string }, cmd: Command) => {
      const path = resolve(io.cwd, file);
      const info = await stat(path).catch(() => {
        throw new CliError('invalid_request', `cannot read ${file}`);
      });
      if (!info.isFile()) throw new CliError('invalid_request', `${file} is not a file`);
      if (info.size > MAX_DEFINITION_BYTES) {
        throw new CliError(
          'payload_too_large',
          `${file} is ${info.size} bytes; a flow definition is at most ${MAX_DEFINITION_BYTES}`,
        );
      }
      const text = await readFile(path, 'utf8');
      const slug = slugOf(text);
      if (!slug) {
        // Without a readable slug there is no URL to push to: show what is wrong locally instead.
        const local: FlowDiagnostic[] = validateFlow(text).diagnostics.map((d) => ({ ...d }));
        if (local.length === 0) {
          local.push({
            severity: 'error',
            code: 'invalid_slug',
            message: 'the definition has no valid :slug',
            path: ':slug',
            line: null,
            column: null,
            hint: 'add e.g. :slug :my-flow',
          });
        }
        io.stderr(formatDiagnostics(file, local));
        throw new CliExit(1);
      }
      const { status, answer } = await client(cmd).pushDraft(opts.workspace, slug, text);
      const warnings = answer.diagnostics.filter((d) => d.severity === 'warning').length;
      if (answer.diagnostics.length) io.stderr(formatDiagnostics(file, answer.diagnostics));
      out(cmd, answer, () =>
        status === 200
          ? `Saved draft of ${slug} in ${opts.workspace}${warnings ? ` (${warnings} warning${warnings > 1 ? 's' : ''})` : ''}\n`
          : `Draft of ${slug} not saved: the definition is invalid\n`,
      );
      if (status !== 200) throw new CliExit(1);
    });

  flows
    .command('release <slug>')
    .description(
      'release the draft as a new version (or reuse it when unchanged), or point live at --version',
    )
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--version <n>', 'an existing version to make live (rollback)', parsePositiveInt)
    .option('--note <text>', 'release note')
    .action(
      async (slug: string, opts: { workspace: string; version?: number; note?: string }, cmd: Command) => {
        const input: { version?: number; releaseNote?: string } = {};
        if (opts.version !== undefined) input.version = opts.version;
        if (opts.note !== undefined) input.releaseNote = opts.note;
        const result = await client(cmd).releaseFlow(opts.workspace, requireSlug(slug), input);
        out(cmd, result, () => {
          const reused =
            result.created === false && opts.version === undefined
              ? ' (unchanged draft: existing version reused)'
              : '';
          return `${result.flowSlug} is live at version ${result.version}${reused}\n`;
        });
      },
    );

  flows
    .command('list')
    .description('list the flows of a workspace')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--limit <n>', 'flows per page', parsePositiveInt)
    .option('--cursor <cursor>', 'continue from a previous page')
    .action(async (opts: { workspace: string; limit?: number; cursor?: string }, cmd: Command) => {
      const query: { limit?: number; cursor?: string } = {};
      if (opts.limit !== undefined) query.limit = opts.limit;
      if (opts.cursor !== undefined) query.cursor = opts.cursor;
      const page = await client(cmd).listFlows(opts.workspace, query);
      out(cmd, page, () => {
        const table = renderTable(
          [
            { header: 'SLUG', value: (r) => r.flowSlug },
            { header: 'LIVE', value: (r) => r.liveVersion },
            { header: 'LATEST', value: (r) => r.latestVersion },
            { header: 'DRAFT', value: (r) => (r.hasDraft ? 'yes' : 'no') },
            { header: 'PUBLIC', value: (r) => (r.isPublic ? 'yes' : 'no') },
            { header: 'NAME', value: (r) => r.name },
          ],
          page.items,
        );
        return page.nextCursor ? `${table}next page: --cursor ${page.nextCursor}\n` : table;
      });
    });

  const bindings = flows.command('bindings').description("bind a flow's :requires slots to connections");
  bindings
    .command('set <slug>')
    .description('bind slots (--slot crm=conn_…; an empty value unbinds); other slots keep their bindings')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .requiredOption('--slot <slot=connectionId>', 'a binding (repeatable)', collectSlot)
    .addOption(
      new Option('--target <target>', 'which definition the bindings serve')
        .choices(['live', 'draft'])
        .default('live'),
    )
    .action(
      async (
        slug: string,
        opts: { workspace: string; slot: Record<string, string | null>; target: 'live' | 'draft' },
        cmd: Command,
      ) => {
        const result = await client(cmd).setFlowBindings(opts.workspace, requireSlug(slug), {
          target: opts.target,
          slots: opts.slot,
        });
        out(
          cmd,
          result,
          () => `Bindings of ${result.flowSlug} (${result.target})\n${renderSummary(result.slots)}`,
        );
      },
    );

  // --- installations ----------------------------------------------------------------------------------------------
  const installations = program
    .command('installations')
    .description("install other workspaces' public flows");
  const installationColumns = [
    { header: 'ID', value: (r: Record<string, unknown>) => r.installationId },
    { header: 'SOURCE', value: (r: Record<string, unknown>) => `${r.sourceWorkspaceId}/${r.flowSlug}` },
    {
      header: 'POLICY',
      value: (r: Record<string, unknown>) =>
        r.versionPolicy === 'pinned' ? `pinned v${r.pinnedVersion}` : r.versionPolicy,
    },
    { header: 'ENABLED', value: (r: Record<string, unknown>) => (r.enabled ? 'yes' : 'no') },
    { header: 'TRUSTED', value: (r: Record<string, unknown>) => (r.trustMetadata ? 'yes' : 'no') },
    { header: 'SLOTS', value: (r: Record<string, unknown>) => r.slotBindings },
  ];
  const describe = (r: Record<string, unknown>) => {
    const missing =
      Array.isArray(r.missingSlots) && r.missingSlots.length
        ? `\nneeds setup: bind ${r.missingSlots.join(', ')} (installations update --slot …)`
        : '';
    return `${renderTable(installationColumns, [r])}${missing}${missing ? '\n' : ''}`;
  };

  installations
    .command('create')
    .description('install a public released flow of another workspace (disabled until its slots are bound)')
    .requiredOption('--workspace <id>', 'the installing workspace', parseWorkspaceId)
    .requiredOption('--source-workspace <id>', 'the workspace that publishes the flow', parseWorkspaceId)
    .requiredOption('--flow <slug>', 'the flow slug', parseSlug)
    .option(
      '--pin <version>',
      'run this version (default: follow the source’s live version)',
      parsePositiveInt,
    )
    .action(
      async (
        opts: { workspace: string; sourceWorkspace: string; flow: string; pin?: number },
        cmd: Command,
      ) => {
        const created = await client(cmd).createInstallation(opts.workspace, {
          sourceWorkspaceId: opts.sourceWorkspace,
          flowSlug: opts.flow,
          versionPolicy: opts.pin === undefined ? 'track-latest' : 'pinned',
          ...(opts.pin === undefined ? {} : { pinnedVersion: opts.pin }),
        });
        out(cmd, created, () => `Created installation ${created.installationId}\n${describe(created)}`);
      },
    );

  installations
    .command('list')
    .description('list installations')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--limit <n>', 'installations per page', parsePositiveInt)
    .option('--cursor <cursor>', 'continue from a previous page')
    .action(async (opts: { workspace: string; limit?: number; cursor?: string }, cmd: Command) => {
      const query: { limit?: number; cursor?: string } = {};
      if (opts.limit !== undefined) query.limit = opts.limit;
      if (opts.cursor !== undefined) query.cursor = opts.cursor;
      const page = await client(cmd).listInstallations(opts.workspace, query);
      out(cmd, page, () => {
        const table = renderTable(installationColumns, page.items);
        return page.nextCursor ? `${table}next page: --cursor ${page.nextCursor}\n` : table;
      });
    });

  installations
    .command('update <installationId>')
    .description(
      'bind slots, enable or disable, opt in to showing flow-authored text, change the version policy',
    )
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option(
      '--slot <slot=connectionId>',
      'bind a slot to a connection of this workspace (repeatable; empty unbinds)',
      collectSlot,
    )
    .option('--enable', 'enable (every required slot must be bound)')
    .option('--disable', 'disable')
    .option('--trust-metadata', 'show the flow-authored descriptions to models (after reviewing them)')
    .option('--no-trust-metadata', 'hide flow-authored text again')
    .option('--pin <version>', 'run this version', parsePositiveInt)
    .option('--track-latest', "follow the source's live version")
    .action(
      async (
        id: string,
        opts: {
          workspace: string;
          slot?: Record<string, string | null>;
          enable?: boolean;
          disable?: boolean;
          trustMetadata?: boolean;
          pin?: number;
          trackLatest?: boolean;
        },
        cmd: Command,
      ) => {
        if (opts.enable && opts.disable)
          throw new CliError('invalid_request', 'give --enable or --disable, not both');
        if (opts.pin !== undefined && opts.trackLatest)
          throw new CliError('invalid_request', 'give --pin or --track-latest, not both');
        const patch: InstallationPatch = {};
        if (opts.slot) patch.slotBindings = opts.slot;
        if (opts.enable) patch.enabled = true;
        if (opts.disable) patch.enabled = false;
        if (opts.trustMetadata !== undefined) patch.trustMetadata = opts.trustMetadata;
        if (opts.pin !== undefined) {
          patch.versionPolicy = 'pinned';
          patch.pinnedVersion = opts.pin;
        }
        if (opts.trackLatest) patch.versionPolicy = 'track-latest';
        if (Object.keys(patch).length === 0) {
          throw new CliError(
            'invalid_request',
            'nothing to update: give --slot, --enable/--disable, --trust-metadata, --pin or --track-latest',
          );
        }
        const updated = await client(cmd).updateInstallation(opts.workspace, id, patch);
        out(cmd, updated, () => `Updated installation ${updated.installationId}\n${describe(updated)}`);
      },
    );
}

function collectSlot(
  value: string,
  previous: Record<string, string | null> | undefined,
): Record<string, string | null> {
  const match = /^([A-Za-z][A-Za-z0-9_-]{0,63})=(.*)$/.exec(value);
  if (!match) throw new InvalidArgumentError('expected slot=connectionId, e.g. crm=conn_abc (crm= unbinds)');
  const [, slot, connectionId] = match as unknown as [string, string, string];
  return { ...previous, [slot]: connectionId === '' ? null : connectionId };
}
