import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isFinalRunStatus, RUN_STATUSES, type RunStatus } from '@flowgate/core';
import { type Command, Option } from 'commander';
import type { AdminClient, RunDetail, RunSummary, StartRunInput } from './admin-client.js';
import { CliError, CliExit, type CliIo } from './cli-io.js';
import { renderSummary, renderTable } from './output.js';
import { parsePositiveInt, parseSlug, parseWorkspaceId, requireSlug } from './parsers.js';

/** `flowgate runs list|get|cancel|start`, over the admin API. Registered by program.ts. */

export interface RunCommandContext {
  io: CliIo;
  client: (cmd: Command) => AdminClient;
  out: (cmd: Command, json: unknown, human: () => string) => void;
  /** Pause between polls of `runs start --wait`; tests shorten it. */
  sleep?: (ms: number) => Promise<void>;
}

/** An input document read from a file or the command line; larger inputs belong in a flow's connections. */
const MAX_INPUT_BYTES = 256 * 1024;

export function registerRunCommands(program: Command, ctx: RunCommandContext): void {
  const { io, client, out } = ctx;
  const sleep = ctx.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const runs = program.command('runs').description('start, list, read and cancel flow runs');

  runs
    .command('list')
    .description('list runs, newest first')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .addOption(new Option('--status <status>', 'only runs in this status').choices(RUN_STATUSES))
    .option('--flow <slug>', 'only runs of this flow', parseSlug)
    .option('--limit <n>', 'runs per page (1-200)', parsePositiveInt)
    .option('--cursor <cursor>', 'continue from a previous page')
    .action(
      async (
        opts: { workspace: string; status?: RunStatus; flow?: string; limit?: number; cursor?: string },
        cmd: Command,
      ) => {
        const page = await client(cmd).listRuns(opts.workspace, {
          ...(opts.status !== undefined ? { status: opts.status } : {}),
          ...(opts.flow !== undefined ? { flow: opts.flow } : {}),
          ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
          ...(opts.cursor !== undefined ? { cursor: opts.cursor } : {}),
        });
        out(cmd, page, () => {
          const table = renderTable(
            [
              { header: 'RUN', value: (r) => r.runId },
              { header: 'FLOW', value: (r) => r.flowSlug },
              { header: 'VERSION', value: (r) => r.version ?? r.target },
              { header: 'STATUS', value: (r) => r.status },
              { header: 'CREATED', value: (r) => r.createdAt },
              { header: 'ERROR', value: (r) => (r.error as RunSummary['error'])?.code },
            ],
            page.items,
          );
          return page.nextCursor ? `${table}next page: --cursor ${page.nextCursor}\n` : table;
        });
      },
    );

  runs
    .command('get <runId>')
    .description('show a run: status, steps, events and result')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .action(async (runId: string, opts: { workspace: string }, cmd: Command) => {
      const run = await client(cmd).getRun(opts.workspace, runId);
      out(cmd, run, () => renderRun(run));
    });

  runs
    .command('cancel <runId>')
    .description('cancel a queued, running or waiting run (a finished run is left as it is)')
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .action(async (runId: string, opts: { workspace: string }, cmd: Command) => {
      const run = await client(cmd).cancelRun(opts.workspace, runId);
      out(cmd, run, () =>
        isFinalRunStatus(run.status)
          ? `${run.runId} is ${run.status}\n`
          : `${run.runId}: cancellation requested (status ${run.status})\n`,
      );
    });

  runs
    .command('start <slug>')
    .description("queue a run of a flow's invocation with a JSON input")
    .requiredOption('--workspace <id>', 'workspace id', parseWorkspaceId)
    .option('--input <json>', 'the input as a JSON object (default {})')
    .option('--input-file <path>', 'read the JSON input from a file')
    .addOption(
      new Option('--target <target>', 'run the live version or the draft').choices(['live', 'draft']),
    )
    .option('--installation <id>', 'run an installed flow through this installation')
    .option('--invocation <name>', 'the invocation to call (default: default, else the first)')
    .option('--idempotency-key <key>', 'a retried start with the same key returns the same run')
    .option('--wait', 'wait until the run ends and print it; exit 1 unless it completed')
    .option(
      '--timeout <seconds>',
      'with --wait: give up waiting after this long (default 60)',
      parsePositiveInt,
    )
    .action(
      async (
        slug: string,
        opts: {
          workspace: string;
          input?: string;
          inputFile?: string;
          target?: 'live' | 'draft';
          installation?: string;
          invocation?: string;
          idempotencyKey?: string;
          wait?: boolean;
          timeout?: number;
        },
        cmd: Command,
      ) => {
        const body: StartRunInput = { input: await readInput(io, opts) };
        if (opts.target) body.target = opts.target;
        if (opts.installation) body.installationId = opts.installation;
        if (opts.invocation) body.invocation = opts.invocation;
        if (opts.idempotencyKey) body.idempotencyKey = opts.idempotencyKey;
        const api = client(cmd);
        const started = await api.startRun(opts.workspace, requireSlug(slug), body);
        if (!opts.wait) {
          out(cmd, started, () =>
            started.created
              ? `Queued ${started.runId} (${started.status})\n`
              : `${started.runId} already exists for this idempotency key (${started.status})\n`,
          );
          return;
        }
        const deadline = Date.now() + (opts.timeout ?? 60) * 1000;
        let pause = 50;
        let run = await api.getRun(opts.workspace, started.runId);
        // A run parked in a sleep that outlasts the wait will not end in time: report it now.
        const parkedPastDeadline = () =>
          run.status === 'waiting' && run.wakeAt !== null && Date.parse(run.wakeAt) > deadline;
        while (!isFinalRunStatus(run.status) && Date.now() < deadline && !parkedPastDeadline()) {
          await sleep(pause);
          pause = Math.min(pause * 2, 1000);
          run = await api.getRun(opts.workspace, started.runId);
        }
        out(cmd, run, () => renderRun(run));
        if (!isFinalRunStatus(run.status)) {
          const until = run.status === 'waiting' && run.wakeAt ? ` until ${run.wakeAt}` : '';
          // The run printed above is the answer; the failure line says why the command did not finish it.
          throw new CliError(
            'run_not_finished',
            `${run.runId} is ${run.status}${until}; follow it with: flowgate runs get ${run.runId}`,
          );
        }
        if (run.status !== 'completed') throw new CliExit(1);
      },
    );
}

