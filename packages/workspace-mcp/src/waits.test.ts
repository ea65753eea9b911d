import { describe, expect, it } from 'vitest';
import { createWaitGate, TooManyWaits, waitKey, withWaitSlot } from './waits.js';

describe('wait gate', () => {
  it('admits exactly N per key and M in all, refusing the next with too_many_waits', () => {
    const gate = createWaitGate({ maxPerKey: 2, maxTotal: 3 });
    const a1 = gate.acquire('a');
    gate.acquire('a');
    expect(() => gate.acquire('a')).toThrowError(
      expect.objectContaining({ code: 'too_many_waits', scope: 'key', limit: 2 }),
    );
    gate.acquire('b');
    expect(() => gate.acquire('c')).toThrowError(
      expect.objectContaining({ code: 'too_many_waits', scope: 'process', limit: 3 }),
    );
    a1();
    // Releasing twice gives back one slot, not two.
    a1();
    expect(gate.held()).toEqual({ total: 2, keys: 2 });
    gate.acquire('c');
    expect(() => gate.acquire('c')).toThrow(TooManyWaits);
  });

  it('forgets a key once its waits ended, however they ended', async () => {
    const gate = createWaitGate({ maxPerKey: 1, maxTotal: 10 });
    const request = {
      principal: { kind: 'service_account' as const, id: 'sa', name: null, keyId: 'k1' },
      waits: gate,
    };
    expect(waitKey(request.principal)).toBe('k1');
    await withWaitSlot(request, async () => expect(gate.held()).toEqual({ total: 1, keys: 1 }));
    await expect(
      withWaitSlot(request, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(gate.held()).toEqual({ total: 0, keys: 0 });
  });
});
