import { quotaPeriod } from '@flowgate/core';
import { type DbHandle, repos, schema } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { isRunError } from '@flowgate/run-engine';
import { seedWorkspace } from '@flowgate/workspace/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceLlmQuota } from './ports.js';

/**
 * The worker's `llmTokensPerMonth` port over the workspace's counter: a step may start while the month's tokens are
 * under the limit, each call adds what it used, and a new UTC month starts from zero.
 */
describe('workspaceLlmQuota', () => {
  let handle: DbHandle;
  let clock = new Date('2026-11-30T23:00:00.000Z');
  beforeAll(async () => {
    handle = await createTestDb();
    await seedWorkspace(handle.db, 'ws-tok', 'tokens');
    await seedWorkspace(handle.db, 'ws-tok-other', 'other');
  });
  afterAll(async () => {
    await handle?.close();
  });
  const refusal = async (p: Promise<void>) => {
    const error = await p.then(
      () => null,
      (e: unknown) => e,
    );
    if (!isRunError(error)) throw new Error(`expected a run error, got ${String(error)}`);
    return error;
  };

  it('admits a step while under the limit, counts its calls, refuses at the limit and rolls over in December', async () => {
    const quota = workspaceLlmQuota(handle.db, 'ws-tok', () => clock);
    // No quota: nothing is counted.
    await quota.check();
    await quota.add(500);
    expect(
      await repos.quotaUsed(
        handle.db,
        'ws-tok',
        'llmTokensPerMonth',
        quotaPeriod('llmTokensPerMonth', clock),
      ),
    ).toBe(0);

    await repos.putPolicy(handle.db, 'ws-tok', { quotas: { llmTokensPerMonth: 100 } });
    await quota.check();
    await quota.add(60);
    await quota.check();
    await quota.add(60);
    const error = await refusal(quota.check());
    expect(error.code).toBe('quota_exceeded');
    expect(error.message).toBe(
      'This workspace used its quota of 100 LLM tokens per month (llmTokensPerMonth); it resets at 2026-12-01T00:00:00.000Z',
    );
    // Another workspace's month is its own.
    await repos.putPolicy(handle.db, 'ws-tok-other', { quotas: { llmTokensPerMonth: 100 } });
    await expect(workspaceLlmQuota(handle.db, 'ws-tok-other', () => clock).check()).resolves.toBeUndefined();

    clock = new Date('2026-12-01T00:00:00.000Z');
    await expect(quota.check()).resolves.toBeUndefined();
    await quota.add(7);
    const rows = await handle.db.select().from(schema.workspaceQuotaCounters);
    expect(
      rows
        .map((r) => [r.workspaceId, r.periodStart.toISOString(), r.used])
        .sort((a, b) => String(a).localeCompare(String(b))),
    ).toEqual([
      ['ws-tok', '2026-11-01T00:00:00.000Z', 120],
      ['ws-tok', '2026-12-01T00:00:00.000Z', 7],
    ]);
  });
});
