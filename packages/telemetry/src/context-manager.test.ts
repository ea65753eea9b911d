import { createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { ScopedContextManager } from './context-manager.js';

const KEY = createContextKey('test.value');
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

function manager(): ScopedContextManager {
  return new ScopedContextManager().enable();
}

describe('ScopedContextManager', () => {
  it('keeps a scope active across the awaits inside it, and the root once it ends', async () => {
    const m = manager();
    const ctx = ROOT_CONTEXT.setValue(KEY, 'a');
    const seen: unknown[] = [];
    const result = await m.with(ctx, async () => {
      seen.push(m.active().getValue(KEY));
      await tick();
      seen.push(m.active().getValue(KEY));
      await Promise.all([tick(), tick()]);
      seen.push(m.active().getValue(KEY));
      return 42;
    });
    expect(result).toBe(42);
    expect(seen).toEqual(['a', 'a', 'a']);
    expect(m.openScopes).toBe(0);
    expect(m.active()).toBe(ROOT_CONTEXT);
  });

  it('nests scopes and keeps concurrent ones apart', async () => {
    const m = manager();
    const a = ROOT_CONTEXT.setValue(KEY, 'a');
    const seen: string[] = [];
    const task = (name: string, ms: number) =>
      m.with(a.setValue(KEY, name), async () => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        seen.push(`${name}:${String(m.active().getValue(KEY))}`);
        await m.with(m.active().setValue(KEY, `${name}.inner`), async () => {
          await tick();
          seen.push(String(m.active().getValue(KEY)));
        });
        seen.push(`${name}:${String(m.active().getValue(KEY))}`);
      });
    await Promise.all([task('x', 5), task('y', 1)]);
    expect(seen.sort()).toEqual(['x.inner', 'x:x', 'x:x', 'y.inner', 'y:y', 'y:y']);
    expect(m.openScopes).toBe(0);
  });

  it('closes a scope whose function throws or rejects', async () => {
    const m = manager();
    const ctx = ROOT_CONTEXT.setValue(KEY, 'a');
    expect(() =>
      m.with(ctx, () => {
        throw new Error('sync');
      }),
    ).toThrow('sync');
    expect(m.openScopes).toBe(0);
    await expect(
      m.with(ctx, async () => {
        await tick();
        throw new Error('async');
      }),
    ).rejects.toThrow('async');
    expect(m.openScopes).toBe(0);
    expect(m.with(ctx, () => m.active().getValue(KEY))).toBe('a');
    expect(m.openScopes).toBe(0);
  });

  it('does not call `then` on a result that is not a native promise', async () => {
    const m = manager();
    let thens = 0;
    const thenable = {
      // biome-ignore lint/suspicious/noThenProperty: a query builder is such a thenable
      then(resolve: (value: string) => void) {
        thens++;
        resolve('ran');
      },
    };
    const got = m.with(ROOT_CONTEXT.setValue(KEY, 'a'), () => thenable);
    expect(thens).toBe(0);
    expect(await got).toBe('ran');
    expect(thens).toBe(1);
  });

  it('disables its storage when no scope is open: work a scope left running sees the root', async () => {
    const m = manager();
    let late: unknown = 'unset';
    let resolveLate: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      resolveLate = resolve;
    });
    await m.with(ROOT_CONTEXT.setValue(KEY, 'a'), async () => {
      setTimeout(() => {
        late = m.active().getValue(KEY);
        resolveLate();
      }, 5);
    });
    expect(m.openScopes).toBe(0);
    await done;
    // The SDK's own manager would hand it the ended scope's context ('a').
    expect(late).toBeUndefined();
  });

  it('runs the function as it is when the context is already the active one, or when disabled', () => {
    const m = manager();
    expect(m.with(ROOT_CONTEXT, () => m.openScopes)).toBe(0);
    m.disable();
    expect(m.with(ROOT_CONTEXT.setValue(KEY, 'a'), () => m.active().getValue(KEY))).toBeUndefined();
  });

  it('binds a function to a context', async () => {
    const m = manager();
    const bound = m.bind(ROOT_CONTEXT.setValue(KEY, 'b'), async (n: number) => {
      await tick();
      return `${String(m.active().getValue(KEY))}${n}`;
    });
    expect(await bound(1)).toBe('b1');
    expect(m.openScopes).toBe(0);
  });
});
