import { isAppError } from '@flowgate/core';
import { createDb, type DbHandle, repos } from '@flowgate/db';
import { createTestDb } from '@flowgate/db/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedFlow, seedWorkspace, testWorkspaceDeps } from '../testing.js';
import { openWorkspace } from '../workspace.js';

/**
 * The live-runs cap holds under concurrent starts, on both drivers: the count and the insert share one transaction
 * under a per-workspace advisory lock, so 200 starts at once against a cap of 20 leave exactly 20 live runs and 180
 * clear refusals. Before, the count was a separate statement and the cap was overrun.
 */

const CAP = 20;
const STARTS = 200;
const ECHO = `{:slug :echo
 :invocations {:default {:inputs [{:name :n :type :integer :required true}]}}
 :interfaces {:mcp [{:tool-name "echo" :invocation :default}]}
 :flow (flow/step :function :echo {:code (fn [x] x) :input (flow/input)})}`;

function capSuite(name: string, open: (onStatement: (text: string) => void) => Promise<DbHandle>) {
  describe(name, () => {
    let handle: DbHandle;
    /** The capped starts' statements, in the order they were sent: a lock, then an insert (or a refusal). */
    const sent: string[] = [];
    beforeAll(async () => {
      handle = await open((text) => {
        if (text.includes('pg_advisory_xact_lock')) sent.push('lock');
        else if (/^insert into "runs"/.test(text)) sent.push('insert');
      });
      for (const ws of ['ws-cap', 'ws-cap-other', 'ws-cap-order']) {
        await seedWorkspace(handle.db, ws, ws);
        await seedFlow(handle.db, ws, ECHO, { release: 'r1' });
      }
    }, 60_000);
    afterAll(async () => {
      await handle?.close();
    });

    const workspace = (id: string) =>
      openWorkspace(
        testWorkspaceDeps(handle.db, { runs: { queued() {}, cancelRequested() {}, maxLiveRuns: CAP } }),
        {
          workspaceId: id,
          actor: { kind: 'service_account', id: 'sa_cap' },
        },
      );
    const start = (id: string, n: number, idempotencyKey: string | null = null) =>
      workspace(id).runs.start({
        slug: 'echo',
        toolName: 'echo',
        invocation: null,
        installationId: null,
        target: null,
        input: { n },
        idempotencyKey,
        includeInstalled: false,
        allowDraft: false,
      });

    it('concurrent starts of one workspace wait in this process, not each on a pooled connection', async () => {
      sent.length = 0;
      const n = 12;
      const runs = await Promise.all(Array.from({ length: n }, (_, i) => start('ws-cap-order', i)));
      expect(runs.every((r) => r.created)).toBe(true);
      // One start at a time reaches the database: never a second lock request before the first start's insert.
      expect(sent).toEqual(Array.from({ length: n }, () => ['lock', 'insert']).flat());
    });

    it(`${STARTS} concurrent starts against a cap of ${CAP} leave exactly ${CAP} live runs`, async () => {
      const outcomes = await Promise.allSettled(
        Array.from({ length: STARTS }, (_, n) => start('ws-cap', n, `k${n}`)),
      );
      const started = outcomes.filter((o) => o.status === 'fulfilled');
      const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
      expect(started).toHaveLength(CAP);
      expect(refused).toHaveLength(STARTS - CAP);
      for (const error of refused) {
        expect(isAppError(error)).toBe(true);
        expect(error).toMatchObject({
          code: 'conflict',
          message: `this workspace has ${CAP} runs queued, running or waiting (its cap); wait for some to finish`,
        });
      }
      expect(await repos.countLiveRuns(handle.db, 'ws-cap')).toBe(CAP);
      // Another workspace's cap is its own.
      await expect(start('ws-cap-other', 1)).resolves.toMatchObject({ created: true });
    });

    it('at the cap, a retry of an earlier start still answers its run; a new start is refused', async () => {
      const [admitted] = await repos.listRuns(handle.db, 'ws-cap', { limit: 1 });
      if (!admitted?.idempotencyKey) throw new Error('no admitted keyed run');
      const n = Number(admitted.idempotencyKey.slice(1));
      await expect(start('ws-cap', n, admitted.idempotencyKey)).resolves.toMatchObject({
        created: false,
        run: { id: admitted.id },
      });
      await expect(start('ws-cap', 999, 'new-key')).rejects.toMatchObject({ code: 'conflict' });
      expect(await repos.countLiveRuns(handle.db, 'ws-cap')).toBe(CAP);
    });

    it('a run that ends frees its place under the cap', async () => {
      const [live] = await repos.listRuns(handle.db, 'ws-cap', { limit: 1, status: 'queued' });
      if (!live) throw new Error('no queued run');
      await workspace('ws-cap').runs.cancel(live.id);
      await expect(start('ws-cap', 1000)).resolves.toMatchObject({ created: true });
      await expect(start('ws-cap', 1001)).rejects.toMatchObject({ code: 'conflict' });
    });
  });
}

capSuite('live-runs cap on PGlite', async (onStatement) => {
  const handle = await createDb({ onStatement });
  await handle.migrate();
  return handle;
});

describe.skipIf(!process.env.DATABASE_URL)('on Postgres (DATABASE_URL)', () => {
  capSuite('live-runs cap on Postgres', (onStatement) => createTestDb({ onStatement }));
});
