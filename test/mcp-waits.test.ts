import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceAccountKey, startTestGateway, type TestGateway } from './support/gateway.js';
import { asRpc, mcpPost, rpc, STREAMABLE_ACCEPT } from './support/mcp.js';
import { installFlow, SLEEP_NAP_FLOW } from './support/runs.js';

/**
 * Parked waits against the real gateway and its in-process worker: `wait_ms` and tasks/result wait through a sleep
 * that ends inside the window; waits are bounded per key and per process (`too_many_waits`, nothing started); and
 * every wait, ended, refused or abandoned by its client, leaves no entry behind in the gateway's registries.
 */

const WS = 'ws-waits';
const V = '2025-11-25';

let gw: TestGateway;
let alice: ServiceAccountKey;
let bob: ServiceAccountKey;
let carol: ServiceAccountKey;

beforeAll(async () => {
  gw = await startTestGateway({
    FLOWGATE_WORKER: 'true',
    FLOWGATE_MCP_MAX_WAITS_PER_KEY: '2',
    FLOWGATE_MCP_MAX_WAITS: '3',
  });
  await gw.createWorkspace(WS);
  await installFlow(gw, WS, 'nap', SLEEP_NAP_FLOW);
  alice = await gw.mintKey(WS, ['workspace.full'], 'alice');
  bob = await gw.mintKey(WS, ['workspace.full'], 'bob');
  carol = await gw.mintKey(WS, ['workspace.full'], 'carol');
}, 120_000);

afterAll(async () => {
  await gw?.close();
});

const deps = () => gw.running.deps;

