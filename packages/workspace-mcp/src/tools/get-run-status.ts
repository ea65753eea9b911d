import { RUN_STATUSES } from '@flowgate/core';
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
  runView,
  runViewSchema,
} from '../run-outputs.js';
import { defineTool, opaqueArg } from '../tool.js';
import { runResultUri } from '../uris.js';

export const runIdArg = opaqueArg({
  min: 1,
  max: LIMITS.runIdMaxChars,
  description: 'Run id (from call_flow_tool).',
});

export const getRunStatusTool = defineTool({
  name: 'get_run_status',
  title: 'Get run status',
  description:
    `The state of a run: status (${RUN_STATUSES.join(', ')}), timing and ` +
    'error; include_events adds its first events, include_result its result (inline when small, else a ' +
    'preview and URI). Poll it until the status is final (e.g. after call_flow_tool).',
  toolsets: ['read', 'run', 'debug'],
  capabilities: ['runs.read'],
  input: z.strictObject({
    run_id: runIdArg,
    include_events: z.boolean().default(false),
    include_result: z.boolean().default(false),
  }),
  output: z.strictObject({
    run: runViewSchema,
    events: z
      .strictObject({ items: z.array(eventViewSchema), more: z.boolean(), resourceUri: z.string() })
      .nullable(),
    result: resultViewSchema.nullable(),
  }),
  annotations: readOnlyFlowAnnotations,
}).handle(async (args, ctx) => {
  const run = await requireRun(ctx.workspace, args.run_id);
  let events = null;
  if (args.include_events) {
    const page =
      (await ctx.workspace.runs.events(run.id, {
        limit: LIMITS.runEventsPageSize + 1,
        afterId: null,
        stepId: null,
      })) ?? [];
    events = {
      items: page.slice(0, LIMITS.runEventsPageSize).map(eventView),
      more: page.length > LIMITS.runEventsPageSize,
      resourceUri: runEventsUri(run.id),
    };
  }
  let result = null;
  if (args.include_result && run.status === 'completed') {
    const value = await ctx.workspace.runs.result(run.id);
    if (value) result = resultView(value, runResultUri(run.id));
  }
  const view = runView(run);
  const output = { run: view, events, result };
  return {
    output,
    runId: run.id,
    resourceUris: [view.resourceUri],
    resultUri: events ? events.resourceUri : view.resourceUri,
    // Events carry step details of any size: over the result cap the page is cut and `more` says the rest is at
    // the events resource.
    bound: (budget) =>
      events
        ? headWithin(events.items, budget, (items) => ({
            ...output,
            events: { ...events, items, more: events.more || items.length < events.items.length },
          }))
        : null,
  };
});
