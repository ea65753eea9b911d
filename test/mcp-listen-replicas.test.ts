import { createDb, type DbHandle } from '@flowgate/db';
import { ACCESS_CHANNEL } from '@flowgate/gateway';
import { generateEncryptionKey } from '@flowgate/secrets';
import { ENDED_CHANNEL, EVENTS_CHANNEL } from '@flowgate/worker';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_INFO } from './support/clients.js';
import {
  databaseUrlOf,
  type ServiceAccountKey,
  startTestGateway,
  type TestGateway,
} from './support/gateway.js';
import {
  envelope,
  type ListenMessage,
  modernHeaders,
  NAP_FLOW,
  SUB_META,
  startNap,
  V2,
  v2Client,
} from './support/listen.js';
import { installFlow, waitForRun } from './support/runs.js';
import { bridgeCommand, leakedSecrets, ROOT } from './support/stdio-bridge.js';

/**
 * subscriptions/listen across replicas by NOTIFY: two gateways on one database (on Postgres each with its own pool
 * and LISTEN connection; on PGlite one in-process database), the first running every run, the second running nothing.
 * Both read a stream's runs and access only every hour here (safety poll and recheck), so whatever the second
 * gateway's streams deliver within seconds was woken by a notification: a run ending through the first gateway, a
 * policy changed through it, and never a notification about another workspace's run.
 */

const WS = 'ws-notify-a';
const OTHER = 'ws-notify-b';
const ENCRYPTION_KEY = generateEncryptionKey();
/** Longer than any test here: only a notification can deliver in time. */
const HOUR_SECONDS = '3600';

const SLOW_POLLS = {
  FLOWGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
  FLOWGATE_MCP_LISTEN_SAFETY_POLL_SECONDS: HOUR_SECONDS,
  FLOWGATE_MCP_LISTEN_RECHECK_SECONDS: HOUR_SECONDS,
  FLOWGATE_MCP_LISTEN_MAX_SECONDS: '60',
};

let gw: TestGateway;
let replica: TestGateway;
/** The replica's own pool on Postgres (null on PGlite, where both share the one in-process database). */
let replicaDb: DbHandle | null = null;
let key: ServiceAccountKey;
let otherKey: ServiceAccountKey;

beforeAll(async () => {
  gw = await startTestGateway({ ...SLOW_POLLS, FLOWGATE_WORKER: 'true' });
  await gw.createWorkspace(WS);
  await gw.createWorkspace(OTHER);
  await installFlow(gw, WS, 'nap', NAP_FLOW);
  await installFlow(gw, OTHER, 'nap', NAP_FLOW);
  key = await gw.mintKey(WS, ['workspace.full'], 'listener');
  otherKey = await gw.mintKey(OTHER, ['workspace.full'], 'other');
  const url = databaseUrlOf(gw.db);
  replicaDb = url ? await createDb({ url, maxConnections: 4 }) : null;
  replica = await startTestGateway({ ...SLOW_POLLS, FLOWGATE_WORKER: 'false' }, { db: replicaDb ?? gw.db });
}, 120_000);

afterAll(async () => {
  await replica?.close();
  await replicaDb?.close();
  await gw?.close();
});

