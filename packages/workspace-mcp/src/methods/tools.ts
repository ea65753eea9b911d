/**
 * tools/list and tools/call. A call finds the tool on the surface, asks the policy whether the caller may see it
 * (a hidden tool answers `tool_blocked` with its blockers), validates the arguments, runs the handler (or, asked for
 * a task, starts the run) and bounds the answer (result.ts); every expected failure is an `isError` result.
 */
import { isAppError, isQuotaExceeded, type QuotaExceeded } from '@flowgate/core';
import { closest } from '@flowgate/flows';
import { InputRequired } from '../approval.js';
import { argumentIssues } from '../args.js';
import { auditPreview, auditText, maskSecretInputs } from '../audit-preview.js';
import type { McpAuditEntry } from '../context.js';
import { paginate } from '../cursor.js';
import { toolIconBase } from '../icons.js';
import { type Narrowing, parseNarrowingParams } from '../narrowing.js';
import { describeBlockers, evaluateTool, type PolicyContext, visibilityKey } from '../policy.js';
import { withCallProgress } from '../progress.js';
import { adaptContentForVersion, clip, invalidParams, isJsonObject } from '../protocol.js';
import {
  type CallToolResult,
  DEFAULT_MAX_RESULT_BYTES,
  successResult,
  errorResult as toolErrorResult,
} from '../result.js';
import type { Blocker, ToolErrorContent } from '../schemas.js';
import type { McpSurface } from '../surface.js';
import { sealTaskId, taskV1, taskV2 } from '../tasks.js';
import { traceToolExecution } from '../telemetry.js';
import { type AnyToolDefinition, InvalidArguments, ToolFailure, type ToolOutcome } from '../tool.js';
import { TooManyWaits } from '../waits.js';
import { type AuditedCall, audited, type CallSubject } from './audited.js';
import { type MethodHandler, type Params, RawJson, type Scope } from './scope.js';

function narrowingFromParams(params: Params, surface: McpSurface): Narrowing | null {
  const parsed = parseNarrowingParams(params, surface.toolNames);
  if (parsed === null) return null;
  if (!parsed.ok)
    throw invalidParams(parsed.error.message, { unknown: parsed.error.unknown, valid: parsed.error.valid });
  return parsed.narrowing;
}

/**
 * The first (only) page of tools/list for a caller: the bytes tools/list answers. A listen stream compares these to
 * tell a changed list (listen.ts), so the two can never disagree.
 */
export function listedTools(
  surface: McpSurface,
  ctx: PolicyContext,
  iconBase: string | null,
  extra?: Narrowing | null,
): { json: string; bytes: Uint8Array } {
  return surface.toolsList(visibilityKey(surface.tools, ctx, extra), iconBase);
}

function listTools(params: Params, scope: Scope): RawJson | unknown {
  const surface = scope.surface;
  const extra = narrowingFromParams(params, surface);
  const iconBase = toolIconBase(scope.protocolVersion, scope.publicBaseUrl);
  if (params.cursor === undefined) {
    const { json, bytes } = listedTools(surface, scope.request, iconBase, extra);
    return new RawJson(json, bytes);
  }
  const key = visibilityKey(surface.tools, scope.request, extra);
  // Every list fits one page, so no cursor is ever issued; a cursor is checked anyway and refused when bad.
  const hidden = surface.hiddenFor(key);
  const descriptors = surface.tools
    .filter((_, i) => key[i] === '1')
    .map((t) => surface.listed(t, hidden, iconBase));
  const page = paginate(descriptors, scope.cursors, 'tools/list', params.cursor, 100);
  if (!page) throw invalidParams('Invalid cursor');
  return page.nextCursor ? { tools: page.items, nextCursor: page.nextCursor } : { tools: page.items };
}

/** The cap on each side of one tools/call result, in bytes (the gateway's `FLOWGATE_MCP_MAX_RESULT_BYTES`). */
function maxResultBytes(scope: Scope): number {
  return scope.request.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
}

function toolError(content: ToolErrorContent, maxBytes = DEFAULT_MAX_RESULT_BYTES): CallToolResult {
  return toolErrorResult(content, maxBytes);
}

export function blockedResult(tool: string, blockers: Blocker[]): CallToolResult {
  const message = describeBlockers(tool, blockers);
  return toolError({ error: { code: 'tool_blocked', message }, details: { tool, blockers } });
}

function invalidArgumentsResult(tool: string, issues: { path: string; message: string }[]): CallToolResult {
  const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  return toolError({
    error: { code: 'invalid_arguments', message: `Invalid arguments for ${tool}: ${summary}` },
    details: { issues },
  });
}

