import { type Command, InvalidArgumentError, Option } from 'commander';
import { z } from 'zod';
import type { AdminClient, FeedbackArea } from './admin-client.js';
import { renderTable } from './output.js';
import { parsePositiveInt, parseWorkspaceId } from './parsers.js';

/** `flowgate feedback list`, over the admin API. Registered by program.ts. */

export interface FeedbackCommandContext {
  client: (cmd: Command) => AdminClient;
  out: (cmd: Command, json: unknown, human: () => string) => void;
}

// Checked against the route's own query type, so an area the API drops breaks the build here.
const AREAS = [
  'mcp',
  'docs',
  'runtime',
  'flow-interface',
  'setup',
  'other',
] as const satisfies readonly FeedbackArea[];

const instant = z.iso.datetime({ offset: true });

function parseInstant(value: string): string {
  if (!instant.safeParse(value).success) {
    throw new InvalidArgumentError('expected an ISO 8601 instant with a zone, e.g. 2026-01-31T09:00:00Z');
  }
  return value;
}

export function registerFeedbackCommands(program: Command, ctx: FeedbackCommandContext): void {
  const { client, out } = ctx;
  const feedback = program
    .command('feedback')
    .description('read what agents and people reported with send_feedback');

  feedback
    .command('list')
    .description('list feedback, newest first (--json adds details, links and context)')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .addOption(new Option('--area <area>', 'only feedback about this area').choices(AREAS))
    .option('--since <instant>', 'only feedback sent at or after this ISO 8601 instant', parseInstant)
    .option('--limit <n>', 'entries per page (1-200)', parsePositiveInt)
    .option('--cursor <cursor>', 'continue from a previous page')
    .action(
      async (
        opts: { workspace: string; area?: FeedbackArea; since?: string; limit?: number; cursor?: string },
        cmd: Command,
      ) => {
        const page = await client(cmd).listFeedback(opts.workspace, {
          ...(opts.area !== undefined ? { area: opts.area } : {}),
          ...(opts.since !== undefined ? { since: opts.since } : {}),
          ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
          ...(opts.cursor !== undefined ? { cursor: opts.cursor } : {}),
        });
        out(cmd, page, () => {
          const table = renderTable(
            [
              { header: 'CREATED', value: (r) => r.createdAt },
              { header: 'AREA', value: (r) => r.area },
              { header: 'FROM', value: (r) => `${r.principalType}:${r.principalId}` },
              { header: 'FLOW', value: (r) => r.flowSlug },
              { header: 'RUN', value: (r) => r.runId },
              // One line per entry: a summary with line breaks would break the table.
              { header: 'SUMMARY', value: (r) => String(r.summary).replace(/\s+/g, ' ') },
            ],
            page.items,
          );
          return page.nextCursor ? `${table}next page: --cursor ${page.nextCursor}\n` : table;
        });
      },
    );
}
