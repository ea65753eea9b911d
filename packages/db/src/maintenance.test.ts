import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from './client.js';
import { BACKFILLS, runBackfills } from './maintenance.js';
import * as repos from './repos/index.js';
import { backfills, flowVersions } from './schema.js';
import { createTestDb, testFlowDraft } from './testing.js';

// Runs on PGlite by default and on real Postgres when DATABASE_URL is set (.ci/run does both).
let h: DbHandle;
const statements: string[] = [];

beforeAll(async () => {
  h = await createTestDb({ onStatement: (text) => statements.push(text) });
  await repos.createWorkspace(h.db, { id: 'ws-m', name: 'ws-m' });
});
afterAll(async () => h?.close());

/** Releases a flow, then empties the backfilled columns of its version: the state an older version left behind. */
async function releasedFlowOfAnOlderVersion(slug: string): Promise<string> {
  await repos.saveDraft(h.db, 'ws-m', testFlowDraft({ slug, tools: [{ name: `${slug}_tool` }] }));
  await repos.releaseFlow(h.db, 'ws-m', slug);
  const flow = await repos.getFlow(h.db, 'ws-m', slug);
  const flowId = flow?.id ?? '';
  await h.db
    .update(flowVersions)
    .set({ summary: null, metadataSha256: null })
    .where(and(eq(flowVersions.workspaceId, 'ws-m'), eq(flowVersions.flowId, flowId)));
  return flowId;
}

async function versionColumns(flowId: string) {
  const [row] = await h.db
    .select({ summary: flowVersions.summary, metadataSha256: flowVersions.metadataSha256 })
    .from(flowVersions)
    .where(and(eq(flowVersions.workspaceId, 'ws-m'), eq(flowVersions.flowId, flowId)));
  return row;
}

describe('backfills', () => {
  it('are recorded by the first migrate, and a second migrate does not run them again', async () => {
    const recorded = await h.db.select({ name: backfills.name }).from(backfills);
    expect(recorded.map((r) => r.name).sort()).toEqual(BACKFILLS.map((b) => b.name).sort());

    const flowId = await releasedFlowOfAnOlderVersion('after-marker');
    statements.length = 0;
    await h.migrate();
    expect(statements.some((s) => s.includes('"backfills"'))).toBe(true);
    expect(statements.filter((s) => s.includes('flow_versions'))).toEqual([]);
    expect(await versionColumns(flowId)).toEqual({ summary: null, metadataSha256: null });

    // `flowgate db backfill` runs them regardless, for rows an older replica wrote after the first run.
    const outcomes = await runBackfills(h.db, { force: true });
    expect(outcomes.every((o) => o.ran)).toBe(true);
    expect(outcomes.find((o) => o.name === 'flow_versions.summary')?.rowsFilled).toBe(1);
    const filled = await versionColumns(flowId);
    expect(filled?.summary?.tools.map((t) => t.toolName)).toEqual(['after-marker_tool']);
    expect(filled?.metadataSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('run on migrate for a database that has not had them, without anyone running a command', async () => {
    const flowId = await releasedFlowOfAnOlderVersion('before-marker');
    await h.db.delete(backfills);
    await h.migrate();
    const filled = await versionColumns(flowId);
    expect(filled?.summary?.tools.map((t) => t.toolName)).toEqual(['before-marker_tool']);
    expect(filled?.metadataSha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await runBackfills(h.db)).map((o) => o.ran)).toEqual([false, false]);
  });
});
