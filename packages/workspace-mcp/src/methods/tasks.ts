/**
 * tasks/get, tasks/update (2026-07-28), tasks/result and tasks/list (2025-11-25) and tasks/cancel: a task is a view
 * of a run (tasks.ts), answered from the run as it is now by the tool that started it. Expired, foreign, forged and
 * unknown ids all answer "not found".
 */
import { isAppError } from '@flowgate/core';
import type { RunRecord } from '@flowgate/workspace';
import { auditPreview } from '../audit-preview.js';
import {
  clip,
  invalidParams,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_METHOD_NOT_FOUND,
  JsonRpcFailure,
} from '../protocol.js';
import type { CallToolResult } from '../result.js';
import {
  isExpired,
  isTerminal,
  openTaskId,
  RELATED_TASK_META,
  sealTaskId,
  settlingTool,
  TASK_RESULT_MAX_WAIT_MS,
  TASKS_PAGE_SIZE,
  taskStatusOf,
  taskStatusV1,
  taskV1,
  taskV2,
  waitForEnd,
} from '../tasks.js';
import type { AnyToolDefinition } from '../tool.js';
import { TooManyWaits } from '../waits.js';
import { type AuditedCall, audited } from './audited.js';
import type { MethodHandler, Params, Scope } from './scope.js';
import { finishOutcome } from './tools.js';

interface LoadedTask {
  taskId: string;
  run: RunRecord;
  tool: AnyToolDefinition;
}

function taskNotFound(taskId: unknown): JsonRpcFailure {
  return invalidParams(
    'Task not found',
    typeof taskId === 'string' ? { taskId: clip(taskId, 300) } : undefined,
  );
}

/** The task a request names; expired, foreign, forged and unknown ids all answer the same "not found". */
async function loadTask(params: Params, scope: Scope): Promise<LoadedTask> {
  const taskId = params.taskId;
  if (typeof taskId !== 'string' || taskId.length === 0)
    throw invalidParams('params.taskId must be a task id');
  const runId = openTaskId(scope.taskIds, taskId);
  if (!runId) throw taskNotFound(taskId);
  const run = await scope.workspace.runs.get(runId);
  if (!run || isExpired(run, Date.now())) throw taskNotFound(taskId);
  const tool = settlingTool(scope.surface, run);
  if (!tool) throw taskNotFound(taskId);
  return { taskId, run, tool };
}

/** The final answer of a task: the bounded CallToolResult its tool gives for the run as it is now. */
async function settledResult(
  task: LoadedTask,
  scope: Scope,
): Promise<CallToolResult | Record<string, unknown>> {
  const support = task.tool.task;
  if (!support) throw new Error(`${task.tool.name} has no task support`);
  return finishOutcome(task.tool, await support.settle(task.run, scope), scope).result;
}

/**
 * The 2026-07-28 `DetailedTask` of a run as it is now: the task fields and, once final, the tool's own result for the
 * run (`completed`; a failed or timed-out run included, see taskStatusV2). What `tasks/get` answers, and what a
 * `notifications/tasks` push must carry ("identical to what tasks/get would have returned at that moment").
 */
export async function detailedTaskV2(
  taskId: string,
  run: RunRecord,
  tool: AnyToolDefinition,
  scope: Scope,
): Promise<Record<string, unknown>> {
  const base = taskV2(taskId, run);
  if (base.status !== 'completed') return base;
  return {
    ...base,
    result: { resultType: 'complete', ...(await settledResult({ taskId, run, tool }, scope)) },
  };
}

/**
 * The 2026-07-28 `DetailedTask` a task id names for this scope's workspace and principal, or null when it is not
 * found (expired, foreign, forged, unknown) — for a `notifications/tasks` push, which must match `tasks/get`.
 */
export async function readTaskV2(taskId: string, scope: Scope): Promise<Record<string, unknown> | null> {
  let task: LoadedTask;
  try {
    task = await loadTask({ taskId }, scope);
  } catch (error) {
    if (error instanceof JsonRpcFailure) return null;
    throw error;
  }
  return detailedTaskV2(task.taskId, task.run, task.tool, scope);
}

async function getTask(params: Params, scope: Scope): Promise<unknown> {
  const task = await loadTask(params, scope);
  if (scope.tasks?.generation !== 'v2') return taskV1(task.taskId, task.run);
  // 2026-07-28: the outcome comes with the task once it is final (there is no tasks/result).
  return detailedTaskV2(task.taskId, task.run, task.tool, scope);
}

/**
 * 2026-07-28 tasks/update: answers to a task's `inputRequests`. No run ever asks for input, so no key is ever
 * outstanding and every response is ignored, as the extension says a server should; the answer is the empty
 * acknowledgement. An unknown task is -32602 (the extension's SHOULD).
 */
