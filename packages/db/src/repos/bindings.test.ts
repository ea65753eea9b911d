import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../client.js';
import { createTestConnection, createTestDb, testFlowDraft } from '../testing.js';
import * as repos from './index.js';

// Runs on PGlite by default and on real Postgres when DATABASE_URL is set (.ci/run does both).
let h: DbHandle;

beforeAll(async () => {
  h = await createTestDb();
  for (const id of ['ws-a', 'ws-b']) await repos.createWorkspace(h.db, { id, name: id });
});
afterAll(async () => h?.close());

describe('bindings', () => {
  it('binds slots to connections of the same workspace only, of the right type, and unbinds with null', async () => {
    await createTestConnection(h.db, 'ws-a', 'conn_a_crm');
    await createTestConnection(h.db, 'ws-a', 'conn_a_llm', 'llm-provider');
    await createTestConnection(h.db, 'ws-b', 'conn_b_crm');
    await repos.saveDraft(
      h.db,
      'ws-a',
      testFlowDraft({
        slug: 'bound',
        requires: [
          { slot: 'crm', type: 'http-api' },
          { slot: 'llm', type: 'llm-provider' },
        ],
      }),
    );
    expect(await repos.setFlowBindings(h.db, 'ws-a', 'bound', 'live', { crm: 'conn_a_crm' })).toEqual({
      crm: 'conn_a_crm',
    });

    const refused = async (slots: Record<string, string | null>, message: string) => {
      await expect(repos.setFlowBindings(h.db, 'ws-a', 'bound', 'live', slots)).rejects.toMatchObject({
        code: 'validation_failed',
        issues: [expect.objectContaining({ message })],
      });
    };
    await refused({ crm: 'conn_b_crm' }, 'connection conn_b_crm not found in this workspace');
    await refused({ crm: 'conn_missing' }, 'connection conn_missing not found in this workspace');
    await refused({ crm: 'conn_a_llm' }, 'slot crm needs a http-api connection; conn_a_llm is llm-provider');
    await refused({ mail: 'conn_a_crm' }, 'the flow does not require a slot mail; it requires: crm, llm');
    // one bad entry refuses the whole request
    await expect(
      repos.setFlowBindings(h.db, 'ws-a', 'bound', 'live', { llm: 'conn_a_llm', crm: 'conn_b_crm' }),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    expect(await repos.getFlowBindings(h.db, 'ws-a', 'bound', 'live')).toEqual({ crm: 'conn_a_crm' });

    expect(await repos.setFlowBindings(h.db, 'ws-a', 'bound', 'draft', { llm: 'conn_a_llm' })).toEqual({
      llm: 'conn_a_llm',
    });
    expect(
      await repos.setFlowBindings(h.db, 'ws-a', 'bound', 'live', { llm: 'conn_a_llm', crm: null }),
    ).toEqual({
      llm: 'conn_a_llm',
    });
    expect(await repos.getFlowBindings(h.db, 'ws-a', 'bound', 'draft')).toEqual({ llm: 'conn_a_llm' });
  });
});
