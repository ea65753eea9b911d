import { REDACTED } from '@flowgate/secrets';
import { seedFlow, seedWorkspace } from '@flowgate/workspace/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import type { McpAuditEntry } from './context.js';
import { flowSurface } from './flow-surface.js';
import { rpc, type TestContext, useTestDb } from './testing.js';

/**
 * A flow input declared `:type :secret` never reaches the audit log, whatever its name: `pw` is no secret-looking key,
 * so only the invocation's own declaration can tell. Every path that starts a run is covered, and a start that fails
 * after the invocation is known (bad input) as well.
 */

const env = useTestDb();
const CANARY = 'CANARY-q7Zk2mWv9xPa';
const VAULT = `{:slug :vault
 :invocations {:default {:inputs [{:name :name :type :string :required true}
                                  {:name :pw :type :secret :required true}
                                  {:name :note :type :string}]}}
 :interfaces {:mcp [{:tool-name "open_vault" :invocation :default}]}
 :flow (flow/step :function :open {:code (fn [x] {:ok true}) :input (flow/input)})}`;

let ws: string;

beforeAll(async () => {
  ws = await seedWorkspace(env.db, env.uniqueId('ws-secret-audit'), 'Secret audit');
  await seedFlow(env.db, ws, VAULT, { release: 'r1' });
});

const input = { name: 'ada', pw: CANARY };
const callArgs = { flow_slug: 'vault', tool_name: 'open_vault', input };

function onlyAudit(ctx: TestContext): McpAuditEntry {
  expect(ctx.audits).toHaveLength(1);
  const entry = ctx.audits[0] as McpAuditEntry;
  expect(JSON.stringify(entry)).not.toContain(CANARY);
  return entry;
}

/** The per-flow tool waits for the run's end; no worker runs here, so queued runs are cancelled until it answers. */
async function whileCancellingQueued<T>(ctx: TestContext, call: Promise<T>): Promise<T> {
  let done = false;
  const settled = call.finally(() => {
    done = true;
  });
  while (!done) {
    const page = await ctx.workspace().runs.list({
      limit: 50,
      after: null,
      status: 'queued',
      flowSlug: 'vault',
    });
    for (const run of page.items) await ctx.workspace().runs.cancel(run.id);
    await new Promise((r) => setTimeout(r, 20));
  }
  return settled;
}

describe('secret-typed flow inputs in audit arguments', () => {
  it('call_flow_tool: the secret input is redacted in the audit row as in the stored run', async () => {
    const ctx = env.ctx({ workspaceId: ws });
    const { body } = await rpc(ctx, 'tools/call', { name: 'call_flow_tool', arguments: callArgs });
    expect(body.result.isError).toBeUndefined();
    const entry = onlyAudit(ctx);
    expect(entry).toMatchObject({ kind: 'tools/call', action: 'call_flow_tool', outcome: 'ok' });
    expect(entry.arguments).toEqual({ ...callArgs, input: { name: 'ada', pw: REDACTED } });
    const run = await ctx.workspace().runs.get(entry.runId as string);
    expect(run?.input).toEqual({ name: 'ada', pw: REDACTED });
  });

  it('task-augmented call_flow_tool: redacted in the tasks/create row', async () => {
    const ctx = env.ctx({ workspaceId: ws });
    const { body } = await rpc(ctx, 'tools/call', { name: 'call_flow_tool', arguments: callArgs, task: {} });
    expect(body.result.task.status).toBe('working');
    const entry = onlyAudit(ctx);
    expect(entry).toMatchObject({ kind: 'tasks/create', action: 'call_flow_tool', outcome: 'ok' });
    expect(entry.arguments).toEqual({ ...callArgs, input: { name: 'ada', pw: REDACTED } });
  });

  /** A context on the per-flow endpoint of `vault`. */
  async function vaultCtx() {
    const open = await env.ctx({ workspaceId: ws }).workspace().flows.open({
      slug: 'vault',
      installationId: null,
      includeInstalled: false,
    });
    const surface = open && (await flowSurface(open));
    if (!surface) throw new Error('vault has no per-flow surface');
    return env.ctx({ workspaceId: ws, surface });
  }

  it('per-flow tool: the arguments are the input, redacted at the top level', async () => {
    const ctx = await vaultCtx();
    const { body } = await whileCancellingQueued(
      ctx,
      rpc(ctx, 'tools/call', { name: 'open_vault', arguments: input }),
    );
    expect(body.result.structuredContent.run.status).toBe('cancelled');
    const entry = onlyAudit(ctx);
    expect(entry).toMatchObject({ kind: 'tools/call', action: 'open_vault', outcome: 'ok' });
    expect(entry.arguments).toEqual({ name: 'ada', pw: REDACTED });
  });

  it('per-flow tool as a task: redacted in the tasks/create row', async () => {
    const ctx = await vaultCtx();
    await rpc(ctx, 'tools/call', { name: 'open_vault', arguments: input, task: {} });
    const entry = onlyAudit(ctx);
    expect(entry).toMatchObject({ kind: 'tasks/create', action: 'open_vault', outcome: 'ok' });
    expect(entry.arguments).toEqual({ name: 'ada', pw: REDACTED });
  });

  it('a start refused for bad input still keeps the secret out of the row', async () => {
    const ctx = env.ctx({ workspaceId: ws });
    const { body } = await rpc(ctx, 'tools/call', {
      name: 'call_flow_tool',
      arguments: { ...callArgs, input: { pw: CANARY } },
    });
    expect(body.result.structuredContent.error.code).toBe('invalid_input');
    const entry = onlyAudit(ctx);
    expect(entry).toMatchObject({ outcome: 'error', errorCode: 'invalid_input', runId: null });
    expect(entry.arguments).toEqual({ ...callArgs, input: { pw: REDACTED } });
  });

  it('the secret value is removed where the caller repeated it in another argument', async () => {
    const ctx = env.ctx({ workspaceId: ws });
    await rpc(ctx, 'tools/call', {
      name: 'call_flow_tool',
      arguments: { ...callArgs, input: { ...input, note: `pw is ${CANARY}` } },
    });
    const entry = onlyAudit(ctx);
    expect(entry.arguments).toEqual({
      ...callArgs,
      input: { name: 'ada', pw: REDACTED, note: `pw is ${REDACTED}` },
    });
  });
});
