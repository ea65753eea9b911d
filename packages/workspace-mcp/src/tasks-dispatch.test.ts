import type { Capability } from '@flowgate/auth';
import { seedFlow, seedWorkspace } from '@flowgate/workspace/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeScope } from './methods/scope.js';
import { readTaskV2 } from './methods/tasks.js';
import { NO_NARROWING } from './narrowing.js';
import { TASK_POLL_INTERVAL_MS, TASK_TTL_MS } from './tasks.js';
import { callTool, rpc, tamperedSeal, useTestDb } from './testing.js';

/**
 * Tasks through the dispatcher on a real workspace (no worker: runs stay queued, so every answer here is about a
 * live task): creation, reads, cancellation and their audit rows, who is offered Tasks, and which versions have them.
 */

const env = useTestDb();
const GREET = `{:slug :greet
 :invocations {:default {:inputs [{:name :name :type :string :required true}]}}
 :interfaces {:mcp [{:tool-name "greet_person" :invocation :default}]}
 :flow (flow/step :function :greet {:code (fn [x] {:greeting (str "hello " (:name x))}) :input (flow/input)})}`;
const V2 = '2026-07-28';

let ws: string;
let other: string;

beforeAll(async () => {
  ws = await seedWorkspace(env.db, env.uniqueId('ws-tasks'), 'Tasks');
  other = await seedWorkspace(env.db, env.uniqueId('ws-other'), 'Other');
  await seedFlow(env.db, ws, GREET, { release: 'r1' });
});

const greet = { flow_slug: 'greet', tool_name: 'greet_person', input: { name: 'ada' } };

async function createTask(over: Parameters<typeof env.ctx>[0] = {}) {
  const ctx = env.ctx({ workspaceId: ws, ...over });
  const { body } = await rpc(ctx, 'tools/call', { name: 'call_flow_tool', arguments: greet, task: {} });
  return {
    ctx,
    task: body.result.task as { taskId: string; status: string; ttl: number; pollInterval: number },
  };
}

