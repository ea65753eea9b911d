import { AppError, isAppError } from '@flowgate/core';
import type { RunRecord, RunResult } from '@flowgate/workspace';
import { z } from 'zod';
import { flowSlugArg, installationIdArg, targetArg, toolNameArg } from '../args.js';
import type { ToolContext } from '../context.js';
import { includeInstalled } from '../context.js';
import { LIMITS } from '../limits.js';
import { waitForRun } from '../progress.js';
import { resultView, resultViewSchema, runLinks, runView, runViewSchema } from '../run-outputs.js';
import { defineTool, ToolFailure, type ToolOutcome, textArg } from '../tool.js';
import { runResultUri } from '../uris.js';
import { withWaitSlot } from '../waits.js';

interface CallArgs {
  flow_slug: string;
  tool_name: string;
  input: Record<string, unknown>;
  installation_id?: string | undefined;
  target?: 'live' | 'draft' | undefined;
  idempotency_key?: string | undefined;
}

interface CallOutput {
  run: ReturnType<typeof runView>;
  created: boolean;
  result: ReturnType<typeof resultView> | null;
}

/** Queues the run; shared by the plain call and the task-augmented one (which answers before it ends). */
async function startRun(
  args: CallArgs,
  ctx: ToolContext,
  waits = false,
): Promise<{ run: RunRecord; created: boolean }> {
  try {
    return await ctx.workspace.runs.start({
      slug: args.flow_slug,
      toolName: args.tool_name,
      invocation: null,
      installationId: args.installation_id ?? null,
      target: args.target ?? null,
      input: args.input,
      idempotencyKey: args.idempotency_key ?? null,
      includeInstalled: includeInstalled(ctx),
      allowDraft: ctx.request.capabilities.has('flows.manage'),
      waits,
      onSecretInputs: (names) => ctx.secretArgs?.note(names, 'input'),
    });
  } catch (error) {
    // Input that does not match the invocation: the paths, nothing started.
    if (isAppError(error) && error.code === 'validation_failed') {
      const issues = (error.issues ?? []).map((i) => ({ path: `input.${i.path}`, message: i.message }));
      throw new ToolFailure('invalid_input', `${error.message}; nothing was started`, { issues });
    }
    throw error;
  }
}

/** The answer for a run as seen now: one place, so a task's final result is exactly this tool's result. */
function outcomeFor(run: RunRecord, created: boolean, value: RunResult | null): ToolOutcome<CallOutput> {
  if (run.status === 'completed' && !value)
    throw new AppError('internal_error', 'a completed run has no result');
  const result = value ? resultView(value, runResultUri(run.id)) : null;
  const uri = run.status === 'completed' ? runResultUri(run.id) : runView(run).resourceUri;
  return {
    output: { run: runView(run), created, result },
    runId: run.id,
    resourceUris: [uri],
    resultUri: uri,
    content: runLinks(run),
  };
}

export const callFlowToolTool = defineTool({
  name: 'call_flow_tool',
  title: 'Call flow tool',
  description:
    "Run a flow tool: starts a run with input (per inspect_flow_tool's schema); returns the run and links to " +
    'it and its /result. With wait_ms the result comes inline if the run ends in time; else poll get_run_status. ' +
    'Bad input starts nothing. target "draft" needs flows.manage. Reuse idempotency_key on retries. Runs have ' +
    'side effects: ask the user first.',
  toolsets: ['run'],
  capabilities: ['flows.read', 'flows.run'],
  input: z.strictObject({
    flow_slug: flowSlugArg,
    tool_name: toolNameArg,
    input: z
      .record(textArg({ min: 1, max: LIMITS.inputKeyMaxChars }), z.unknown())
      .refine((o) => Object.keys(o).length <= LIMITS.inputMaxKeys, {
        message: `at most ${LIMITS.inputMaxKeys} input fields`,
      })
      .meta({ maxProperties: LIMITS.inputMaxKeys })
      .default({})
      .describe("Per the tool's input schema."),
    installation_id: installationIdArg.optional(),
    target: targetArg.optional(),
    wait_ms: z
      .number()
      .int()
      .min(0)
      .max(LIMITS.callFlowToolMaxWaitMs)
      .default(0)
      .describe('Milliseconds to wait for the run to finish.'),
    idempotency_key: textArg({ min: 1, max: LIMITS.idempotencyKeyMaxChars })
      .optional()
      .describe('Same key, same run: makes a retry safe.'),
  }),
  output: z.strictObject({
    run: runViewSchema,
    /** False when idempotency_key matched an earlier run. */
    created: z.boolean(),
    result: resultViewSchema.nullable(),
  }),
  // Flows call outside systems and may change them; a retry without an idempotency key starts another run.
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  task: {
    start: startRun,
    settle: async (run, ctx) =>
      outcomeFor(run, true, run.status === 'completed' ? await ctx.workspace.runs.result(run.id) : null),
  },
}).handle(async (args, ctx) => {
  if (args.wait_ms > 0) {
    // The slot is taken before the start: a caller over its bound is refused with nothing started.
    return await withWaitSlot(ctx.request, async () => {
      const started = await startRun(args, ctx, true);
      const waited = await waitForRun(ctx, started.run.id, args.wait_ms, started.run);
      return outcomeFor(waited?.run ?? started.run, started.created, waited?.result ?? null);
    });
  }
  const started = await startRun(args, ctx);
  // An idempotent retry of a run that already ended.
  const value = started.run.status === 'completed' ? await ctx.workspace.runs.result(started.run.id) : null;
  return outcomeFor(started.run, started.created, value);
});
