import type { DbHandle } from '@flowgate/db';
import { ENDED_CHANNEL, EVENTS_CHANNEL } from '@flowgate/worker';
import { createListenHub, type ListenChange } from '@flowgate/workspace-mcp';
import { describe, expect, it } from 'vitest';
import { ACCESS_CHANNEL, createChangeFeed } from './change-feed.js';

/** A database that delivers NOTIFY in process (or refuses LISTEN, as a per-request one does). */
function fakeDb(listens: boolean) {
  const handlers = new Map<string, Array<(payload: string) => void>>();
  const sent: Array<[string, string]> = [];
  const db = {
    listen: async (channel: string, on: (payload: string) => void) => {
      if (!listens) throw new Error('no LISTEN on a per-request database');
      handlers.set(channel, [...(handlers.get(channel) ?? []), on]);
      return async () => {
        handlers.delete(channel);
      };
    },
    notify: async (channel: string, payload: string) => {
      sent.push([channel, payload]);
      for (const on of handlers.get(channel) ?? []) on(payload);
    },
  } as unknown as DbHandle;
  return {
    db,
    sent,
    deliver: (channel: string, payload: string) => {
      for (const on of handlers.get(channel) ?? []) on(payload);
    },
  };
}

function setup(listens: boolean) {
  const fake = fakeDb(listens);
  const hub = createListenHub();
  const woke: ListenChange[] = [];
  hub.subscribe({ workspaceId: 'ws-a', wake: (c) => c !== 'sweep' && woke.push(c) });
  const invalidated: string[] = [];
  const warned: string[] = [];
  const feed = createChangeFeed({
    db: fake.db,
    hub,
    log: { warn: (_fields, message) => warned.push(message) },
    caches: {
      serviceAccountChanged: (id) => invalidated.push(`account ${id}`),
      keyRevoked: (id) => invalidated.push(`key ${id}`),
      workspaceChanged: (id) => invalidated.push(`workspace ${id}`),
    },
  });
  return { ...fake, hub, woke, invalidated, warned, feed };
}

describe('createChangeFeed', () => {
  it('publishes ids only and hears every replica: caches forget, the workspace streams wake, runs wake by id', async () => {
    const t = setup(true);
    await t.feed.listen();
    expect(t.hub.live).toBe(true);
    t.feed.changes.keyRevoked('key_1', 'ws-a');
    await new Promise((r) => setTimeout(r, 0));
    expect(t.sent).toEqual([[ACCESS_CHANNEL, '{"k":"key","w":"ws-a","id":"key_1"}']]);
    // Applied here at once, and again by the echo (which also wakes the stream).
    expect(t.invalidated).toEqual(['key key_1', 'key key_1']);
    expect(t.woke).toEqual([{ kind: 'access', workspaceId: 'ws-a' }]);
    // Another replica's change, and runs named by any worker.
    t.deliver(ACCESS_CHANNEL, '{"k":"workspace","w":"ws-a"}');
    t.deliver(ACCESS_CHANNEL, '{"k":"flows","w":"ws-b"}');
    t.deliver(ENDED_CHANNEL, 'run_abc');
    t.deliver(EVENTS_CHANNEL, 'run_def');
    // Not ours: dropped without a read or a wake.
    for (const bad of [
      'not json',
      '{"k":"key","w":"ws-a"}',
      '{"k":"workspace","w":"a b"}',
      '{"k":"drop","w":"ws-a"}',
    ])
      t.deliver(ACCESS_CHANNEL, bad);
    t.deliver(ENDED_CHANNEL, 'x'.repeat(300));
    expect(t.invalidated.slice(2)).toEqual(['workspace ws-a']);
    expect(t.woke.slice(1)).toEqual([
      { kind: 'access', workspaceId: 'ws-a' },
      { kind: 'run', runId: 'run_abc' },
      { kind: 'run', runId: 'run_def' },
    ]);
    await t.feed.stop();
    expect(t.hub.live).toBe(false);
  });

  it('without LISTEN stays on the short poll, wakes its own streams directly and still tells other replicas', async () => {
    const t = setup(false);
    await t.feed.listen();
    expect(t.hub.live).toBe(false);
    expect(t.warned).toEqual(['no LISTEN for listen streams: they read every poll interval']);
    t.feed.changes.flowsChanged?.('ws-a');
    await new Promise((r) => setTimeout(r, 0));
    expect(t.sent).toEqual([[ACCESS_CHANNEL, '{"k":"flows","w":"ws-a"}']]);
    expect(t.woke).toEqual([{ kind: 'access', workspaceId: 'ws-a' }]);
    expect(t.invalidated).toEqual([]);
  });
});
