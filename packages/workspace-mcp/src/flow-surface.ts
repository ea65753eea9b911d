/**
 * The per-flow endpoint (`/api/workspaces/{ws}/flows/{slug}/mcp`): one flow's own `:mcp` interfaces as direct tools —
 * name from `:tool-name`, input schema from the invocation, calls starting a run like call_flow_tool — plus
 * get_run_status and inspect_run_step. Built per request from the definition that runs now (the live version, or
 * the version an installation runs), under the same capabilities, narrowing, metadata-trust rules and audit as the
 * workspace endpoint.
 */

import { isAppError } from '@flowgate/core';
import { invocationInputSchema } from '@flowgate/flows';
import { isTrusted, type OpenFlow, type RunRecord, type RunResult, trustFor } from '@flowgate/workspace';
import { z } from 'zod';
import { TOOL_NAMES } from './catalog.js';
import { includeInstalled, type ToolContext } from './context.js';
import { waitForRun } from './progress.js';
import { publishOutputSchema } from './published-schema.js';
import { requireRun, resultView, resultViewSchema, runLinks, runView, runViewSchema } from './run-outputs.js';
import { type McpSurface, surfaceOf } from './surface.js';
import {
  type AnyToolDefinition,
  type JsonSchemaObject,
  publishAnnotations,
  TASK_EXECUTION,
  type ToolDescriptor,
  ToolFailure,
} from './tool.js';
import { getRunStatusTool } from './tools/get-run-status.js';
import { inspectRunStepTool } from './tools/inspect-run-step.js';
import { runResultUri } from './uris.js';
import { withWaitSlot } from './waits.js';

/** A direct flow tool waits this long for its run before answering with the run id (no wait argument fits its schema). */
export const FLOW_TOOL_WAIT_MS = 10_000;

const RUN_TOOLS: readonly AnyToolDefinition[] = [getRunStatusTool, inspectRunStepTool];

const outputSchema = z.strictObject({
  run: runViewSchema,
  created: z.boolean(),
  result: resultViewSchema.nullable(),
});
// Published like every catalog tool's (published-schema.ts), so tool-error results validate against it too.
const OUTPUT_JSON: JsonSchemaObject = (() => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(outputSchema, { io: 'output' }) as Record<
    string,
    unknown
  >;
  return publishOutputSchema(rest) as JsonSchemaObject;
})();

/** Any object: the run's own check (the invocation's JSON Schema) decides, with paths in its errors. */
const anyInput = z.record(z.string(), z.unknown());

function directTool(
  open: OpenFlow,
  iface: { toolName: string; invocation: string; title: string | null; description: string | null },
  schema: JsonSchemaObject,
  trusted: boolean,
): AnyToolDefinition {
  const flow = open.record;
  const title = trusted && iface.title ? iface.title : iface.toolName;
  const description =
    trusted && iface.description
      ? `${iface.description} (Flow ${flow.slug}: runs it and answers with the run and, if done within ${FLOW_TOOL_WAIT_MS / 1000} s, its result.)`
      : `Runs the ${iface.toolName} interface of flow ${flow.slug} with this input and answers with the run and, if it ` +
        `finishes within ${FLOW_TOOL_WAIT_MS / 1000} s, its result; otherwise poll get_run_status. The flow's own ` +
        'description is withheld because it is untrusted: rely on the input schema. Runs have side effects: ask first.';
  const annotations = {
    title,
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  };
  const descriptor: ToolDescriptor = {
    name: iface.toolName,
    title,
    description,
    inputSchema: schema,
    outputSchema: OUTPUT_JSON,
    annotations: publishAnnotations(annotations),
    execution: TASK_EXECUTION,
  };
  // Shared by the plain call and the task-augmented one (tasks.ts), so both answer the same way.
  const start = async (args: unknown, ctx: ToolContext, waits = false) => {
    try {
      return await ctx.workspace.runs.start({
        slug: flow.slug,
        toolName: iface.toolName,
        invocation: null,
        installationId: flow.installation?.id ?? null,
        target: null,
        input: args,
        idempotencyKey: null,
        includeInstalled: includeInstalled(ctx),
        allowDraft: false,
        waits,
        onSecretInputs: (names) => ctx.secretArgs?.note(names, null),
      });
    } catch (error) {
      if (isAppError(error) && error.code === 'validation_failed') {
        throw new ToolFailure('invalid_input', `${error.message}; nothing was started`, {
          issues: error.issues ?? [],
        });
      }
      throw error;
    }
  };
  return {
    name: iface.toolName,
    title,
    description,
    toolsets: ['run'],
    capabilities: ['flows.read', 'flows.run'],
    mutating: true,
    readOnlyExempt: false,
    input: anyInput,
    output: outputSchema,
    annotations,
    inputSchema: schema,
    outputSchema: OUTPUT_JSON,
    descriptor,
    task: { start, settle: async (run, ctx) => outcomeFor(run, true, await resultOf(run, ctx)) },
    handler: (args, ctx) =>
      // Every call waits: the slot is taken before the start, so a refusal starts nothing.
      withWaitSlot(ctx.request, async () => {
        const started = await start(args, ctx, true);
        const waited = await waitForRun(ctx, started.run.id, FLOW_TOOL_WAIT_MS, started.run);
        const run = waited?.run ?? (await requireRun(ctx.workspace, started.run.id));
        return outcomeFor(run, started.created, waited?.result ?? null);
      }),
  };
}

