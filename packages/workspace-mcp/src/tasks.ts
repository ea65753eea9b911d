/**
 * Runs as MCP Tasks. A run already is what the protocol calls a task (durable work started by `tools/call` and
 * polled for its result), so a task is only a view of a run: nothing is stored for it and any replica answers.
 *
 * - 2025-11-25 ("v1", experimental Tasks): `params.task` on `tools/call`, then `tasks/get|result|list|cancel`.
 * - 2026-07-28 ("v2", extension `io.modelcontextprotocol/tasks`): the client declares the extension per request; the
 *   server directs task creation; `tasks/get` carries the result; `tasks/cancel`.
 *
 * The task id is a sealed value (HMAC with the cursor key every replica shares) of the run id alone, scoped to the
 * workspace and the principal: another workspace's or principal's id fails the MAC and is "not found" like a made-up
 * one. Nothing else goes into it, so one run has one task id in every answer (creation, get, result, list, cancel).
 * Every task has the same TTL (TASK_TTL_MS; a requested one is overridden, as the protocol lets the receiver do): a
 * task expires that long after its run was created; the run stays.
 */
import type { RunStatus } from '@flowgate/core';
import type { RunRecord } from '@flowgate/workspace';
import { z } from 'zod';
import type { McpPrincipal, ToolContext } from './context.js';
import { type CursorCodec, createCursorCodec } from './cursor.js';
import { LIMITS } from './limits.js';
import type { McpSurface } from './surface.js';
import type { AnyToolDefinition } from './tool.js';
import { withWaitSlot } from './waits.js';

export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';
/** 2025-11-25: where `tasks/result` names the task its result belongs to. */
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** 2025-11-25: the experimental Tasks capability (list, cancel, task-augmented tools/call). */
export const TASKS_CAPABILITY_V1 = Object.freeze({ list: {}, cancel: {}, requests: { tools: { call: {} } } });

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
/** Which Tasks generation a request speaks: v1 = 2025-11-25 experimental, v2 = the 2026-07-28 extension. */
export type TaskGeneration = 'v1' | 'v2';

/**
 * Every task is kept a day: as long as a run may live (DEFAULT_MAX_RUN_DURATION_MS). Fixed rather than per request,
 * so a task's id and TTL can be answered from its run alone (tasks/list included) with nothing stored.
 */
export const TASK_TTL_MS = 24 * 60 * 60 * 1000;
/** Sleeps and HTTP steps take seconds; polling faster only costs requests. */
export const TASK_POLL_INTERVAL_MS = 1000;
/** tasks/list page size. */
export const TASKS_PAGE_SIZE = 20;
/** tasks/result waits at most this long (the same bound as call_flow_tool's wait_ms), never a whole run. */
export const TASK_RESULT_MAX_WAIT_MS = LIMITS.callFlowToolMaxWaitMs;

/**
 * The documented mapping: a run that can still make progress is `working` (a sleeping run too: it needs no input),
 * a timed-out run `failed`.
 */
export function taskStatusOf(status: RunStatus): TaskStatus {
  switch (status) {
    case 'queued':
    case 'running':
    case 'waiting':
      return 'working';
    case 'completed':
      return 'completed';
    case 'failed':
    case 'timed-out':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
  }
}

/**
 * The 2026-07-28 status: the extension keeps `failed` for a JSON-RPC error of the request, and a run that failed or
 * timed out is no such error — the call answers a result that reports the run (ext-tasks 2026-07-28, "Task Execution
 * Errors": `tasks/get` returns exactly what the underlying request would have returned). So it is `completed`.
 */
export function taskStatusV2(status: RunStatus): TaskStatus {
  const mapped = taskStatusOf(status);
  return mapped === 'failed' ? 'completed' : mapped;
}

export function isTerminal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** A new kind: ids sealed when the TTL and a flag were part of them no longer open (their tasks read as not found). */
const TASK_KIND = 'task:run';
const RunIdSchema = z.string().min(1).max(LIMITS.runIdMaxChars);

/** Task ids and tasks/list cursors: bound to the workspace and the principal, valid on every replica. */
export function taskCodec(
  workspaceId: string,
  principal: McpPrincipal,
  key?: string | Uint8Array,
): CursorCodec {
  return createCursorCodec(`${workspaceId}\u0000${principal.kind}:${principal.id}`, key);
}

/** The task id of a run: the same whichever request answers it. */
export function sealTaskId(codec: CursorCodec, runId: string): string {
  return codec.seal(TASK_KIND, runId);
}

