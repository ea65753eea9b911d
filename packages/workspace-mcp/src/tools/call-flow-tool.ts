import { AppError, isAppError } from '@flowgate/core';
import type { RunResult } from '@flowgate/workspace';
import { z } from 'zod';
import { flowSlugArg, installationIdArg, targetArg, toolNameArg } from '../args.js';
import { includeInstalled } from '../context.js';
import { LIMITS } from '../limits.js';
import { resultView, resultViewSchema, runLinks, runView, runViewSchema } from '../run-outputs.js';
import { defineTool, ToolFailure, textArg } from '../tool.js';
import { runResultUri } from '../uris.js';

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
}).handle(async (args, ctx) => {
  const runs = ctx.workspace.runs;
  let started: Awaited<ReturnType<typeof runs.start>>;
  try {
    started = await runs.start({
      slug: args.flow_slug,
      toolName: args.tool_name,
      invocation: null,
      installationId: args.installation_id ?? null,
      target: args.target ?? null,
      input: args.input,
      idempotencyKey: args.idempotency_key ?? null,
      includeInstalled: includeInstalled(ctx),
      allowDraft: ctx.request.capabilities.has('flows.manage'),
    });
  } catch (error) {
    // Input that does not match the invocation: the paths, nothing started.
    if (isAppError(error) && error.code === 'validation_failed') {
      const issues = (error.issues ?? []).map((i) => ({ path: `input.${i.path}`, message: i.message }));
      throw new ToolFailure('invalid_input', `${error.message}; nothing was started`, { issues });
    }
    throw error;
  }
  let run = started.run;
  let value: RunResult | null = null;
  if (args.wait_ms > 0) {
    const waited = await runs.wait(run.id, args.wait_ms, run);
    if (waited) ({ run, result: value } = waited);
  } else if (run.status === 'completed') {
    // An idempotent retry of a run that already ended.
    value = await runs.result(run.id);
  }
  if (run.status === 'completed' && !value)
    throw new AppError('internal_error', 'a completed run has no result');
  const result = value ? resultView(value, runResultUri(run.id)) : null;
  return {
    output: { run: runView(run), created: started.created, result },
    runId: run.id,
    resourceUris: [run.status === 'completed' ? runResultUri(run.id) : runView(run).resourceUri],
    resultUri: run.status === 'completed' ? runResultUri(run.id) : runView(run).resourceUri,
    content: runLinks(run),
  };
});