async function updateTask(params: Params, scope: Scope): Promise<unknown> {
  if (scope.tasks?.generation !== 'v2')
    throw new JsonRpcFailure(JSONRPC_METHOD_NOT_FOUND, 'Method not found: tasks/update');
  const responses = params.inputResponses;
  if (typeof responses !== 'object' || responses === null || Array.isArray(responses))
    throw invalidParams('params.inputResponses must be an object');
  await loadTask(params, scope);
  return {};
}

/** 2025-11-25 tasks/result: waits (bounded) for the end, then the tool's own result for the run. */
async function taskResult(params: Params, scope: Scope): Promise<unknown> {
  const task = await loadTask(params, scope);
  let run: RunRecord;
  try {
    // A task already final (cancelled while its run still stops) answers at once.
    run = isTerminal(taskStatusV1(task.run))
      ? task.run
      : await waitForEnd(scope, task.run, TASK_RESULT_MAX_WAIT_MS);
  } catch (error) {
    if (!(error instanceof TooManyWaits)) throw error;
    throw new JsonRpcFailure(JSONRPC_INVALID_REQUEST, error.message, {
      code: error.code,
      bound: error.scope,
      limit: error.limit,
      taskId: task.taskId,
    });
  }
  // A cancelled task whose run has not stopped yet is final too: its answer reports the run as it is.
  if (!isTerminal(taskStatusV1(run)))
    // Never held past the bound: the client polls tasks/get and asks again.
    throw new JsonRpcFailure(JSONRPC_INVALID_REQUEST, 'Task is still working; poll tasks/get and ask again', {
      taskId: task.taskId,
      status: 'working',
    });
  const result = await settledResult({ ...task, run }, scope);
  return { ...result, _meta: { [RELATED_TASK_META]: { taskId: task.taskId } } };
}

const TASKS_LIST_KIND = 'tasks/list';

/** The caller's own runs in this workspace (this flow's, on a per-flow endpoint), newest first, unexpired. */
async function listTasks(params: Params, scope: Scope): Promise<unknown> {
  let after: string | null = null;
  if (params.cursor !== undefined) {
    const position = scope.taskIds.open(TASKS_LIST_KIND, params.cursor);
    if (typeof position !== 'string') throw invalidParams('Invalid cursor');
    after = position;
  }
  let page: Awaited<ReturnType<typeof scope.workspace.runs.list>>;
  try {
    page = await scope.workspace.runs.list({
      limit: TASKS_PAGE_SIZE,
      after,
      status: null,
      flowSlug: scope.surface.flowSlug,
      mine: true,
    });
  } catch (error) {
    if (isAppError(error) && error.code === 'invalid_cursor') throw invalidParams('Invalid cursor');
    throw error;
  }
  const now = Date.now();
  // Newest first: the first expired run ends the list (every later one is older).
  const live = page.items.filter((run) => !isExpired(run, now));
  const tasks = live
    .filter((run) => settlingTool(scope.surface, run) !== null)
    .map((run) => taskV1(sealTaskId(scope.taskIds, run.id), run));
  const more = page.nextAfter !== null && live.length === page.items.length;
  return more
    ? { tasks, nextCursor: scope.taskIds.seal(TASKS_LIST_KIND, page.nextAfter as string) }
    : { tasks };
}

async function cancelTask(params: Params, scope: Scope, call: AuditedCall): Promise<unknown> {
  const task = await loadTask(params, scope).catch((error: unknown) => {
    throw call.fail('not_found', error);
  });
  call.runId = task.run.id;
  const v2 = scope.tasks?.generation === 'v2';
  // 2025-11-25: a task whose cancellation is already recorded is `cancelled`, so a second cancel is refused.
  const status = v2 ? taskStatusOf(task.run.status) : taskStatusV1(task.run);
  if (isTerminal(status)) {
    // 2026-07-28: cancellation is a signal, acknowledged for any known task; a task already final stays as it is.
    if (v2) return {};
    throw call.fail(
      'task_terminal',
      invalidParams(`Cannot cancel a task that is already ${status}`, { taskId: task.taskId, status }),
    );
  }
  const run = (await scope.workspace.runs.cancel(task.run.id)) ?? task.run;
  // 2026-07-28 answers the empty acknowledgement: the run may still end otherwise (a worker stops at its next lease).
  // 2025-11-25 answers the task, `cancelled` now that the cancellation is stored (taskStatusV1), running run or not.
  return v2 ? {} : taskV1(task.taskId, run);
}

export const TASK_METHODS: ReadonlyArray<readonly [string, MethodHandler]> = [
  ['tasks/get', getTask],
  ['tasks/update', updateTask],
  ['tasks/result', taskResult],
  ['tasks/list', listTasks],
  [
    'tasks/cancel',
    audited(
      () => ({
        kind: 'tasks/cancel',
        action: 'tasks/cancel',
        arguments: (call) => auditPreview({ runId: call.runId }),
      }),
      cancelTask,
    ),
  ],
];