/** The run id a task id names, or null when it is forged, malformed or another workspace's/principal's. */
export function openTaskId(codec: CursorCodec, taskId: unknown): string | null {
  const parsed = RunIdSchema.safeParse(codec.open(TASK_KIND, taskId));
  return parsed.success ? parsed.data : null;
}

export function isExpired(run: RunRecord, now: number): boolean {
  return Date.parse(run.createdAt) + TASK_TTL_MS <= now;
}

function lastUpdated(run: RunRecord): string {
  return run.finishedAt ?? run.startedAt ?? run.createdAt;
}

function statusMessage(run: RunRecord): string | undefined {
  if (run.error) return `${run.error.code}: ${run.error.message}`;
  if (run.status === 'waiting') return run.wakeAt ? `waiting until ${run.wakeAt}` : 'waiting';
  if (run.status === 'timed-out') return 'the run timed out';
  return undefined;
}

/**
 * The 2025-11-25 status of a run's task. That revision's "Cancelling Tasks" requires the task to be `cancelled` before
 * tasks/cancel answers and to stay `cancelled` even if execution goes on to complete or fail; a running run only has
 * its cancellation recorded (`cancelRequested`, the worker stops it at its next lease), so once recorded the task
 * is `cancelled` whatever the run does next.
 */
export function taskStatusV1(run: RunRecord): TaskStatus {
  return run.cancelRequested ? 'cancelled' : taskStatusOf(run.status);
}

/** The 2025-11-25 `Task`. */
export function taskV1(taskId: string, run: RunRecord): Record<string, unknown> {
  const status = taskStatusV1(run);
  const message =
    run.cancelRequested && !isTerminal(taskStatusOf(run.status))
      ? 'cancelled; the run stops at its next step boundary'
      : statusMessage(run);
  return {
    taskId,
    status,
    ...(message ? { statusMessage: message } : {}),
    createdAt: run.createdAt,
    lastUpdatedAt: lastUpdated(run),
    ttl: TASK_TTL_MS,
    ...(isTerminal(status) ? {} : { pollInterval: TASK_POLL_INTERVAL_MS }),
  };
}

/** The 2026-07-28 task fields (creation result and the base of `tasks/get`). */
export function taskV2(taskId: string, run: RunRecord): Record<string, unknown> {
  const status = taskStatusV2(run.status);
  const message = statusMessage(run);
  return {
    taskId,
    status,
    ...(message ? { statusMessage: message } : {}),
    createdAt: run.createdAt,
    lastUpdatedAt: lastUpdated(run),
    ttlMs: TASK_TTL_MS,
    ...(isTerminal(status) ? {} : { pollIntervalMs: TASK_POLL_INTERVAL_MS }),
  };
}

/** Whether a 2026-07-28 request's envelope declares the Tasks extension. */
export function declaresTasksExtension(
  clientCapabilities: Record<string, unknown> | null | undefined,
): boolean {
  const extensions = clientCapabilities?.extensions;
  if (typeof extensions !== 'object' || extensions === null || Array.isArray(extensions)) return false;
  const entry = (extensions as Record<string, unknown>)[TASKS_EXTENSION_ID];
  return typeof entry === 'object' && entry !== null && !Array.isArray(entry);
}

/**
 * The tool whose answer a task's run settles into: on a per-flow endpoint the flow's direct tool of that interface,
 * elsewhere call_flow_tool. Null when the endpoint cannot settle this run (another flow's run on a per-flow endpoint).
 */
export function settlingTool(surface: McpSurface, run: RunRecord): AnyToolDefinition | null {
  if (surface.flowSlug !== null) {
    if (run.flowSlug !== surface.flowSlug || run.toolName === null) return null;
    const tool = surface.find(run.toolName);
    return tool?.task ? tool : null;
  }
  const tool = surface.find('call_flow_tool');
  return tool?.task ? tool : null;
}

/**
 * Waits for the run to end within `budgetMs`, sleeps inside the window included (runs.wait), holding one of the
 * caller's wait slots (waits.ts) and ending early when the request aborts.
 */
export async function waitForEnd(ctx: ToolContext, run: RunRecord, budgetMs: number): Promise<RunRecord> {
  if (isTerminal(taskStatusOf(run.status))) return run;
  const waited = await withWaitSlot(ctx.request, () =>
    ctx.workspace.runs.wait(run.id, budgetMs, run, ctx.request.signal?.()),
  );
  return waited?.run ?? run;
}