/** The workspace used up a quota: which, its limit and when it resets, with nothing done. */
export function quotaExceededResult(
  error: QuotaExceeded,
  maxBytes = DEFAULT_MAX_RESULT_BYTES,
): CallToolResult {
  return toolError(
    { error: { code: error.code, message: error.message }, details: { ...error.details } },
    maxBytes,
  );
}

/** The verdict of one call: what the client gets, and what the audit records. */
export interface CallVerdict {
  /** A CallToolResult, or for a task-augmented call the created task. */
  result: CallToolResult | Record<string, unknown>;
  outcome: McpAuditEntry['outcome'];
  errorCode: string | null;
  blockers: Blocker[] | null;
  runId: string | null;
  resourceUris: string[];
}

function failed(result: CallToolResult, errorCode: string): CallVerdict {
  return { result, outcome: 'error', errorCode, blockers: null, runId: null, resourceUris: [] };
}

/** An expected failure of a handler as the `isError` result it is answered with; `null` for anything else. */
function expectedFailure(tool: AnyToolDefinition, error: unknown, scope: Scope): CallVerdict | null {
  if (error instanceof InvalidArguments)
    return failed(invalidArgumentsResult(tool.name, error.issues), 'invalid_arguments');
  if (isAppError(error) && error.code === 'invalid_cursor')
    return failed(
      invalidArgumentsResult(tool.name, [{ path: 'cursor', message: error.message }]),
      'invalid_arguments',
    );
  if (isQuotaExceeded(error)) return failed(quotaExceededResult(error, maxResultBytes(scope)), error.code);
  if (error instanceof TooManyWaits)
    return failed(
      toolError(
        {
          error: { code: error.code, message: error.message },
          details: { bound: error.scope, limit: error.limit },
        },
        maxResultBytes(scope),
      ),
      error.code,
    );
  if (error instanceof ToolFailure)
    return failed(
      toolError(
        { error: { code: error.code, message: error.message }, details: error.details },
        maxResultBytes(scope),
      ),
      error.code,
    );
  if (isAppError(error)) {
    const content: ToolErrorContent = error.issues
      ? { error: { code: error.code, message: error.message }, details: { issues: error.issues } }
      : { error: { code: error.code, message: error.message } };
    return failed(toolError(content, maxResultBytes(scope)), error.code);
  }
  return null;
}

/**
 * Runs a visible tool's handler and turns every expected failure into an `isError` result. With `task`, the tool's
 * task support starts the run and the answer is the task; failures before the start are answered as without it.
 */
async function runTool(
  tool: AnyToolDefinition,
  args: unknown,
  scope: Scope,
  asTask = false,
): Promise<CallVerdict> {
  const parsed = tool.input.safeParse(args);
  if (!parsed.success)
    return failed(
      invalidArgumentsResult(tool.name, argumentIssues(tool.input, parsed.error)),
      'invalid_arguments',
    );
  let outcome: ToolOutcome<unknown>;
  try {
    if (asTask && tool.task) return await createTask(tool, parsed.data, scope);
    outcome = await tool.handler(parsed.data, scope);
  } catch (error) {
    // The tool asks the user first (2026-07-28 multi round-trip): nothing was done, the client retries.
    if (error instanceof InputRequired)
      return {
        result: error.toResult(),
        outcome: 'ok',
        errorCode: null,
        blockers: null,
        runId: null,
        resourceUris: [],
      };
    const verdict = expectedFailure(tool, error, scope);
    if (verdict) return verdict;
    throw error;
  }
  return finishOutcome(tool, outcome, scope);
}

/** Turns a handler's outcome into the bounded CallToolResult (result.ts): the one path every tool answer takes. */
export function finishOutcome(
  tool: AnyToolDefinition,
  outcome: ToolOutcome<unknown>,
  scope: Scope,
): CallVerdict {
  // Clients validate structuredContent against the advertised schema; never send what would fail there.
  const checked = tool.output.safeParse(outcome.output);
  if (!checked.success) {
    throw new Error(`${tool.name} produced output that does not match its schema: ${checked.error.message}`);
  }
  const extra = outcome.content ? adaptContentForVersion(outcome.content, scope.protocolVersion) : [];
  const bound = outcome.bound;
  const result = successResult({
    tool: tool.name,
    output: outcome.output as Record<string, unknown>,
    resourceUri: outcome.resultUri ?? null,
    extra,
    maxBytes: maxResultBytes(scope),
    bound: bound ? (budget) => bound(budget) as Record<string, unknown> | null : undefined,
    valid: (output) => tool.output.safeParse(output).success,
  });
  // The tool ran (a mutating one did its work) but its answer was withheld: audited as that error.
  const withheld = result.isError === true;
  return {
    result,
    outcome: withheld ? 'error' : 'ok',
    errorCode: withheld ? 'result_too_large' : null,
    blockers: null,
    runId: outcome.runId ?? null,
    resourceUris: outcome.resourceUris ?? [],
  };
}

