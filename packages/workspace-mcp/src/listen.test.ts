import { describe, expect, it } from 'vitest';
import {
  createListenHub,
  DEFAULT_LISTEN_POLL_MS,
  DEFAULT_LISTEN_SAFETY_POLL_MS,
  type ListenChange,
} from './listen.js';

/** The hub routes notifications (ids only) to the open streams they may concern; each stream reads for itself. */
describe('createListenHub', () => {
  it('starts without notifications (short poll) and routes a workspace change to that workspace only', () => {
    const hub = createListenHub({ safetyPollMs: 7_000 });
    expect([hub.live, hub.pollMs, hub.safetyPollMs]).toEqual([false, DEFAULT_LISTEN_POLL_MS, 7_000]);
    expect(createListenHub().safetyPollMs).toBe(DEFAULT_LISTEN_SAFETY_POLL_MS);
    const a: Array<ListenChange | 'sweep'> = [];
    const b: Array<ListenChange | 'sweep'> = [];
    const offA = hub.subscribe({ workspaceId: 'ws-a', wake: (c) => a.push(c) });
    hub.subscribe({ workspaceId: 'ws-b', wake: (c) => b.push(c) });
    expect(hub.subscribers()).toBe(2);
    hub.wake({ kind: 'access', workspaceId: 'ws-a' });
    // A run id is offered to every stream: only one that watches the run (in its own workspace) reads it.
    hub.wake({ kind: 'run', runId: 'run_1' });
    expect(a).toEqual([
      { kind: 'access', workspaceId: 'ws-a' },
      { kind: 'run', runId: 'run_1' },
    ]);
    expect(b).toEqual([{ kind: 'run', runId: 'run_1' }]);
    offA();
    hub.wake({ kind: 'access', workspaceId: 'ws-a' });
    expect(a).toHaveLength(2);
    expect(hub.subscribers()).toBe(1);
  });

  it('sweeps every stream when notifications stop, so none sleeps through a safety interval', () => {
    const hub = createListenHub();
    const seen: Array<ListenChange | 'sweep'> = [];
    hub.subscribe({ workspaceId: 'ws-a', wake: (c) => seen.push(c) });
    hub.setLive(true);
    expect(hub.live).toBe(true);
    expect(seen).toEqual([]);
    hub.setLive(false);
    expect([hub.live, seen]).toEqual([false, ['sweep']]);
  });
});
