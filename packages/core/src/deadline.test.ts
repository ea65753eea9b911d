import { describe, expect, it } from 'vitest';
import { deadlineSignal } from './deadline.js';

describe('deadline', () => {
  it('aborts with a TimeoutError after its time', async () => {
    const d = deadlineSignal(undefined, 20);
    await new Promise((r) => setTimeout(r, 60));
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('aborts with the parent, with the parent reason', () => {
    const parent = new AbortController();
    const d = deadlineSignal(parent.signal, 10_000);
    parent.abort(new Error('stopped'));
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as Error).message).toBe('stopped');
    d.clear();
  });

  it('starts aborted under an aborted parent', () => {
    const parent = new AbortController();
    parent.abort('gone');
    expect(deadlineSignal(parent.signal, 10_000).signal.reason).toBe('gone');
  });

  it('never aborts once cleared', async () => {
    const parent = new AbortController();
    const d = deadlineSignal(parent.signal, 20);
    d.clear();
    parent.abort();
    await new Promise((r) => setTimeout(r, 60));
    expect(d.signal.aborted).toBe(false);
  });
});