/** Summary, steps and the result, as a person reads a run. */
export function renderRun(run: RunDetail): string {
  const summary = renderSummary({
    run: run.runId,
    flow: run.flowSlug,
    version: run.version ?? run.target,
    installation: run.installationId,
    invocation: run.invocation,
    status: run.status,
    error: run.error ? `${run.error.code}: ${run.error.message}` : null,
    attempts: run.attempts,
    usage: `${run.usage.steps} steps, ${run.usage.httpCalls} http calls, ${run.usage.llmTokens} llm tokens`,
    created: run.createdAt,
    finished: run.finishedAt,
    wakeAt: run.wakeAt,
  });
  const steps = run.steps.length
    ? `\nsteps:\n${renderTable(
        [
          { header: 'STEP', value: (s) => s.stepId },
          { header: 'TYPE', value: (s) => s.type },
          { header: 'STATUS', value: (s) => s.status },
          { header: 'ATTEMPTS', value: (s) => s.attempts },
          { header: 'ERROR', value: (s) => (s.error as { code: string } | null)?.code },
        ],
        run.steps,
      )}`
    : '';
  const result = run.result
    ? `\nresult (${run.result.mimeType}):\n${
        typeof run.result.value === 'string' ? run.result.value : JSON.stringify(run.result.value, null, 2)
      }\n`
    : '';
  return summary + steps + result;
}

async function readInput(
  io: CliIo,
  opts: { input?: string; inputFile?: string },
): Promise<Record<string, unknown>> {
  if (opts.input !== undefined && opts.inputFile !== undefined) {
    throw new CliError('invalid_request', 'give either --input or --input-file, not both');
  }
  let text = opts.input;
  if (opts.inputFile !== undefined) {
    text = await readFile(resolve(io.cwd, opts.inputFile), 'utf8').catch(() => {
      throw new CliError('invalid_request', `cannot read ${opts.inputFile}`);
    });
  }
  if (text === undefined) return {};
  if (Buffer.byteLength(text) > MAX_INPUT_BYTES) {
    throw new CliError('payload_too_large', `the input is larger than ${MAX_INPUT_BYTES} bytes`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CliError('invalid_request', 'the input is not valid JSON');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliError('invalid_request', 'the input must be a JSON object');
  }
  return value as Record<string, unknown>;
}
