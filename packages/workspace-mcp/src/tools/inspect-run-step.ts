import { AppError } from '@flowgate/core';
import { z } from 'zod';
import { readOnlyFlowAnnotations } from '../args.js';
import { LIMITS } from '../limits.js';
import { headWithin } from '../result.js';
import {
  eventView,
  eventViewSchema,
  requireRun,
  resultView,
  resultViewSchema,
  runEventsUri,
  stepView,
  stepViewSchema,
} from '../run-outputs.js';
import { defineTool, opaqueArg } from '../tool.js';
import { runUri } from '../uris.js';
import { runIdArg } from './get-run-status.js';

/** Steps a run can have at most (the engine's step limit bounds it); read whole to summarise. */
const MAX_STEPS_READ = 10_000;

export const inspectRunStepTool = defineTool({
  name: 'inspect_run_step',
  title: 'Inspect run step',
  description:
    "One step of a run: its status, attempts, timing and error, a summary of the run's steps with their ids, and " +
    'optionally its events and a bounded preview of its result (include_step_results). Never shows other ' +
    "steps' outputs. Use it on the failing step of a failed run.",
  toolsets: ['read', 'run', 'debug'],
  capabilities: ['runs.read'],
  input: z.strictObject({
    run_id: runIdArg,
    step_id: opaqueArg({ min: 1, max: LIMITS.stepIdMaxChars, description: 'e.g. "lookup" or "notify[2]".' }),
    include_step_results: z.boolean().default(false),
    include_events: z.boolean().default(false),
  }),
  output: z.strictObject({
    runId: z.string(),
    step: stepViewSchema,
    result: resultViewSchema.nullable(),
    events: z.array(eventViewSchema).nullable(),
    stepsSummary: z.strictObject({
      total: z.number().int(),
      byStatus: z.record(z.string(), z.number().int()),
      availableStepIds: z.array(z.string()),
      truncated: z.boolean(),
    }),
    resourceUri: z.string(),
  }),
  annotations: readOnlyFlowAnnotations,
}).handle(async (args, ctx) => {
  const run = await requireRun(ctx.workspace, args.run_id);
  const steps =
    (await ctx.workspace.runs.steps(run.id, { limit: MAX_STEPS_READ, includeResults: false })) ?? [];
  const byStatus: Record<string, number> = {};
  for (const s of steps) byStatus[s.status] = (byStatus[s.status] ?? 0) + 1;
  const stepsSummary = {
    total: steps.length,
    byStatus,
    availableStepIds: steps.slice(0, LIMITS.stepIdsListed).map((s) => s.stepId),
    truncated: steps.length > LIMITS.stepIdsListed,
  };
  const step = steps.find((s) => s.stepId === args.step_id);
  if (!step) {
    throw new AppError(
      'not_found',
      `Run ${run.id} has no step ${args.step_id}; its steps: ${stepsSummary.availableStepIds.join(', ') || 'none yet'}`,
    );
  }
  let result = null;
  if (args.include_step_results && step.status === 'completed') {
    // Only this step's result, read on its own: other steps' outputs never come along.
    const own = await ctx.workspace.runs.step(run.id, step.stepId, { includeResult: true });
    if (own && 'result' in own)
      result = resultView({ mimeType: 'application/json', value: own.result }, null);
  }
  const events = args.include_events
    ? (
        (await ctx.workspace.runs.events(run.id, {
          limit: LIMITS.runEventsPageSize,
          afterId: null,
          stepId: step.stepId,
        })) ?? []
      ).map(eventView)
    : null;
  const output = {
    runId: run.id,
    step: stepView(step),
    result,
    events,
    stepsSummary,
    resourceUri: runUri(run.id),
  };
  return {
    output,
    runId: run.id,
    resourceUris: [runUri(run.id)],
    resultUri: runEventsUri(run.id),
    // Over the result cap the step's events are cut from the end (all of them are at the run's events resource).
    bound: (budget) => (events ? headWithin(events, budget, (head) => ({ ...output, events: head })) : null),
  };
});
