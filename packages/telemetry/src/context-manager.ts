import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api';

/**
 * The active context through AsyncLocalStorage, enabled only while a scope (`with`) is open anywhere in the process.
 *
 * On Node 20 and 22 an enabled AsyncLocalStorage installs promise hooks that tax every promise of every request
 * (measured: 35–105 µs of CPU on an authenticated `tools/list` of about 340, docs/performance.md), whether or not
 * the request opens a span. Requests that carry their span explicitly (the MCP endpoints, telemetry.ts in the
 * gateway) open no scope, and when no scope is open the storage is disabled again, so the hooks come off. What a
 * scope starts and leaves running after it ends (a timer, an unawaited promise) sees the root context once the
 * storage is disabled, where the SDK's own manager would keep the ended scope's.
 */
export class ScopedContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  private open = 0;
  private enabled = false;

  active(): Context {
    return (this.open > 0 && this.storage.getStore()) || ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    if (!this.enabled || context === this.active()) return fn.call(thisArg, ...args);
    this.open++;
    let result: ReturnType<F>;
    try {
      result = this.storage.run(context, () => fn.call(thisArg, ...args));
    } catch (error) {
      this.close();
      throw error;
    }
    // Only a native promise: a thenable may start work when `then` is called (a query builder runs its statement).
    if (result instanceof Promise) {
      const close = () => this.close();
      result.then(close, close);
    } else this.close();
    return result;
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as (...args: unknown[]) => unknown;
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(context, fn, this, ...args);
    } as T;
  }

  enable(): this {
    this.enabled = true;
    return this;
  }

  disable(): this {
    this.enabled = false;
    this.open = 0;
    this.storage.disable();
    return this;
  }

  /** Scopes open now (tests). */
  get openScopes(): number {
    return this.open;
  }

  private close(): void {
    this.open--;
    if (this.open === 0) this.storage.disable();
  }
}