describe('task-augmented tools/call (2025-11-25)', () => {
  it('starts the run and answers with the task at once, audited as its creation', async () => {
    const { ctx, task } = await createTask();
    expect(task).toMatchObject({
      status: 'working',
      ttl: TASK_TTL_MS,
      pollInterval: TASK_POLL_INTERVAL_MS,
    });
    expect(ctx.audits).toHaveLength(1);
    expect(ctx.audits[0]).toMatchObject({ kind: 'tasks/create', action: 'call_flow_tool', outcome: 'ok' });
    expect(ctx.audits[0]?.runId).toMatch(/^run_/);
    const got = await rpc(ctx, 'tasks/get', { taskId: task.taskId });
    expect(got.body.result).toMatchObject({ taskId: task.taskId, status: 'working' });
  });

  it('answers bad input as the tool does, starting nothing', async () => {
    const ctx = env.ctx({ workspaceId: ws });
    const { body } = await rpc(ctx, 'tools/call', {
      name: 'call_flow_tool',
      arguments: { ...greet, input: {} },
      task: {},
    });
    expect(body.result.isError).toBe(true);
    expect(body.result.structuredContent.error.code).toBe('invalid_input');
    expect(ctx.audits[0]).toMatchObject({ kind: 'tasks/create', outcome: 'error', runId: null });
  });

  it('ignores params.task on a tool without task support', async () => {
    const ctx = env.ctx({ workspaceId: ws });
    const { body } = await rpc(ctx, 'tools/call', { name: 'get_workspace_context', arguments: {}, task: {} });
    expect(body.result.task).toBeUndefined();
    expect(body.result.structuredContent).toBeDefined();
    expect(ctx.audits[0]?.kind).toBe('tools/call');
  });

  it('cancels a live task, audited with the run; a second cancel is refused', async () => {
    const { ctx, task } = await createTask();
    const runId = ctx.audits[0]?.runId;
    const cancelled = await rpc(ctx, 'tasks/cancel', { taskId: task.taskId });
    expect(cancelled.body.result).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect(cancelled.body.result.pollInterval).toBeUndefined();
    expect(ctx.audits.at(-1)).toMatchObject({ kind: 'tasks/cancel', outcome: 'ok', runId });
    const again = await rpc(ctx, 'tasks/cancel', { taskId: task.taskId });
    expect(again.body.error?.code).toBe(-32602);
    expect(ctx.audits.at(-1)).toMatchObject({
      kind: 'tasks/cancel',
      outcome: 'error',
      errorCode: 'task_terminal',
    });
    // The cancelled run's final result is the tool's own answer for it.
    const result = await rpc(ctx, 'tasks/result', { taskId: task.taskId });
    expect(result.body.result.structuredContent.run).toMatchObject({ runId, status: 'cancelled' });
    expect(result.body.result._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId: task.taskId });
  });

  it('is not found for another workspace or principal, or when tampered with', async () => {
    const { task } = await createTask();
    const elsewhere = env.ctx({ workspaceId: other });
    const someoneElse = env.ctx({
      workspaceId: ws,
      principal: { kind: 'service_account', id: 'sa_other', name: 'other', keyId: 'key_2' },
    });
    for (const [ctx, taskId] of [
      [elsewhere, task.taskId],
      [someoneElse, task.taskId],
      [env.ctx({ workspaceId: ws }), tamperedSeal(task.taskId)],
    ] as const) {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
        const { body } = await rpc(ctx, method, { taskId });
        expect(body.error).toMatchObject({ code: -32602, message: 'Task not found' });
      }
    }
    const missing = await rpc(env.ctx({ workspaceId: ws }), 'tasks/get', {});
    expect(missing.body.error?.code).toBe(-32602);
  });

  it("lists the caller's own tasks only", async () => {
    const principal = {
      kind: 'service_account' as const,
      id: env.uniqueId('sa_lister'),
      name: 'l',
      keyId: 'k',
    };
    const { ctx, task } = await createTask({ principal });
    const { body } = await rpc(ctx, 'tasks/list', {});
    expect(body.result.tasks.map((t: { taskId: string }) => t.taskId)).toEqual([task.taskId]);
    const bad = await rpc(ctx, 'tasks/list', { cursor: 'nope' });
    expect(bad.body.error?.code).toBe(-32602);
  });
});

describe('one task, one id', () => {
  it('answers the same id and TTL from creation, a retry, get, list, cancel and result', async () => {
    const principal = {
      kind: 'service_account' as const,
      id: env.uniqueId('sa_stable'),
      name: 's',
      keyId: 'k',
    };
    const ctx = env.ctx({ workspaceId: ws, principal });
    const args = { ...greet, idempotency_key: env.uniqueId('stable') };
    // A requested TTL is overridden (the receiver may): it must not make this task's id differ from the list's.
    const first = await rpc(ctx, 'tools/call', {
      name: 'call_flow_tool',
      arguments: args,
      task: { ttl: 120_000 },
    });
    const task = first.body.result.task as { taskId: string; ttl: number };
    expect(task.ttl).toBe(TASK_TTL_MS);
    // The retry names the same run (created: false before): the same task, so the same id.
    const retry = await rpc(ctx, 'tools/call', { name: 'call_flow_tool', arguments: args, task: {} });
    expect(retry.body.result.task).toMatchObject({ taskId: task.taskId, ttl: TASK_TTL_MS });
    const got = await rpc(ctx, 'tasks/get', { taskId: task.taskId });
    expect(got.body.result).toMatchObject({ taskId: task.taskId, ttl: TASK_TTL_MS });
    const listed = await rpc(ctx, 'tasks/list', {});
    expect(listed.body.result.tasks).toEqual([
      expect.objectContaining({ taskId: task.taskId, ttl: TASK_TTL_MS }),
    ]);
    const cancelled = await rpc(ctx, 'tasks/cancel', { taskId: task.taskId });
    expect(cancelled.body.result).toMatchObject({
      taskId: task.taskId,
      ttl: TASK_TTL_MS,
      status: 'cancelled',
    });
    const result = await rpc(ctx, 'tasks/result', { taskId: task.taskId });
    expect(result.body.result._meta['io.modelcontextprotocol/related-task']).toEqual({ taskId: task.taskId });
  });
});