/**
 * Whether this call asks for a task: 2025-11-25 per call (`params.task`; its `ttl` is overridden by TASK_TTL_MS, as
 * the receiver may), 2026-07-28 by the declared extension.
 */
function wantsTask(params: Params, scope: Scope): boolean {
  if (scope.tasks === null) return false;
  if (scope.tasks.generation === 'v2') return scope.tasks.declared;
  return isJsonObject(params.task);
}

async function createTask(tool: AnyToolDefinition, args: unknown, scope: Scope): Promise<CallVerdict> {
  const support = tool.task;
  if (!support) throw new Error(`${tool.name} has no task support`);
  const { run } = await support.start(args, scope);
  const taskId = sealTaskId(scope.taskIds, run.id);
  const result =
    scope.tasks?.generation === 'v2'
      ? { ...taskV2(taskId, run), resultType: 'task' }
      : { task: taskV1(taskId, run) };
  return { result, outcome: 'ok', errorCode: null, blockers: null, runId: run.id, resourceUris: [] };
}

/** The call's arguments as sent (absent or null: none). */
function argumentsOf(params: Params): unknown {
  return params.arguments === undefined || params.arguments === null ? {} : params.arguments;
}

function toolCallSubject(params: Params, scope: Scope): CallSubject {
  const name = params.name;
  if (typeof name !== 'string' || name.length === 0) throw invalidParams('params.name must be a tool name');
  const args = argumentsOf(params);
  return {
    kind: 'tools/call',
    action: auditText(name, 128),
    // Secret-typed flow inputs go first, whatever their names: key-name redaction alone would keep `pw`.
    arguments: () => {
      const masked = maskSecretInputs(args, scope.secretArgs.paths);
      const preview = auditPreview(masked.args, masked.knownSecrets);
      // Who approved a change (or that approval was asked for) is part of what the row records.
      const approval = scope.approval.auditNote();
      if (approval === null) return preview;
      return isJsonObject(preview) ? { ...preview, approval } : { arguments: preview, approval };
    },
  };
}

/**
 * Counts an admitted call against the workspace's `toolCallsPerDay` quota before any work: null when it may go on,
 * else the refusal it is answered with.
 */
async function admitted(scope: Scope): Promise<CallVerdict | null> {
  const limit = scope.request.workspacePolicy.quotas?.toolCallsPerDay ?? null;
  // Without a quota (the common case) the call costs nothing here, not even opening the workspace.
  if (limit === null) return null;
  try {
    await scope.workspace.quotas.admitToolCall(limit);
    return null;
  } catch (error) {
    if (!isQuotaExceeded(error)) throw error;
    return failed(quotaExceededResult(error, maxResultBytes(scope)), error.code);
  }
}

async function callTool(params: Params, scope: Scope, call: AuditedCall): Promise<unknown> {
  const name = params.name as string;
  const args = argumentsOf(params);
  const tool = scope.surface.find(name);
  // Only a name this endpoint serves: made-up names must not become usage rows.
  if (tool) scope.verdict.tool = name;
  if (!tool) {
    const near = closest(
      name,
      scope.surface.tools.map((t) => t.name),
    );
    throw call.fail(
      'unknown_tool',
      invalidParams(
        `Unknown tool: ${clip(name, 128)}${near === undefined ? '' : `; did you mean ${near}?`}`,
        near === undefined ? { tool: clip(name, 128) } : { tool: clip(name, 128), didYouMean: near },
      ),
    );
  }
  scope.approval.receive(params);
  const evaluation = evaluateTool(tool, scope.request);
  // A tool without task support is answered as usual (it never advertised `execution.taskSupport`).
  const asTask = wantsTask(params, scope) && tool.task !== undefined;
  // A task-augmented call is the task's creation: its own kind, with the run it started.
  if (asTask) call.kind = 'tasks/create';
  const verdict: CallVerdict = evaluation.visible
    ? ((await admitted(scope)) ??
      (await traceToolExecution(tool.name, () =>
        // A task answers at once: only a call that waits may stream progress.
        runTool(tool, args, asTask ? scope : withCallProgress(scope, params), asTask),
      )))
    : {
        result: blockedResult(tool.name, evaluation.blockers),
        outcome: 'blocked',
        errorCode: 'tool_blocked',
        blockers: evaluation.blockers,
        runId: null,
        resourceUris: [],
      };
  call.tool = name;
  call.outcome = verdict.outcome;
  call.errorCode = verdict.errorCode;
  call.blockers = verdict.blockers;
  call.runId = verdict.runId;
  call.resourceUris = verdict.resourceUris;
  return verdict.result;
}

export const TOOL_METHODS: ReadonlyArray<readonly [string, MethodHandler]> = [
  ['tools/list', listTools],
  ['tools/call', audited(toolCallSubject, callTool)],
];