/** A raw listen read as it arrives: each JSON-RPC message with the ms since the POST, until the stream ends. */
async function rawListen(
  url: string,
  token: string,
  notifications: Record<string, unknown>,
  options: { declaresTasks?: boolean; id: string },
): Promise<{ at: number; message: ListenMessage }[]> {
  const started = Date.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: modernHeaders(token, 'subscriptions/listen'),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: options.id,
      method: 'subscriptions/listen',
      params: { notifications, _meta: envelope(options.declaresTasks ?? false) },
    }),
  });
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const out: { at: number; message: ListenMessage }[] = [];
  const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const chunk = await reader?.read();
    if (!chunk || chunk.done) break;
    buffer += chunk.value;
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      const data = buffer
        .slice(0, end)
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      buffer = buffer.slice(end + 2);
      if (data) out.push({ at: Date.now() - started, message: JSON.parse(data) as ListenMessage });
      end = buffer.indexOf('\n\n');
    }
  }
  return out;
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('subscriptions/listen across replicas (NOTIFY)', () => {
  it('hears a run end through the other replica at once, as resources/updated and notifications/tasks', async () => {
    expect(replica.running.deps.mcpListens.live).toBe(true);
    expect(replica.running.deps.mcpListens.safetyPollMs).toBe(3_600_000);
    const starter = await v2Client(gw.mcpUrl(WS), key.apiKey);
    const listener = await v2Client(replica.mcpUrl(WS), key.apiKey);
    try {
      const runId = await startNap(starter, 1_500);
      const updates: string[] = [];
      listener.setNotificationHandler('notifications/resources/updated', (n) => {
        updates.push(n.params.uri);
      });
      const sub = await listener.listen({ resourceSubscriptions: [`flowgate://runs/${runId}/result`] });
      expect(sub.honoredFilter).toEqual({ resourceSubscriptions: [`flowgate://runs/${runId}/result`] });
      const ended = await waitForRun(gw, WS, runId);
      expect(ended.status).toBe('completed');
      const heardAfterEnd = Date.now();
      expect(await sub.closed).toBe('graceful');
      // Told within moments of the end (the stream then ends: nothing left to change), not at an hourly poll.
      expect(Date.now() - heardAfterEnd).toBeLessThan(2_000);
      expect(updates).toEqual([`flowgate://runs/${runId}/result`]);
    } finally {
      await starter.close();
      await listener.close();
    }

    // The Tasks extension's push, on a raw stream of the replica for a task created through the first gateway.
    const created = await fetch(gw.mcpUrl(WS), {
      method: 'POST',
      headers: modernHeaders(key.apiKey, 'tools/call', 'call_flow_tool'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'call_flow_tool',
          arguments: { flow_slug: 'nap', tool_name: 'take_nap', input: { ms: 1_500 } },
          _meta: envelope(true),
        },
      }),
    });
    const { taskId } = ((await created.json()) as { result: { taskId: string } }).result;
    const messages = await rawListen(
      replica.mcpUrl(WS),
      key.apiKey,
      { taskIds: [taskId] },
      { declaresTasks: true, id: 'task-listen' },
    );
    expect(messages[0]?.message.method).toBe('notifications/subscriptions/acknowledged');
    const pushes = messages.filter((m) => m.message.method === 'notifications/tasks');
    expect(pushes.at(-1)?.message.params).toMatchObject({ taskId, status: 'completed' });
    // The nap takes 1.5 s; the stream ended well before any poll of the replica would have read the task.
    expect(messages.at(-1)?.message).toMatchObject({
      id: 'task-listen',
      result: { _meta: { [SUB_META]: 'task-listen' } },
    });
    expect(messages.at(-1)?.at).toBeLessThan(10_000);
  }, 40_000);

  it('tells a changed tool list on the replica when the policy changes through the other one', async () => {
    const listener = await v2Client(replica.mcpUrl(WS), key.apiKey);
    try {
      let changed = 0;
      listener.setNotificationHandler('notifications/tools/list_changed', () => {
        changed++;
      });
      const sub = await listener.listen({ toolsListChanged: true });
      expect(sub.honoredFilter).toEqual({ toolsListChanged: true });
      // The replica has this workspace's policy cached now; the notification also makes it read the policy again.
      const before = (await listener.listTools()).tools.map((t) => t.name);
      expect(before).toContain('send_feedback');
      await gw.setPolicy(WS, { disabledTools: ['send_feedback'] });
      await until(() => changed === 1, 3_000);
      const after = (await listener.listTools()).tools.map((t) => t.name);
      expect(after).toEqual(before.filter((name) => name !== 'send_feedback'));
      // Another workspace's policy is not this stream's business.
      await gw.setPolicy(OTHER, { disabledTools: ['send_feedback'] });
      await gw.setPolicy(WS, { disabledTools: [] });
      await until(() => changed === 2, 3_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(changed).toBe(2);
      await sub.close();
    } finally {
      await listener.close();
      await gw.setPolicy(OTHER, { disabledTools: [] });
    }
  }, 30_000);

  it('delivers nothing for another workspace’s run, even a notification naming it, and its own run’s end at once', async () => {
    const starter = await v2Client(gw.mcpUrl(WS), key.apiKey);
    const other = await v2Client(gw.mcpUrl(OTHER), otherKey.apiKey);
    try {
      // A run asleep for a minute: nothing about it changes until it is cancelled.
      const mine = await startNap(starter, 60_000);
      await waitForRun(gw, WS, mine, (status) => status === 'waiting');
      const foreign = await startNap(other, 60_000);
      await waitForRun(gw, OTHER, foreign, (status) => status === 'waiting');
      const uri = `flowgate://runs/${mine}`;
      const listened = Date.now();
      const stream = rawListen(
        replica.mcpUrl(WS),
        key.apiKey,
        { resourceSubscriptions: [uri, `flowgate://runs/${foreign}`] },
        { id: 'tenancy' },
      );
      await new Promise((r) => setTimeout(r, 500));
      // The other workspace's run ends through the first gateway, and notifications name it on every channel.
      const cancelled = await gw.admin('POST', `/api/workspaces/${OTHER}/runs/${foreign}/cancel`);
      expect(cancelled.status).toBeLessThan(300);
      await gw.db.notify(ENDED_CHANNEL, foreign);
      await gw.db.notify(EVENTS_CHANNEL, foreign);
      await gw.db.notify(ACCESS_CHANNEL, JSON.stringify({ k: 'workspace', w: OTHER }));
      // A payload that is not one of ours is dropped.
      await gw.db.notify(ACCESS_CHANNEL, '{"k":"workspace","w":"../../etc"}');
      await new Promise((r) => setTimeout(r, 1_500));
      const quietFor = Date.now() - listened;
      const ended = await gw.admin('POST', `/api/workspaces/${WS}/runs/${mine}/cancel`);
      expect(ended.status).toBeLessThan(300);
      const messages = await stream;
      expect(messages.map((m) => m.message.method ?? 'result')).toEqual([
        'notifications/subscriptions/acknowledged',
        'notifications/resources/updated',
        'result',
      ]);
      expect(messages[0]?.message.params?.notifications).toEqual({ resourceSubscriptions: [uri] });
      expect(messages[1]?.message.params?.uri).toBe(uri);
      // Nothing during the quiet window; its own run's cancel is told within moments, by the cancel's notification.
      expect(messages[1]?.at).toBeGreaterThanOrEqual(quietFor);
      expect((messages[1]?.at ?? Number.POSITIVE_INFINITY) - quietFor).toBeLessThan(2_000);
    } finally {
      await starter.close();
      await other.close();
    }
  }, 40_000);

  it('streams through `flowgate mcp stdio`: the SDK client over stdio hears the run end as it happens', async () => {
    const { command, args } = bridgeCommand(replica.url, ['--workspace-id', WS, '--token-env-var', 'FG_KEY']);
    const transport = new StdioClientTransport({
      command,
      args,
      cwd: ROOT,
      env: { ...getDefaultEnvironment(), FG_KEY: key.apiKey },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    const listener = new Client(CLIENT_INFO, { capabilities: {}, versionNegotiation: { mode: { pin: V2 } } });
    await listener.connect(transport);
    const starter = await v2Client(gw.mcpUrl(WS), key.apiKey);
    try {
      const runId = await startNap(starter, 60_000);
      await waitForRun(gw, WS, runId, (status) => status === 'waiting');
      const uri = `flowgate://runs/${runId}`;
      const updates: Array<{ uri: string; at: number }> = [];
      listener.setNotificationHandler('notifications/resources/updated', (n) => {
        updates.push({ uri: n.params.uri, at: Date.now() });
      });
      const sub = await listener.listen({ resourceSubscriptions: [uri] });
      // The acknowledgement came through while the stream stays open.
      expect(sub.honoredFilter).toEqual({ resourceSubscriptions: [uri] });
      await new Promise((r) => setTimeout(r, 500));
      expect(updates).toEqual([]);
      const cancelledAt = Date.now();
      const cancelled = await gw.admin('POST', `/api/workspaces/${WS}/runs/${runId}/cancel`);
      expect(cancelled.status).toBeLessThan(300);
      // Heard while the stream is open, not when it ends.
      await until(() => updates.length === 1, 3_000);
      expect(updates[0]?.uri).toBe(uri);
      expect((updates[0]?.at ?? 0) - cancelledAt).toBeLessThan(2_000);
      expect(await sub.closed).toBe('graceful');
      expect(updates).toHaveLength(1);
    } finally {
      await starter.close();
      await listener.close();
    }
    expect(leakedSecrets([key.apiKey, otherKey.apiKey], stderr)).toEqual([]);
  }, 40_000);
});