describe('who is offered Tasks', () => {
  const initialize = (over: Parameters<typeof env.ctx>[0]) =>
    rpc(env.ctx({ workspaceId: ws, protocolVersionHeader: null, ...over }), 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    });

  it('only callers who can run flows', async () => {
    const full = await initialize({});
    expect(full.body.result.capabilities.tasks).toBeDefined();
    const reader = await initialize({ capabilities: new Set<Capability>(['flows.read', 'runs.read']) });
    expect(reader.body.result.capabilities.tasks).toBeUndefined();
    const readOnly = await initialize({ narrowing: { ...NO_NARROWING, readOnly: true } });
    expect(readOnly.body.result.capabilities.tasks).toBeUndefined();
    const { body } = await rpc(
      env.ctx({ workspaceId: ws, capabilities: new Set<Capability>(['flows.read', 'runs.read']) }),
      'tasks/list',
      {},
    );
    expect(body.error?.code).toBe(-32601);
  });

  it('only from 2025-11-25 on: older versions have no tasks methods and ignore params.task', async () => {
    const ctx = env.ctx({ workspaceId: ws, protocolVersionHeader: '2025-06-18' });
    const list = await rpc(ctx, 'tasks/list', {});
    expect(list.body.error?.code).toBe(-32601);
    const { body } = await callTool(ctx, 'call_flow_tool', greet);
    expect(body.result.task).toBeUndefined();
    expect(body.result.structuredContent.run.status).toBe('queued');
  });
});