async function resultOf(run: RunRecord, ctx: ToolContext): Promise<RunResult | null> {
  return run.status === 'completed' ? await ctx.workspace.runs.result(run.id) : null;
}

function outcomeFor(run: RunRecord, created: boolean, value: RunResult | null) {
  return {
    output: {
      run: runView(run),
      created,
      result: value ? resultView(value, runResultUri(run.id)) : null,
    },
    runId: run.id,
    resourceUris: [runView(run).resourceUri],
    content: runLinks(run),
  };
}

/**
 * The surface of one flow, from the definition that runs now; null when the flow has nothing released to run.
 * Interfaces named like the run tools are left out (the run tools win): a flow cannot shadow them. `reopen` resolves
 * the flow again (an OpenFlow keeps the definition it was opened with), so a listen stream can see a release.
 */
export async function flowSurface(
  open: OpenFlow,
  reopen?: () => Promise<OpenFlow | null>,
): Promise<McpSurface | null> {
  const definition = await open.definitionFor('live');
  if (!definition) return null;
  const trusted = isTrusted(trustFor(open.record.optIn, definition));
  const reserved = new Set(RUN_TOOLS.map((t) => t.name));
  const tools: AnyToolDefinition[] = [];
  for (const m of definition.model.interfaces.mcp) {
    if (reserved.has(m.toolName) || tools.some((t) => t.name === m.toolName)) continue;
    const schema = invocationInputSchema(definition.model, m.invocation, { trusted });
    if (!schema) continue;
    tools.push(
      directTool(
        open,
        {
          toolName: m.toolName,
          invocation: m.invocation,
          title: m.title ?? null,
          description: m.description ?? null,
        },
        schema as unknown as JsonSchemaObject,
        trusted,
      ),
    );
  }
  const slug = open.record.slug;
  return surfaceOf([...tools, ...RUN_TOOLS], {
    resources: false,
    prompts: false,
    cacheLists: false,
    // One narrowing header set works on both endpoints (e.g. a client config shared by them).
    alsoNarrowable: TOOL_NAMES,
    flowSlug: slug,
    ...(reopen
      ? {
          reload: async () => {
            const again = await reopen();
            return again ? await flowSurface(again, reopen) : null;
          },
        }
      : {}),
    instructions: (workspaceId) =>
      `Flowgate MCP server for the flow ${slug} of workspace ${workspaceId}: each tool runs one of its interfaces; ` +
      'get_run_status and inspect_run_step follow a run. Ask the user before starting runs.',
  });
}