function call(token: string, ms: number, waitMs: number, task = false) {
  return mcpPost(gw.mcpUrl(WS), {
    token,
    protocolVersion: V,
    body: rpc('tools/call', {
      name: 'call_flow_tool',
      arguments: { flow_slug: 'nap', tool_name: 'take_nap', input: { ms }, wait_ms: waitMs },
      ...(task ? { task: {} } : {}),
    }),
  });
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function untilAsync(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function runCount(): Promise<number> {
  const page = await gw.admin('GET', `/api/workspaces/${WS}/runs?limit=100`);
  return (page.json as { items: unknown[] }).items.length;
}

function expectNothingHeld() {
  expect(deps().mcpWaits.held()).toEqual({ total: 0, keys: 0 });
  expect(deps().runWorkers.pending().waiters).toBe(0);
}

describe('waits through short sleeps', () => {
  it('call_flow_tool with wait_ms 15000 on a flow sleeping 2 s answers the result inline', async () => {
    const answer = asRpc(await call(alice.apiKey, 2_000, 15_000));
    const content = answer.result?.structuredContent as {
      run: { status: string };
      result: { value?: unknown } | null;
    };
    expect(content.run.status).toBe('completed');
    expect(content.result).not.toBeNull();
    expect(JSON.stringify(content.result)).toContain('"slept":2000');
    expectNothingHeld();
  });

  it('answers at once when the sleep ends after the window', async () => {
    const started = Date.now();
    const answer = asRpc(await call(alice.apiKey, 60_000, 5_000));
    const content = answer.result?.structuredContent as { run: { status: string }; result: unknown };
    expect(content.run.status).toBe('waiting');
    expect(content.result).toBeNull();
    // Parked past the window: nothing can happen before it ends, so the wait does not sit it out.
    expect(Date.now() - started).toBeLessThan(4_000);
    expectNothingHeld();
  });

  it('tasks/result waits through the sleep too', async () => {
    const created = asRpc(await call(alice.apiKey, 1_500, 0, true));
    const taskId = (created.result?.task as { taskId: string } | undefined)?.taskId;
    const answer = asRpc(
      await mcpPost(gw.mcpUrl(WS), {
        token: alice.apiKey,
        protocolVersion: V,
        body: rpc('tasks/result', { taskId }),
      }),
    );
    expect((answer.result?.structuredContent as { run: { status: string } } | undefined)?.run.status).toBe(
      'completed',
    );
    expectNothingHeld();
  });
});

describe('bounded waits', () => {
  it('refuses the wait past the per-key and the per-process bound with too_many_waits, starting nothing', async () => {
    // Two of alice's waits and one of bob's hold every slot (per key 2, per process 3).
    // Naps long enough that a loaded machine still makes every check below while they hold their slots.
    const initial = await runCount();
    const held = [call(alice.apiKey, 6_000, 15_000), call(alice.apiKey, 6_000, 15_000)];
    await until(() => deps().mcpWaits.held().total === 2);
    held.push(call(bob.apiKey, 6_000, 15_000));
    await until(() => deps().mcpWaits.held().total === 3);
    // A slot is taken before its run is inserted: count once the three held runs exist.
    const before = initial + 3;
    await untilAsync(async () => (await runCount()) === before);

    const third = asRpc(await call(alice.apiKey, 100, 15_000)).result as {
      isError: boolean;
      structuredContent: { error: { code: string; message: string }; details: unknown };
    };
    expect(third.isError).toBe(true);
    expect(third.structuredContent.error.code).toBe('too_many_waits');
    expect(third.structuredContent.details).toEqual({ bound: 'key', limit: 2 });

    const overProcess = asRpc(await call(bob.apiKey, 100, 15_000)).result as {
      structuredContent: { error: { code: string }; details: unknown };
    };
    expect(overProcess.structuredContent.error.code).toBe('too_many_waits');
    expect(overProcess.structuredContent.details).toEqual({ bound: 'process', limit: 3 });

    // tasks/result holds a slot as well: refused as a JSON-RPC error with the same code.
    // A run that sleeps past the window: tasks/result would have to wait (a finished one needs no slot).
    const task = asRpc(await call(carol.apiKey, 60_000, 0, true));
    const taskId = (task.result?.task as { taskId: string } | undefined)?.taskId;
    const refused = asRpc(
      await mcpPost(gw.mcpUrl(WS), {
        token: carol.apiKey,
        protocolVersion: V,
        body: rpc('tasks/result', { taskId }),
      }),
    );
    expect(refused.error?.code).toBe(-32600);
    expect(refused.error?.data).toEqual({ code: 'too_many_waits', bound: 'process', limit: 3, taskId });
    // The refused calls started nothing (the task-augmented call did not wait, so it did start its run).
    expect(await runCount()).toBe(before + 1);

    for (const answer of await Promise.all(held)) {
      expect(
        (asRpc(answer).result?.structuredContent as { run: { status: string } } | undefined)?.run.status,
      ).toBe('completed');
    }
    expectNothingHeld();
    // Without the bound a wait is allowed again.
    const after = asRpc(await call(alice.apiKey, 100, 15_000)).result as { isError?: boolean };
    expect(after.isError).toBeUndefined();
    expectNothingHeld();
  }, 60_000);

  it('releases a wait whose client hung up, and keeps no settled run once its short window passed', async () => {
    const controller = new AbortController();
    const pending = fetch(gw.mcpUrl(WS), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${carol.apiKey}`,
        'content-type': 'application/json',
        accept: STREAMABLE_ACCEPT,
        'mcp-protocol-version': V,
      },
      body: JSON.stringify(
        rpc('tools/call', {
          name: 'call_flow_tool',
          arguments: { flow_slug: 'nap', tool_name: 'take_nap', input: { ms: 8_000 }, wait_ms: 15_000 },
        }),
      ),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await until(() => deps().mcpWaits.held().total === 1 && deps().runWorkers.pending().waiters === 1);
    controller.abort();
    await pending;
    // Long before the run wakes (8 s): the abort ended the wait and released its slot, timer and listener.
    await until(() => deps().mcpWaits.held().total === 0, 2_000);
    await until(() => deps().runWorkers.pending().waiters === 0, 2_000);
    // Runs that settled with nobody waiting are kept only for the start/wait race, not for good.
    await until(() => deps().runWorkers.pending().early === 0, 15_000);
  }, 30_000);
});