describe('2026-07-28 Tasks extension', () => {
  const meta = (extensions: boolean) => ({
    'io.modelcontextprotocol/protocolVersion': V2,
    'io.modelcontextprotocol/clientCapabilities': extensions
      ? { extensions: { 'io.modelcontextprotocol/tasks': {} } }
      : {},
  });
  const modernCtx = (method: string, name: string | null) =>
    env.ctx({ workspaceId: ws, protocolVersionHeader: V2, mcpMethodHeader: method, mcpNameHeader: name });

  it('directs a task for a client that declares the extension, and a plain result otherwise', async () => {
    const asTask = await rpc(modernCtx('tools/call', 'call_flow_tool'), 'tools/call', {
      name: 'call_flow_tool',
      arguments: greet,
      _meta: meta(true),
    });
    expect(asTask.body.result).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: TASK_TTL_MS,
    });
    const taskId = asTask.body.result.taskId as string;
    const got = await rpc(modernCtx('tasks/get', taskId), 'tasks/get', { taskId, _meta: meta(true) });
    expect(got.body.result).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    // Task requests are routed by id: the Mcp-Name header must name it.
    const wrongName = await handleWrongName(taskId);
    expect(wrongName.status).toBe(400);
    const cancelled = await rpc(modernCtx('tasks/cancel', taskId), 'tasks/cancel', {
      taskId,
      _meta: meta(true),
    });
    expect(cancelled.body.result.resultType).toBe('complete');
    const after = await rpc(modernCtx('tasks/get', taskId), 'tasks/get', { taskId, _meta: meta(true) });
    expect(after.body.result.status).toBe('cancelled');

    const plain = await rpc(modernCtx('tools/call', 'call_flow_tool'), 'tools/call', {
      name: 'call_flow_tool',
      arguments: greet,
      _meta: meta(false),
    });
    expect(plain.body.result.resultType).toBe('complete');
    expect(plain.body.result.structuredContent.run.status).toBe('queued');
  });

  async function v2Task(): Promise<string> {
    const created = await rpc(modernCtx('tools/call', 'call_flow_tool'), 'tools/call', {
      name: 'call_flow_tool',
      arguments: greet,
      _meta: meta(true),
    });
    return created.body.result.taskId as string;
  }

  it('refuses every extension method to a request that does not declare it: -32021, HTTP 400', async () => {
    const taskId = await v2Task();
    for (const [method, params] of [
      ['tasks/get', { taskId }],
      ['tasks/update', { taskId, inputResponses: {} }],
      ['tasks/cancel', { taskId }],
    ] as const) {
      const { status, body } = await rpc(modernCtx(method, taskId), method, {
        ...params,
        _meta: meta(false),
      });
      expect(status).toBe(400);
      expect(body.error).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
      });
    }
    // The refusal changed nothing: the task is still working.
    const got = await rpc(modernCtx('tasks/get', taskId), 'tasks/get', { taskId, _meta: meta(true) });
    expect(got.body.result.status).toBe('working');
  });

  it('acknowledges tasks/update for a known task, ignoring responses to keys never asked', async () => {
    const taskId = await v2Task();
    const ack = await rpc(modernCtx('tasks/update', taskId), 'tasks/update', {
      taskId,
      inputResponses: { 'never-asked': { action: 'accept', content: { x: 1 } } },
      _meta: meta(true),
    });
    expect(ack.status).toBe(200);
    expect(Object.keys(ack.body.result).sort()).toEqual(['_meta', 'resultType']);
    expect(ack.body.result.resultType).toBe('complete');
    const got = await rpc(modernCtx('tasks/get', taskId), 'tasks/get', { taskId, _meta: meta(true) });
    expect(got.body.result.status).toBe('working');
    const unknown = await rpc(modernCtx('tasks/update', 'nope'), 'tasks/update', {
      taskId: 'nope',
      inputResponses: {},
      _meta: meta(true),
    });
    expect(unknown.body.error).toMatchObject({ code: -32602, message: 'Task not found' });
    const noResponses = await rpc(modernCtx('tasks/update', taskId), 'tasks/update', {
      taskId,
      _meta: meta(true),
    });
    expect(noResponses.body.error?.code).toBe(-32602);
  });

  it('acknowledges tasks/cancel of a task already final, which stays as it ended', async () => {
    const taskId = await v2Task();
    const cancel = () =>
      rpc(modernCtx('tasks/cancel', taskId), 'tasks/cancel', { taskId, _meta: meta(true) });
    expect((await cancel()).body.result.resultType).toBe('complete');
    const again = await cancel();
    expect(again.status).toBe(200);
    expect(again.body.error).toBeUndefined();
    expect(again.body.result.resultType).toBe('complete');
    const got = await rpc(modernCtx('tasks/get', taskId), 'tasks/get', { taskId, _meta: meta(true) });
    expect(got.body.result.status).toBe('cancelled');
  });

  it('reads a task for a push exactly as tasks/get answers it, and nothing for another principal', async () => {
    const taskId = await v2Task();
    const got = await rpc(modernCtx('tasks/get', taskId), 'tasks/get', { taskId, _meta: meta(true) });
    const { resultType: _type, _meta: _m, ...expected } = got.body.result;
    const envelope = {
      version: V2,
      clientInfo: null,
      clientCapabilities: meta(true)['io.modelcontextprotocol/clientCapabilities'],
    } as const;
    expect(await readTaskV2(taskId, makeScope(modernCtx('tasks/get', taskId), V2, null, envelope))).toEqual(
      expected,
    );
    const stranger = env.ctx({
      workspaceId: ws,
      principal: { kind: 'service_account', id: 'sa_stranger', name: 's', keyId: 'key_s' },
    });
    expect(await readTaskV2(taskId, makeScope(stranger, V2, null, envelope))).toBeNull();
    expect(
      await readTaskV2('forged', makeScope(modernCtx('tasks/get', taskId), V2, null, envelope)),
    ).toBeNull();
  });

  it('has no tasks/update under 2025-11-25', async () => {
    const { ctx, task } = await createTask();
    const { body } = await rpc(ctx, 'tasks/update', { taskId: task.taskId, inputResponses: {} });
    expect(body.error?.code).toBe(-32601);
  });

  async function handleWrongName(taskId: string) {
    return rpc(modernCtx('tasks/get', 'someone-else'), 'tasks/get', { taskId, _meta: meta(true) });
  }
});
