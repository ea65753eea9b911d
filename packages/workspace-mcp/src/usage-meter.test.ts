import { seedWorkspace } from '@flowgate/workspace/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import type { McpUsageEntry } from './context.js';
import { handleMcpMessage } from './dispatch.js';
import { rpc, useTestDb } from './testing.js';

/** The dispatcher's `meter` hook: one entry per JSON-RPC request, with the verdict the usage meter counts. */

const env = useTestDb();
beforeAll(async () => {
  await seedWorkspace(env.db, 'ws-acme', 'Acme');
});

function metered(over: Parameters<typeof env.ctx>[0] = {}) {
  const entries: McpUsageEntry[] = [];
  const ctx = env.ctx({
    clientInfo: { name: 'ua-client', version: null },
    ...over,
    meter: (e) => entries.push(e),
  });
  const summary = () => entries.map((e) => [e.method, e.tool, e.outcome, e.clientName]);
  return { ctx, entries, summary };
}

describe('the meter hook', () => {
  it('reports ok calls, tool errors and blocked calls with the tool, and list methods without one', async () => {
    const m = metered({ capabilities: new Set(['feedback.send']) });
    await rpc(m.ctx, 'tools/list');
    await rpc(m.ctx, 'tools/call', { name: 'get_workspace_context', arguments: {} });
    await rpc(m.ctx, 'tools/call', { name: 'list_connections', arguments: {} });
    await rpc(m.ctx, 'tools/call', {
      name: 'send_feedback',
      arguments: { summary: 's', details: 'd', area: 'x' },
    });
    expect(m.summary()).toEqual([
      ['tools/list', null, 'ok', 'ua-client'],
      ['tools/call', 'get_workspace_context', 'ok', 'ua-client'],
      ['tools/call', 'list_connections', 'blocked', 'ua-client'],
      ['tools/call', 'send_feedback', 'error', 'ua-client'],
    ]);
    for (const e of m.entries) expect(e.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('names no tool a caller made up, and no method it made up', async () => {
    const m = metered();
    await rpc(m.ctx, 'tools/call', { name: 'made_up_tool_123', arguments: {} });
    await rpc(m.ctx, 'made/up');
    await rpc(m.ctx, 'tools/call', {});
    expect(m.summary()).toEqual([
      ['tools/call', null, 'error', 'ua-client'],
      ['(unknown)', null, 'error', 'ua-client'],
      ['tools/call', null, 'error', 'ua-client'],
    ]);
  });

  it('takes the client named at initialize for the initialize itself', async () => {
    const m = metered({ protocolVersionHeader: null });
    await rpc(m.ctx, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'named-client', version: '1' },
    });
    expect(m.summary()).toEqual([['initialize', null, 'ok', 'named-client']]);
  });

  it('counts each request of a batch and an invalid message, but no notification', async () => {
    // Batches exist in 2025-03-26 only.
    const m = metered({ protocolVersionHeader: '2025-03-26' });
    await handleMcpMessage(
      [
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { id: 3 },
      ],
      m.ctx,
    );
    expect(m.summary()).toEqual([
      ['ping', null, 'ok', 'ua-client'],
      ['tools/list', null, 'ok', 'ua-client'],
      ['(invalid)', null, 'error', 'ua-client'],
    ]);
  });

  it('a meter that throws never fails the request', async () => {
    const ctx = env.ctx({
      meter: () => {
        throw new Error('meter broke');
      },
    });
    const { body } = await rpc(ctx, 'tools/call', { name: 'get_workspace_context', arguments: {} });
    expect(body.result.isError).toBeFalsy();
    expect(ctx.errors.map((e) => (e as Error).message)).toEqual(['meter broke']);
  });
});
