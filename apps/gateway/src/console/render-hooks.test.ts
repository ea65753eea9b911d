import { executionAsyncId } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, TEST_ADMIN_TOKEN } from '../testing.js';
import { Browser } from './test-browser.js';

/**
 * True while Node's promise hooks are on: each await then resumes under an async id of its own. On Node 20 and 22 an
 * enabled AsyncLocalStorage turns them on for every promise of the process; Node 24 propagates without them.
 */
async function promiseHooksOn(): Promise<boolean> {
  await null;
  const before = executionAsyncId();
  await null;
  return executionAsyncId() !== before;
}

describe('console pages and the async-context tax', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
    await h.createWorkspace('ws-a');
  });
  afterAll(async () => h?.close());

  it('leave no promise hooks on once rendered (hono/jsx disables its storage after the last render in flight)', async () => {
    // Without this the check below proves nothing: something else in the process already keeps the hooks on.
    expect(await promiseHooksOn()).toBe(false);
    const operator = new Browser(h);
    await operator.signInWithToken(TEST_ADMIN_TOKEN);
    // Pages with charts (an <svg> is a context provider), rendered concurrently.
    const pages = await Promise.all(
      ['/console/workspaces', '/console/w/ws-a/usage', '/console/w/ws-a/runs'].map((path) =>
        operator.page(path),
      ),
    );
    expect(pages.map((p) => p.res.status)).toEqual([200, 200, 200]);
    expect(pages[1]?.html).toContain('<svg');
    expect(await promiseHooksOn()).toBe(false);
  });
});
